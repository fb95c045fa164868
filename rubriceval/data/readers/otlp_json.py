"""OTLP/JSON as the OpenTelemetry file exporters write it, decoded: the envelope, attribute values, ids and times.

The encoding (opentelemetry-proto's JSON mapping): a file holds one ExportTraceServiceRequest per line (the
collector's file exporter) or one pretty-printed document (readers/documents.py reads both); `resourceSpans[] →
scopeSpans[] → spans[]`; trace and
span ids are hex strings; an attribute is `{key, value: AnyValue}` where AnyValue is one of stringValue, boolValue,
intValue (a decimal string, int64), doubleValue, arrayValue {values}, kvlistValue {values}, bytesValue.
Also what the exporters write for logs (`resourceLogs → scopeLogs → logRecords`), which export/otel.py produces.
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any


def any_value(value: Any) -> Any:
    """An OTLP AnyValue → the Python value (ints from their decimal strings, arrays and kvlists unwrapped)."""
    if not isinstance(value, dict):
        return value
    if "stringValue" in value:
        return value["stringValue"]
    if "boolValue" in value:
        return bool(value["boolValue"])
    if "intValue" in value:
        try:
            return int(value["intValue"])
        except (TypeError, ValueError):
            return value["intValue"]
    if "doubleValue" in value:
        return float(value["doubleValue"])
    if "arrayValue" in value:
        return [any_value(v) for v in (value["arrayValue"] or {}).get("values", [])]
    if "kvlistValue" in value:
        return attributes((value["kvlistValue"] or {}).get("values", []))
    if "bytesValue" in value:
        return value["bytesValue"]
    return None


def attributes(items: Any) -> dict[str, Any]:
    """An OTLP attribute list [{key, value}] → {key: value}."""
    out: dict[str, Any] = {}
    for item in items or []:
        if isinstance(item, dict) and "key" in item:
            out[str(item["key"])] = any_value(item.get("value"))
    return out


def encode_value(value: Any) -> dict[str, Any]:
    """A Python value → OTLP AnyValue (the inverse of any_value; ints as decimal strings, as the JSON mapping says)."""
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, (list, tuple)):
        return {"arrayValue": {"values": [encode_value(v) for v in value]}}
    if isinstance(value, dict):
        return {"kvlistValue": {"values": encode_attributes(value)}}
    return {"stringValue": "" if value is None else str(value)}


def encode_attributes(values: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"key": k, "value": encode_value(v)} for k, v in values.items() if v is not None]


def span_lists(document: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any], dict[str, Any]]]:
    """(field path, resource attributes, span) for every span of one ExportTraceServiceRequest; list positions in
    the path count from 1, as everywhere a person reads them."""
    for r, resource_spans in enumerate(document.get("resourceSpans") or [], start=1):
        resource = attributes(((resource_spans or {}).get("resource") or {}).get("attributes"))
        scopes_key = "scopeSpans" if "scopeSpans" in resource_spans else "instrumentationLibrarySpans"
        for s, scope_spans in enumerate(resource_spans.get(scopes_key) or [], start=1):
            for n, span in enumerate((scope_spans or {}).get("spans") or [], start=1):
                yield f"resourceSpans[{r}].{scopes_key}[{s}].spans[{n}]", resource, span
