"""The segment a sample falls in: field values from its metadata, tags and intent, and time buckets of its
timestamps (read as UTC instants, bucketed in the configured zone)."""
from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, NamedTuple

from rubriceval.data.metadata import ENDED_AT, STARTED_AT, TIME_HINT, parse_moment
from rubriceval.data.segment_spec import MISSING, Grouping, SegmentError, SegmentField, TimeSettings, zone_info

# Where a sample's start and end times are looked for when a bucket names no field: metadata keys in this order
# (importers write started_at/ended_at), then the conversation's first/last turn timestamp.
START_FIELDS = (STARTED_AT, "start_time", "timestamp", "created_at", "time", "date", "开始时间", "时间")
END_FIELDS = (ENDED_AT, "end_time", "last_message_at", "updated_at", "结束时间")


class SampleKeys(NamedTuple):
    """What segments read of one sample (as stored: its metadata, tags, intent, first/last turn timestamps)."""

    sample_id: str
    metadata: Mapping[str, Any]
    tags: Sequence[str]
    intent: str
    first_turn_time: str | None = None
    last_turn_time: str | None = None


def parse_instant(value: Any, naive_zone: str = "UTC", *, where: str = "") -> datetime:
    """A timestamp (data/metadata.parse_moment: ISO-like text, epoch seconds/milliseconds) → aware UTC datetime;
    a time without an offset is a time of `naive_zone`. Not a date-time → SegmentError naming the field."""
    moment = parse_moment(value, zone_info(naive_zone))
    if moment is None:
        raise SegmentError(f"timestamp {str(value)!r} is not a date-time", field=where or "timestamp", hint=TIME_HINT)
    return moment


def bucket_label(moment: datetime, bucket: str, zone: str) -> str:
    """The day (2026-11-12), ISO week (2026-W46) or month (2026-11) of a UTC instant, counted in `zone`."""
    local = moment.astimezone(zone_info(zone))
    if bucket == "day":
        return local.strftime("%Y-%m-%d")
    if bucket == "month":
        return local.strftime("%Y-%m")
    year, week, _ = local.isocalendar()
    return f"{year}-W{week:02d}"


def _first_present(metadata: Mapping[str, Any], names: Sequence[str]) -> tuple[str, Any] | None:
    for name in names:
        value = metadata.get(name)
        if value not in (None, ""):
            return name, value
    return None


def sample_time(keys: SampleKeys, field: str, settings: TimeSettings, *, end: bool = False) -> datetime | None:
    """The instant a time bucket reads: metadata[field] when named, else the sample's start (or end) time."""
    if field:
        value = keys.metadata.get(field)
        found = None if value in (None, "") else (field, value)
    else:
        found = _first_present(keys.metadata, END_FIELDS if end else START_FIELDS)
        if found is None and end:
            found = _first_present(keys.metadata, START_FIELDS)
        turn_time = keys.last_turn_time if end else keys.first_turn_time
        if found is None and turn_time:
            found = ("turns[-1].timestamp" if end else "turns[1].timestamp", turn_time)
    if found is None:
        return None
    name, value = found
    where = f"sample {keys.sample_id}: {name}" if name.startswith("turns") else f"sample {keys.sample_id}: metadata.{name}"
    return parse_instant(value, settings.naive_zone, where=where)


def field_values(keys: SampleKeys, field: SegmentField, settings: TimeSettings) -> list[str] | None:
    """The sample's values of one field (a tag field: one per tag); None when the sample lacks it."""
    if field.bucket is not None:
        moment = sample_time(keys, field.name, settings)
        return None if moment is None else [bucket_label(moment, field.bucket, settings.zone)]
    if field.name == "tag":
        return list(dict.fromkeys(keys.tags)) or None
    if field.name == "intent":
        return [keys.intent] if keys.intent else None
    value = keys.metadata.get(field.name)
    if value in (None, ""):
        return None
    if isinstance(value, (list, tuple)):
        return [str(v) for v in dict.fromkeys(value)] or None
    return [str(value)]


def segment_keys(keys: SampleKeys, grouping: Grouping, settings: TimeSettings,
                 seen: set[str] | None = None) -> list[tuple[str, ...]]:
    """The segments of one grouping a sample falls in (several when a field holds several values, e.g. tags);
    a missing field is the group '(none)'. `seen` collects the labels of the fields this sample has."""
    per_field = []
    for field in grouping.fields:
        values = field_values(keys, field, settings)
        if values is not None and seen is not None:
            seen.add(field.label)
        per_field.append(values or [MISSING])
    return list(itertools.product(*per_field))
