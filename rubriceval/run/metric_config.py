"""A run's metric options: the config file's `metrics:` section, then `--metric-option KEY=VALUE` flags on top,
validated by `standard_metrics.options.MetricOptions`. A bad value names the file, line and field, or the flag.

    metrics:                    # in the --config YAML, beside judge: and embedder:
      sql: {mode: columns, metric: f1, database: shop.sqlite}
      agent: {argument_match: case_insensitive, strict_order: false, topic_mode: recall}

    rubriceval run data.jsonl --metrics datacompy_score --metric-option sql.mode=columns

A metric's pass threshold (its verdicts' `passed`, the reports' pass rate; defaults in
standard_metrics/thresholds.py) is set beside the options, or by flag:

    metrics:
      faithfulness: {threshold: 0.8}

    rubriceval run data.jsonl --metrics faithfulness --threshold faithfulness=0.85
"""
from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from rubriceval.common.errors import ConfigError, RubricEvalError
from rubriceval.rubric.yaml_lines import line_for, load_yaml_with_lines
from rubriceval.standard_metrics.options import MetricOptions

FLAG = "--metric-option"
SECTION = "metrics"


def parse_assignments(assignments: Iterable[str]) -> dict[str, Any]:
    """`["sql.mode=columns", "agent.strict_order=false"]` → `{"sql": {"mode": "columns"}, "agent": {…}}`; values are
    read as YAML scalars (true, 0.5, columns)."""
    out: dict[str, Any] = {}
    for text in assignments:
        key, sep, raw = text.partition("=")
        path = [part.strip() for part in key.split(".")]
        if not sep or not all(path):
            raise ConfigError(f"expected KEY=VALUE, got {text!r}", field=FLAG,
                              hint="e.g. sql.mode=columns or agent.argument_match=case_insensitive")
        try:
            value = yaml.safe_load(raw) if raw.strip() else ""
        except yaml.YAMLError:
            value = raw
        node = out
        for part in path[:-1]:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                raise ConfigError(f"{'.'.join(path)} sets a field inside {part!r}, which was given a value",
                                  field=f"{FLAG} {key}")
            node = child
        node[path[-1]] = value
    return out


