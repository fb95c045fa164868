"""A JSON value that satisfies a JSON schema (the subset structured-output APIs accept), for stub answers."""
from __future__ import annotations

import math
import random
import uuid
from collections.abc import Callable
from typing import Any


class SchemaError(ValueError):
    """The schema cannot be satisfied (or uses something the generator does not support)."""


def _resolve_ref(root: dict, ref: str) -> dict:
    if not ref.startswith("#/"):
        raise SchemaError(f"only local $ref are supported, got {ref!r}")
    node: Any = root
    for part in ref[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, dict) or part not in node:
            raise SchemaError(f"$ref {ref!r} does not resolve")
        node = node[part]
    return node


def _bound(schema: dict, inclusive_key: str, exclusive_key: str) -> tuple[float | None, bool]:
    """(bound, exclusive) handling both draft-4 boolean and draft-6+ numeric exclusive bounds."""
    exclusive = schema.get(exclusive_key)
    if isinstance(exclusive, bool):
        return schema.get(inclusive_key), exclusive and inclusive_key in schema
    if exclusive is not None:
        return exclusive, True
    return schema.get(inclusive_key), False


def _integer_instance(schema: dict, rng: random.Random) -> int:
    low, low_exclusive = _bound(schema, "minimum", "exclusiveMinimum")
    high, high_exclusive = _bound(schema, "maximum", "exclusiveMaximum")
    if low is None:                     # 0–10 without bounds, else 10 wide from the bound given
        low = 0 if high is None else high - 10
    if high is None:
        high = low + 10
    lo = math.floor(low) + 1 if low_exclusive and float(low).is_integer() else math.ceil(low)
    hi = math.ceil(high) - 1 if high_exclusive and float(high).is_integer() else math.floor(high)
    step = schema.get("multipleOf", 1)
    if not isinstance(step, int) or step <= 0:
        step = 1
    first = math.ceil(lo / step) * step
    if first > hi:
        raise SchemaError(f"no integer satisfies {schema}")
    return first + step * rng.randint(0, (hi - first) // step)


def _number_instance(schema: dict, rng: random.Random) -> float:
    low, _ = _bound(schema, "minimum", "exclusiveMinimum")
    high, _ = _bound(schema, "maximum", "exclusiveMaximum")
    low = 0.0 if low is None else float(low)
    high = low + 1.0 if high is None else float(high)
    if low > high:
        raise SchemaError(f"no number satisfies {schema}")
    # Stay strictly inside the interval so exclusive bounds hold without special cases.
    value = round(low + (high - low) * (0.1 + 0.8 * rng.random()), 4)
    return min(max(value, low), high)


def _string_instance(schema: dict, rng: random.Random, name: str, language: str) -> str:
    formats = {"date-time": "2024-01-01T00:00:00Z", "date": "2024-01-01", "time": "00:00:00",
               "email": "stub@example.com", "uri": "https://example.com/stub"}
    fmt = schema.get("format")
    if fmt == "uuid":
        text = str(uuid.UUID(int=rng.getrandbits(128), version=4))
    elif fmt in formats:
        text = formats[fmt]
    else:
        text = f"桩服务器生成的{name}" if language == "zh" else f"stub {name}"
    min_length, max_length = schema.get("minLength", 0), schema.get("maxLength")
    if len(text) < min_length:
        text += ("字" if language == "zh" else "x") * (min_length - len(text))
    if max_length is not None:
        if max_length < min_length:
            raise SchemaError(f"no string satisfies {schema}")
        text = text[:max_length]
    return text


def instance_for_schema(schema: dict, rng: random.Random, *, language: str = "en", name: str = "value",
                        root: dict | None = None, _depth: int = 0) -> Any:
    """A value satisfying `schema` (the subset structured-output APIs accept; `pattern` is not honoured)."""
    root = schema if root is None else root
    if _depth > 16:
        raise SchemaError("schema recursion too deep")

    def sub(node: dict, child_name: str) -> Any:
        return instance_for_schema(node, rng, language=language, name=child_name, root=root, _depth=_depth + 1)

    if "$ref" in schema:
        schema = {**_resolve_ref(root, schema["$ref"]), **{k: v for k, v in schema.items() if k != "$ref"}}
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        if not schema["enum"]:
            raise SchemaError("empty enum")
        return rng.choice(schema["enum"])
    for key in ("anyOf", "oneOf"):
        if schema.get(key):
            options = [_resolve_ref(root, o["$ref"]) if "$ref" in o else o for o in schema[key]]
            # The first non-null option: an Optional[...] field then carries a real value.
            meaningful = [o for o in options if o.get("type") != "null"] or options
            return sub(meaningful[0], name)
    if schema.get("allOf"):
        merged: dict = {}
        for part in schema["allOf"]:
            part = _resolve_ref(root, part["$ref"]) if "$ref" in part else part
            merged = {**merged, **part, "properties": {**merged.get("properties", {}), **part.get("properties", {})},
                      "required": [*merged.get("required", []), *part.get("required", [])]}
        rest = {k: v for k, v in schema.items() if k != "allOf"}
        return sub({**merged, **rest}, name)

    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind is None:
        kind = "object" if "properties" in schema else "array" if "items" in schema else "string"

    if kind == "object":
        properties: dict = schema.get("properties", {})
        value = {prop: sub(prop_schema, prop) for prop, prop_schema in properties.items()}
        for prop in schema.get("required", []):
            value.setdefault(prop, f"stub {prop}")
        return value
    if kind == "array":
        return _array_instance(schema, rng, name, sub)
    if kind == "string":
        return _string_instance(schema, rng, name, language)
    if kind == "integer":
        return _integer_instance(schema, rng)
    if kind == "number":
        return _number_instance(schema, rng)
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "null":
        return None
    raise SchemaError(f"unsupported schema type {kind!r}")


def _array_instance(schema: dict, rng: random.Random, name: str, sub: Callable[[dict, str], Any]) -> list:
    min_items, max_items = schema.get("minItems", 0), schema.get("maxItems")
    if max_items is not None and max_items < min_items:
        raise SchemaError(f"no array satisfies {schema}")
    prefix = [sub(item, f"{name} {i + 1}") for i, item in enumerate(schema.get("prefixItems", []))]
    # 1–3 items unless the schema says otherwise.
    low, high = max(min_items, 1), max(min_items, 3)
    if max_items is not None:
        low, high = min(low, max_items), min(high, max_items)
    count = rng.randint(low, high) - len(prefix)
    given = schema.get("items")
    item_schema = given if isinstance(given, dict) else {}
    items: list = []
    attempts = 0
    while len(items) < count and attempts < count * 20:
        attempts += 1
        item = sub(item_schema, f"{name} {len(prefix) + len(items) + 1}")
        if schema.get("uniqueItems") and item in prefix + items:
            continue
        items.append(item)
    if len(prefix) + len(items) < min_items:
        raise SchemaError(f"cannot generate {min_items} unique items for {schema}")
    return prefix + items
