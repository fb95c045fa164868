"""What an imported production conversation says about itself: the metadata keys every importer fills the same way.

Every reader of production data (flat chat-log exports, OpenTelemetry GenAI spans, Langfuse traces/sessions) puts
them in `Conversation.metadata`, which `conversation_sample` copies to `Sample.metadata`, so reports, segments
(`--by agent_id,skill_group`), time buckets and audit sampling read one dict whatever the source:

    agent_id, agent_name    the human agent (客服工号 / 坐席) or the bot agent that handled the conversation
    skill_group             技能组 / queue
    channel                 web, app, 电话, 微信 …
    bot_version             the bot release that answered
    customer_id             the customer (Langfuse userId)
    started_at, ended_at    first and last message, UTC ISO-8601 with a Z: "2026-11-16T01:02:03Z"
    source                  provenance: {"format": "chatlog"|"otel"|"langfuse", and the ids that let a verdict be
                            written back: "trace_id", "span_id" (the conversation's span), "session_id",
                            "trace_ids", "turns": {"<turn number>": {"trace_id", "span_id" | "observation_id"}}}.
                            Ids only, never the file or its line numbers: a conversation's input hash (which
                            incremental runs compare) must not change when an export is moved or re-cut
    varying                 (chat logs) a standard key whose value changes within the conversation (a transfer
                            between agents): {key: [every value, in turn order]}; the key itself holds the first
    langfuse_scores         (Langfuse) the scores the trace/session already had: [{name, value, data_type, comment,
                            source, trace_id}]

Any other column or attribute is kept under its own name. Values are str/int/float/bool (or lists/dicts of them for
`source`): a segment reads `metadata["agent_id"]` as it is. Timestamps anywhere in metadata that these keys name are
UTC: an export's own zone is applied when it is read (`timezone:` of a chat-log config) and never stored.
"""
from __future__ import annotations

from datetime import datetime, timezone, tzinfo
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from rubriceval.common.errors import DatasetError

AGENT_ID, AGENT_NAME, SKILL_GROUP, CHANNEL = "agent_id", "agent_name", "skill_group", "channel"
BOT_VERSION, CUSTOMER_ID, STARTED_AT, ENDED_AT = "bot_version", "customer_id", "started_at", "ended_at"
SOURCE, LANGFUSE_SCORES = "source", "langfuse_scores"
# The keys a segment, trend or sampling plan may rely on, in the order reports list them.
STANDARD_KEYS = (AGENT_ID, AGENT_NAME, SKILL_GROUP, CHANNEL, BOT_VERSION, CUSTOMER_ID, STARTED_AT, ENDED_AT)

TIME_HINT = "write e.g. 2026-11-16 09:02:03, 2026-11-16T01:02:03Z or 2026/11/16 09:02"
EPOCH_SECONDS_FROM = 1e9         # numbers are Unix seconds (or milliseconds) from 2001-09-09 on


def zone(name: str | None, *, file: str | None = None, field: str = "timezone") -> tzinfo:
    """An IANA zone name (Asia/Shanghai, Europe/Berlin, UTC) → tzinfo; None → UTC."""
    if not name or name.upper() == "UTC":
        return timezone.utc
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise DatasetError(f"unknown time zone {name!r}", file=file, field=field,
                           hint="an IANA name such as Asia/Shanghai or UTC") from None


def parse_moment(value: Any, local: tzinfo = timezone.utc) -> datetime | None:
    """A timestamp cell → aware UTC datetime, or None when it is not a date-time. A value without an offset is in
    `local` (the export's zone); one with an offset or a Z keeps it. Numbers are Unix seconds (or milliseconds)
    from 2001 on; smaller numbers (an Excel serial date, a row count) are not a date-time."""
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        if not EPOCH_SECONDS_FROM <= value:
            return None              # an Excel serial date (45981.4) or a count, not Unix time: never a 1970 date
        seconds = value / 1000 if value > 1e11 else value
        return datetime.fromtimestamp(seconds, tz=timezone.utc)
    else:
        text = str(value or "").strip()
        if not text:
            return None
        if text.replace(".", "", 1).isdigit():
            return parse_moment(float(text), local)
        try:
            moment = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00").replace("/", "-"))
        except ValueError:
            return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=local)
    return moment.astimezone(timezone.utc)


def utc_iso(moment: datetime) -> str:
    """The one spelling of a stored time: 2026-11-16T01:02:03Z, whole seconds, so stored times sort as text."""
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def to_utc_iso(value: Any, local: tzinfo = timezone.utc, *, file: str | None = None, line: int | None = None,
               field: str | None = None) -> str:
    """parse_moment + utc_iso, or a DatasetError naming file, line and field."""
    moment = parse_moment(value, local)
    if moment is None:
        raise DatasetError(f"timestamp {str(value)!r} is not a date-time", file=file, line=line, field=field,
                           hint=TIME_HINT)
    return utc_iso(moment)


def nanos_to_utc_iso(nanos: Any) -> str | None:
    """OTLP's timeUnixNano (an int, or its decimal string in OTLP/JSON) → UTC ISO-8601; None when absent."""
    try:
        value = int(nanos)
    except (TypeError, ValueError):
        return None
    if value <= 0:
        return None
    return utc_iso(datetime.fromtimestamp(value / 1e9, tz=timezone.utc))


def span_of_times(stamps: list[str | None]) -> dict[str, str]:
    """started_at / ended_at from a conversation's turn timestamps (already UTC ISO), when it has any."""
    known = sorted(s for s in stamps if s)
    return {STARTED_AT: known[0], ENDED_AT: known[-1]} if known else {}


def scalar(value: Any) -> Any:
    """A metadata value as segments read it: str/int/float/bool kept, None dropped by the caller, else JSON-ish text."""
    if isinstance(value, (str, int, float, bool)):
        return value
    import json

    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