def _merged(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in extra.items():
        out[key] = _merged(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def _given_path(loc: tuple, data: Any) -> tuple:
    """The longest start of a pydantic error location that the user wrote (a union's member tags are dropped)."""
    path: list = []
    for part in loc:
        if not isinstance(data, dict) or part not in data:
            break
        path.append(part)
        data = data[part]
    return tuple(path)


def _known_fields(path: tuple) -> str:
    model: Any = MetricOptions
    for part in path[:-1]:
        annotation = model.model_fields[part].annotation if part in getattr(model, "model_fields", {}) else None
        if not (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
            return ""
        model = annotation
    return ", ".join(model.model_fields)


def _section(config_path: str | Path | None) -> tuple[dict[str, Any], dict]:
    if not config_path:
        return {}, {}
    try:
        data, lines = load_yaml_with_lines(config_path)
    except RubricEvalError as exc:          # the loader speaks of rubrics; this is a config file
        raise ConfigError(exc.message, file=exc.file, line=exc.line, field=exc.field, hint=exc.hint) from None
    section = data.get(SECTION) if isinstance(data, dict) else None
    if section is not None and not isinstance(section, dict):
        raise ConfigError("must be a mapping of metric options", file=str(config_path),
                          line=lines.get((SECTION,)), field=SECTION, hint="metrics: {sql: {mode: columns}}")
    return section or {}, lines


THRESHOLD_FLAG = "--threshold"


def _section_thresholds(section: dict[str, Any], lines: dict, config_path: str | Path | None) -> dict[str, Any]:
    """`faithfulness: {threshold: 0.8}` entries of the section → {faithfulness: 0.8}, taken out of the section (the
    other keys are MetricOptions fields)."""
    out: dict[str, Any] = {}
    for key in [k for k in section if k not in MetricOptions.model_fields]:
        value = section[key]
        if isinstance(value, dict) and "threshold" in value:
            if set(value) != {"threshold"}:
                raise ConfigError(f"a metric's entry here sets only its threshold, not {sorted(set(value) - {'threshold'})}",
                                  file=str(config_path), line=lines.get((SECTION, key)), field=f"{SECTION}.{key}",
                                  hint=f"{key}: {{threshold: 0.8}}; other options go under their own keys")
            out[key] = _number(section.pop(key)["threshold"], file=str(config_path), line=lines.get((SECTION, key)),
                               field=f"{SECTION}.{key}.threshold")
    return out


def _number(value: Any, **where: Any) -> float:
    if isinstance(value, bool):
        value = None
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ConfigError(f"a threshold is a number, got {value!r}", **where) from None


def parse_thresholds(assignments: Iterable[str]) -> dict[str, Any]:
    """`["faithfulness=0.8"]` → `{"faithfulness": 0.8}`."""
    out: dict[str, Any] = {}
    for text in assignments:
        name, sep, raw = text.partition("=")
        if not sep or not name.strip() or not raw.strip():
            raise ConfigError(f"expected METRIC=VALUE, got {text!r}", field=THRESHOLD_FLAG, hint="e.g. faithfulness=0.8")
        out[name.strip()] = _number(raw.strip(), field=f"{THRESHOLD_FLAG} {name.strip()}")
    return out


def load_metric_options(config_path: str | Path | None = None, assignments: Iterable[str] = (),
                        thresholds: Iterable[str] = ()) -> MetricOptions:
    """The config file's `metrics:` section with the flags' values on top, validated; thresholds: `--threshold
    METRIC=VALUE` flags, over the section's `<metric>: {threshold: …}` entries."""
    section, lines = _section(config_path)
    section = dict(section)
    from_file = _section_thresholds(section, lines, config_path)
    flags = parse_assignments(assignments)
    merged = _merged(section, flags)
    if from_file or thresholds:
        merged["thresholds"] = {**from_file, **merged.get("thresholds", {}), **parse_thresholds(thresholds)}
    try:
        return MetricOptions.model_validate(merged)
    except ValidationError as exc:
        error = exc.errors()[0]
        path = _given_path(tuple(error["loc"]), merged)
        unknown = error["type"] == "extra_forbidden"
        message = "unknown metric option" if unknown else error["msg"]
        hint = f"known options here: {_known_fields(path)}" if unknown else None
        if path and _given_path(path, flags) == path:          # a flag set it (flags win over the file)
            raise ConfigError(message, field=f"{FLAG} {'.'.join(map(str, path))}", hint=hint) from None
        if not config_path or not section:                     # a rule across fields, set by flags only
            raise ConfigError(message, field=FLAG, hint=hint) from None
        raise ConfigError(message, file=str(config_path), line=line_for(lines, (SECTION, *path)),
                          field=".".join(map(str, (SECTION, *path))), hint=hint) from None


def public_metric_options(options: MetricOptions) -> dict[str, Any]:
    """What a run stores: the options that differ from the defaults (a Python matcher by its label)."""
    data = options.model_dump(exclude_defaults=True, exclude={"agent": {"argument_match"}})
    if options.agent.argument_match != "exact":
        data.setdefault("agent", {})["argument_match"] = options.agent.argument_match_label() \
            if callable(options.agent.argument_match) else options.agent.argument_match
    return data


def stored_metric_options(stored: dict[str, Any], run: str) -> MetricOptions:
    """The options a run was started with, to resume it alike."""
    try:
        return MetricOptions.model_validate(stored)
    except ValidationError as exc:
        raise ConfigError(f"run {run} was started with metric options that cannot be restored: "
                          f"{exc.errors()[0]['msg']}", field="metric_options",
                          hint="a Python argument_match function: finish the run from Python") from None
