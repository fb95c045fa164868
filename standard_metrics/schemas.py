"""JSON schemas of the judge's structured outputs, and a validator for them.

Per-item verdicts are objects keyed c1…cN / s1…sN / g1…gN rather than arrays: every key is `required`, so the
schema itself forces exactly one verdict per context or statement — also under OpenAI strict mode, which does
not accept minItems/maxItems. `reason` comes before each verdict so the judge explains before it commits.
"""
from __future__ import annotations

from typing import Any

STRING: dict = {"type": "string"}
BOOLEAN: dict = {"type": "boolean"}


def obj(properties: dict[str, dict]) -> dict:
    """A strict object: every property required, nothing else allowed."""
    return {"type": "object", "properties": properties, "required": list(properties),
            "additionalProperties": False}


def array_of(items: dict) -> dict:
    return {"type": "array", "items": items}


def keyed(prefix: str, count: int, item: dict) -> dict:
    return obj({f"{prefix}{i}": item for i in range(1, count + 1)})


def verdict_item(*flags: str) -> dict:
    return obj({"reason": STRING, **{flag: BOOLEAN for flag in flags}})


def validate(data: Any, schema: dict, path: str = "$") -> tuple[Any, list[str]]:
    """Check `data` against the subset of JSON Schema used here; return (normalised data, problems).

    Leniency, for judges run without response_format: 0/1 and "true"/"false" are accepted as booleans, and
    keys the schema does not know are dropped. Everything else that does not fit is a problem.
    """
    kind = schema.get("type")
    if kind == "object":
        if not isinstance(data, dict):
            return None, [f"{path}: expected an object"]
        problems: list[str] = []
        out: dict[str, Any] = {}
        for key, sub in schema.get("properties", {}).items():
            if key not in data:
                if key in schema.get("required", ()):
                    problems.append(f"{path}.{key}: missing")
                continue
            out[key], sub_problems = validate(data[key], sub, f"{path}.{key}")
            problems += sub_problems
        return out, problems
    if kind == "array":
        if not isinstance(data, list):
            return None, [f"{path}: expected a list"]
        problems = []
        out_list = []
        for i, item in enumerate(data):
            value, sub_problems = validate(item, schema.get("items", {}), f"{path}[{i}]")
            out_list.append(value)
            problems += sub_problems
        return out_list, problems
    if kind == "boolean":
        if isinstance(data, bool):
            return data, []
        if data in (0, 1) and not isinstance(data, float):
            return bool(data), []
        if isinstance(data, str) and data.strip().lower() in ("true", "false"):
            return data.strip().lower() == "true", []
        return None, [f"{path}: expected true or false, got {data!r}"]
    if kind == "string":
        if not isinstance(data, str):
            return None, [f"{path}: expected a string"]
        if "enum" in schema and data.strip() not in schema["enum"]:
            return None, [f"{path}: expected one of {schema['enum']}, got {data!r}"]
        return (data.strip() if "enum" in schema else data), []
    return data, []
