"""What `--by` means: groupings of samples by metadata fields, tags, intent or time buckets of a timestamp.

    --by agent_id,skill_group          two groupings: one table per agent, one per skill group
    --by agent_id+week                 one crossed grouping: per agent and week
    --by week:started_at               time bucket of a named timestamp field (default: the sample's start time)

A field is `tag` (a sample is in one group per tag), `intent`, or any key of the sample's metadata (`metadata.x` is
the same as `x`). Time buckets are `day`, `week` (ISO week, 2026-W46) and `month`, counted in `zone` (an IANA name,
e.g. Asia/Shanghai); instants are compared in UTC, and a timestamp without an offset is read in `naive_zone`.
"""
from __future__ import annotations

from datetime import tzinfo
from typing import Literal, get_args

from pydantic import BaseModel, Field, field_validator

from rubriceval.common.errors import DatasetError, RubricEvalError
from rubriceval.data.metadata import zone

Bucket = Literal["day", "week", "month"]
BUCKETS: tuple[Bucket, ...] = get_args(Bucket)
TAG_FIELDS = ("tag", "tags")
MISSING = "(none)"          # the group of samples that lack the field (counted, never dropped)


class SegmentError(RubricEvalError):
    """A `--by` spec, a zone or a sample's timestamp that cannot be read."""


class SegmentField(BaseModel):
    """One key of a grouping: a field's value, or a time bucket of a timestamp field."""

    name: str                       # metadata key, 'tag' or 'intent'; for a bucket: the timestamp field, or ''
    bucket: Bucket | None = None

    @property
    def label(self) -> str:
        if self.bucket is None:
            return self.name
        return self.bucket + (f":{self.name}" if self.name else "")


class Grouping(BaseModel):
    """The fields one table groups by (several: crossed)."""

    fields: list[SegmentField] = Field(default_factory=list)     # none: every sample in one segment

    @property
    def label(self) -> str:
        return "+".join(f.label for f in self.fields) or "all"


class TimeSettings(BaseModel):
    zone: str = "UTC"               # buckets are days/weeks/months of this zone
    naive_zone: str = "UTC"         # a timestamp written without an offset is a time of this zone

    @field_validator("zone", "naive_zone")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        zone_info(value)
        return value


def zone_info(name: str) -> tzinfo:
    """data/metadata.zone (the one zone lookup), its error said as a --tz error."""
    try:
        return zone(name)
    except DatasetError as exc:
        raise SegmentError(exc.message, field="tz", hint=exc.hint) from None


def parse_field(text: str, spec: str) -> SegmentField:
    word = text.strip()
    if not word:
        raise SegmentError(f"empty field in --by {spec!r}", field="by", hint="e.g. --by agent_id,week")
    head, _, tail = word.partition(":")
    bucket = next((b for b in BUCKETS if b == head), None)
    if bucket is not None:
        return SegmentField(name=tail.strip().removeprefix("metadata."), bucket=bucket)
    if tail:
        raise SegmentError(f"{word!r} in --by {spec!r}: only day, week and month take ':<timestamp field>'",
                           field="by")
    name = word.removeprefix("metadata.")
    return SegmentField(name="tag" if name in TAG_FIELDS else name)


def parse_by(spec: str | list[str] | None) -> list[Grouping]:
    """'agent_id,skill_group+week' → [Grouping(agent_id), Grouping(skill_group, week)]; None/'' → []."""
    if not spec:
        return []
    parts = spec if isinstance(spec, list) else spec.split(",")
    text = spec if isinstance(spec, str) else ",".join(spec)
    groupings = []
    for part in parts:
        if not part.strip():
            continue
        groupings.append(Grouping(fields=[parse_field(f, text) for f in part.split("+")]))
    if not groupings:
        raise SegmentError(f"--by {text!r} names no field", field="by", hint="e.g. --by agent_id,week")
    return groupings
