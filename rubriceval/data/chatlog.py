"""Import a flat chat-log export (CSV / Excel / JSONL, one row per message) as conversations.

Rows carry a conversation id, a turn index or a timestamp, a speaker and the text. Column names default to common
English/Chinese headers (会话ID, 序号, 时间, 发言人, 内容 …) and can be set in a dataset config YAML; speakers map to
roles through `--speaker-map "客服=assistant,机器人=bot,用户=user"` or `speakers:` in that config (`drop` leaves
a speaker's rows out of the transcript, `system` keeps them as system turns). A speaker with no role is an error
naming file:line [speaker] and every speaker seen, never a guess.

A chatbot that answers before the human agent takes over is `bot`: its turns stay in the transcript (shown as 机器人,
so the judge reads what the customer read) but are not the agent's — `turns: assistant` checks, first/final-turn
checks and response times score the human agent (`assistant`) only. Map the bot to `assistant` instead when the bot
itself is what is evaluated. A conversation the bot handled alone (no agent turn) has nothing of an agent to score:
it is left out, counted in a note on stderr.

Every other column is kept as conversation metadata (data/metadata.py): the standard keys (agent_id, agent_name,
skill_group, channel, bot_version, customer_id) from the columns `metadata:` names or the default headers
(客服工号, 技能组, 渠道 …), any other column under its own header; a conversation takes the first non-empty value
of its rows in turn order (a standard key whose value changes within a conversation — a transfer between agents —
also lists every value under metadata['varying'][key]). Timestamps are read in the export's `timezone:` (default
UTC; a value with its own offset keeps it) and stored in UTC ISO-8601, with started_at/ended_at per conversation.
Without a turn index column, turns are ordered by timestamp. Full example: docs/ingest.md.

A dataset config (`rubriceval run chats.yaml`):

    file: export.xlsx            # relative to this YAML
    timezone: Asia/Shanghai
    columns: {conversation_id: 会话ID, turn_index: 序号, speaker: 发言人, text: 内容}
    metadata: {agent_id: 客服工号, skill_group: 技能组}
    speakers: {客服: assistant, 机器人: bot, 用户: user, 系统: system, 满意度机器人: drop}
"""
from __future__ import annotations

import itertools
import json
import sys
from collections.abc import Iterable, Iterator
from datetime import datetime, tzinfo
from pathlib import Path
from typing import Any, Literal, cast

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rubriceval.common.errors import DatasetError
from rubriceval.data import metadata as meta
from rubriceval.data.conversation import ROLES, Conversation, Role, Turn, TurnProblem
from rubriceval.data.row_groups import RowGroups
from rubriceval.data.stream import Record, iter_records

# Header names tried, in order, for each column nobody named.
DEFAULT_COLUMNS: dict[str, tuple[str, ...]] = {
    "conversation_id": ("conversation_id", "session_id", "conversation", "会话ID", "会话id", "会话编号", "对话ID",
                        "对话id"),
    "turn_index": ("turn_index", "turn", "index", "seq", "序号", "轮次", "消息序号"),
    "timestamp": ("timestamp", "time", "created_at", "时间", "发送时间", "消息时间"),
    "speaker": ("speaker", "role", "sender", "发言人", "角色", "发送方", "发送者"),
    "text": ("text", "content", "message", "内容", "消息内容", "消息", "文本"),
    "contexts": ("contexts", "参考资料", "知识库"),
    "tags": ("tags", "标签"),
    "intent": ("intent", "意图"),
}
# Header names tried for each standard metadata key nobody named (data/metadata.py).
DEFAULT_METADATA_COLUMNS: dict[str, tuple[str, ...]] = {
    meta.AGENT_ID: ("agent_id", "客服工号", "客服ID", "客服id", "坐席ID", "坐席id", "坐席工号", "工号"),
    meta.AGENT_NAME: ("agent_name", "客服姓名", "客服名称", "客服昵称", "坐席姓名", "坐席名称"),
    meta.SKILL_GROUP: ("skill_group", "技能组", "技能组名称", "技能组名"),
    meta.CHANNEL: ("channel", "渠道", "接入渠道", "来源渠道"),
    meta.BOT_VERSION: ("bot_version", "机器人版本", "版本号"),
    meta.CUSTOMER_ID: ("customer_id", "user_id", "客户ID", "客户id", "用户ID", "用户id", "访客ID", "访客id"),
}
REQUIRED = ("conversation_id", "speaker", "text")
DROP = "drop"
SpeakerRole = Literal["user", "assistant", "tool", "system", "bot", "drop"]
BOT = "bot"
SPEAKER_MAP_HINT = '--speaker-map "客服=assistant,用户=user" or `speakers:` in a dataset config YAML'


class ChatLogColumns(BaseModel):
    """The export's header for each field; unset → the first default header present."""

    model_config = ConfigDict(extra="forbid")

    conversation_id: str | None = None
    turn_index: str | None = None
    timestamp: str | None = None
    speaker: str | None = None
    text: str | None = None
    contexts: str | None = None
    tags: str | None = None
    intent: str | None = None


class ChatLogMetadata(BaseModel):
    """The export's header for each standard metadata key; unset → the first default header present."""

    model_config = ConfigDict(extra="forbid")

    agent_id: str | None = None
    agent_name: str | None = None
    skill_group: str | None = None
    channel: str | None = None
    bot_version: str | None = None
    customer_id: str | None = None


class ChatLogConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    file: str | None = None
    # The zone of the export's clock (IANA name); timestamps without an offset are read in it and stored in UTC.
    timezone: str | None = None
    columns: ChatLogColumns = Field(default_factory=ChatLogColumns)
    metadata: ChatLogMetadata = Field(default_factory=ChatLogMetadata)
    # Speaker label → role, or `drop` to leave the speaker's rows out. Role names always map to themselves.
    speakers: dict[str, SpeakerRole] = Field(default_factory=dict)


def parse_speaker_map(text: str) -> dict[str, str]:
    """'客服=assistant,机器人=assistant,用户=user' → {客服: assistant, …}."""
    mapping: dict[str, str] = {}
    for part in text.replace("，", ",").split(","):
        if not part.strip():
            continue
        speaker, sep, role = part.partition("=")
        role = role.strip()
        if not sep or not speaker.strip():
            raise DatasetError(f"'{part.strip()}' is not speaker=role", field="--speaker-map",
                               hint='e.g. "客服=assistant,用户=user"')
        if role not in (*ROLES, DROP):
            raise DatasetError(f"'{role}' is not a role (speaker '{speaker.strip()}')", field="--speaker-map",
                               hint=f"roles: {', '.join(ROLES)}, or {DROP} to leave the speaker out")
        mapping[speaker.strip()] = role
    return mapping


def load_chatlog_config(path: str | Path) -> ChatLogConfig:
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except FileNotFoundError:
        raise DatasetError("file not found", file=str(path)) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise DatasetError(f"malformed YAML: {getattr(exc, 'problem', exc)}", file=str(path),
                           line=mark.line + 1 if mark else None) from None
    try:
        config = ChatLogConfig.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise DatasetError(err["msg"], file=str(path), field=".".join(map(str, err["loc"]))) from None
    if not config.file:
        raise DatasetError("a dataset config names the chat-log export it describes", file=str(path), field="file")
    return config


def _resolve_columns(header: list[str], columns: ChatLogColumns, file: str) -> dict[str, str]:
    resolved: dict[str, str] = {}
    for name in DEFAULT_COLUMNS:
        chosen = getattr(columns, name)
        if chosen is not None:
            if chosen not in header:
                raise DatasetError(f"column '{chosen}' not found", file=file, field=f"columns.{name}",
                                   hint=f"columns found: {header}")
            resolved[name] = chosen
        else:
            found = next((h for h in DEFAULT_COLUMNS[name] if h in header), None)
            if found:
                resolved[name] = found
    missing = [n for n in REQUIRED if n not in resolved]
    if missing:
        raise DatasetError(f"no {', '.join(missing)} column", file=file, field=missing[0],
                           hint=f"columns found: {header}; name them under `columns:` in a dataset config "
                                f"(tried {', '.join(DEFAULT_COLUMNS[missing[0]])})")
    if "turn_index" not in resolved and "timestamp" not in resolved:
        raise DatasetError("no turn index or timestamp column: the turns' order is unknown", file=file,
                           field="turn_index", hint=f"columns found: {header}")
    return resolved


def _metadata_columns(header: list[str], chosen: ChatLogMetadata, used: set[str], file: str) -> dict[str, str]:
    """Metadata key → column: the standard keys (named or by default header), then every other column as itself."""
    columns: dict[str, str] = {}
    for key, defaults in DEFAULT_METADATA_COLUMNS.items():
        named = getattr(chosen, key)
        if named is not None and named not in header:
            raise DatasetError(f"column '{named}' not found", file=file, field=f"metadata.{key}",
                               hint=f"columns found: {header}")
        found = named or next((h for h in defaults if h in header and h not in used), None)
        if found:
            columns[key] = found
    taken = used | set(columns.values())
    columns.update({h: h for h in header if h and h not in taken and h not in columns})
    return columns


def looks_like_chatlog(records: list[tuple[int, dict[str, Any]]]) -> bool:
    """One row per message under the default headers (and not a question/answer dataset)."""
    header = list(records[0][1]) if records else []
    if any(h in header for h in ("question", "user_input", "turns", "messages")):
        return False
    return all(any(h in header for h in DEFAULT_COLUMNS[n]) for n in REQUIRED)


def _cell(record: dict[str, Any], column: str | None) -> str:
    value = record.get(column) if column else None
    if type(value) is str:                 # CSV and Excel cells: the common case, first (called per row and column)
        return value.strip()
    if value is None or (isinstance(value, float) and value != value):
        return ""
    return str(value).strip()


def _contexts(text: str, file: str, line: int, column: str) -> list[str]:
    if not text:
        return []
    if text.startswith("["):
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            raise DatasetError(f"cell is not a valid JSON list: {exc.msg}", file=file, line=line, field=column) from None
        return [str(v) for v in value]
    return [text]


def _index(text: str, file: str, line: int, column: str) -> int | None:
    if not text:
        return None
    try:
        as_float = float(text)
    except ValueError:
        as_float = float("nan")
    if as_float != as_float or as_float != int(as_float):
        raise DatasetError(f"turn index {text!r} is not a whole number", file=file, line=line, field=column)
    return int(as_float)


def _moment(record: dict[str, Any], cols: dict[str, str], zone: tzinfo, file: str, line: int) -> datetime | None:
    text = _cell(record, cols.get("timestamp"))
    if not text:
        return None
    moment = meta.parse_moment(text, zone)
    if moment is None:
        raise DatasetError(f"timestamp {text!r} is not a date-time", file=file, line=line, field=cols["timestamp"],
                           hint=meta.TIME_HINT + "; set the export's zone with `timezone:` in a dataset config")
    return moment


def _conversation_metadata(rows: list[tuple[int, dict[str, Any]]], columns: dict[str, str]) -> dict[str, Any]:
    """First non-empty value of each metadata column over the rows (in turn order); a standard key that changes
    within the conversation also lists its values under 'varying'."""
    metadata: dict[str, Any] = {}
    varying: dict[str, list[str]] = {}
    for key, column in columns.items():
        values = list(dict.fromkeys(v for _, record in rows if (v := _cell(record, column))))
        if values:
            metadata[key] = values[0]
        if len(values) > 1 and key in DEFAULT_METADATA_COLUMNS:
            varying[key] = values
    if varying:
        metadata["varying"] = varying
    return metadata


def _build(conversation_id: str, rows: list[tuple[int, dict[str, Any]]], cols: dict[str, str],
           roles: dict[str, str], file: str, zone: tzinfo, metadata_columns: dict[str, str]) -> Conversation:
    moments = {line: _moment(record, cols, zone, file, line) for line, record in rows}
    if "turn_index" not in cols:
        # No index: the turns' order is the timestamps' (rows without one keep their place after the ones before).
        rows = _by_time(rows, moments)
    metadata = _conversation_metadata(rows, metadata_columns)
    kept = [(line, record) for line, record in rows if roles[_cell(record, cols["speaker"])] != DROP]
    if not kept:
        raise DatasetError(f"conversation '{conversation_id}': every row is from a dropped speaker", file=file,
                           line=rows[0][0], field=cols["speaker"])
    turns = []
    for line, record in kept:
        label = _cell(record, cols["speaker"])
        moment = moments[line]
        role = cast(Role, roles[label])        # kept rows are never DROP
        turns.append(Turn(role=role, speaker=label, content=_cell(record, cols["text"]),
                          contexts=_contexts(_cell(record, cols.get("contexts")), file, line, cols.get("contexts", "")),
                          index=_index(_cell(record, cols.get("turn_index")), file, line, cols.get("turn_index", "")),
                          timestamp=meta.utc_iso(moment) if moment else None))
    metadata.update(meta.span_of_times([t.timestamp for t in turns]))
    metadata[meta.SOURCE] = {"format": "chatlog"}
    first = kept[0][1]
    try:
        # validated from the cells (the tags cell is text the model splits)
        return Conversation.model_validate({"id": conversation_id, "turns": turns, "metadata": metadata,
                                            "tags": _cell(first, cols.get("tags")),
                                            "intent": _cell(first, cols.get("intent"))})
    except ValidationError as exc:
        problem = (exc.errors()[0].get("ctx") or {}).get("error")
        if not isinstance(problem, TurnProblem):
            raise DatasetError(exc.errors()[0]["msg"], file=file, line=kept[0][0]) from None
        line = kept[problem.turn - 1][0] if problem.turn else kept[0][0]
        column = {"index": cols.get("turn_index"), "timestamp": cols.get("timestamp")}.get(
            problem.field.rsplit(".", 1)[-1], cols["speaker"])
        message = str(problem) if problem.turn else f"conversation '{conversation_id}': {problem}"
        raise DatasetError(message, file=file, line=line, field=column,
                           hint="sort the export by conversation and turn" if "out of order" in message else None
                           ) from None


def _by_time(rows: list[tuple[int, dict[str, Any]]], moments: dict[int, datetime | None]):
    """Rows in timestamp order, stable (same second: the export's order); a row without a time follows its
    predecessor."""
    keyed, last = [], None
    for position, (line, record) in enumerate(rows):
        last = moments[line] or last
        keyed.append(((last.timestamp() if last else float("-inf")), position, (line, record)))
    return [row for *_, row in sorted(keyed, key=lambda k: (k[0], k[1]))]


def read_chatlog(path: str | Path, config: ChatLogConfig | None = None, *,
                 records: Iterable[Record] | None = None) -> list[Conversation]:
    """Every conversation of an export, as a list (iter_chatlog reads them one at a time)."""
    return list(iter_chatlog(path, config, records=records))


def iter_chatlog(path: str | Path, config: ChatLogConfig | None = None, *,
                 records: Iterable[Record] | None = None) -> Iterator[Conversation]:
    """Group an export's rows into conversations (in order of first appearance). `path` may be the export itself
    or a dataset config YAML naming it; a config given here (e.g. from --speaker-map) adds to the YAML's.

    Rows are read as a stream and checked as they come (a bad row is reported when reached); the rows of each
    conversation are gathered in bounded memory (data/row_groups.py spills a large export to a temporary file)."""
    path = Path(path)
    config = config or ChatLogConfig()
    config_file: str | None = None
    if path.suffix.lower() in (".yaml", ".yml"):
        from_file = load_chatlog_config(path)
        config_file = str(path)
        config = ChatLogConfig(
            file=from_file.file, timezone=config.timezone or from_file.timezone,
            columns=from_file.columns.model_copy(update=config.columns.model_dump(exclude_none=True)),
            metadata=from_file.metadata.model_copy(update=config.metadata.model_dump(exclude_none=True)),
            speakers={**from_file.speakers, **config.speakers})
        assert from_file.file is not None       # load_chatlog_config refuses a config without one
        path = path.parent / from_file.file
    zone = meta.zone(config.timezone, file=config_file)
    file = str(path)
    rows = iter(records) if records is not None else iter_records(path)
    first = next(rows, None)
    if first is None:
        raise DatasetError("the chat log has no rows", file=file)
    header = list(first[1])
    cols = _resolve_columns(header, config.columns, file)
    metadata_columns = _metadata_columns(header, config.metadata, set(cols.values()), file)
    roles = {role: role for role in ROLES} | config.speakers
    seen: dict[str, None] = {}
    groups = RowGroups()
    try:
        for line, record in itertools.chain([first], rows):
            label = _cell(record, cols["speaker"])
            seen.setdefault(label)
            if label not in roles:
                raise _unmapped_speaker(label, line, seen, rows, cols["speaker"], file)
            conversation_id = _cell(record, cols["conversation_id"])
            if not conversation_id:
                raise DatasetError("empty conversation id", file=file, line=line, field=cols["conversation_id"],
                                   hint="every row needs the id of the conversation it belongs to")
            _moment(record, cols, zone, file, line)              # a bad timestamp is reported at its row
            groups.add(conversation_id, line, record)
        bot_only = 0
        for conversation_id, group in groups.groups():
            said = {roles[_cell(record, cols["speaker"])] for _, record in group}
            if BOT in said and "assistant" not in said:      # the bot alone: no agent turn to score
                bot_only += 1
                continue
            yield _build(conversation_id, group, cols, roles, file, zone, metadata_columns)
        if bot_only:
            print(f"note: {bot_only} conversation(s) of {file} answered by the bot alone (no agent turn) are left "
                  "out: an agent's scorecard has nothing to score there", file=sys.stderr)
    finally:
        groups.close()


def _unmapped_speaker(label: str, line: int, seen: dict[str, None], rest: Iterator[Record], column: str,
                      file: str) -> DatasetError:
    """The error for a speaker with no role, listing every speaker of the export (the rest read for their labels)."""
    for _, record in rest:
        seen.setdefault(_cell(record, column))
    return DatasetError(f"speaker '{label}' has no role; speakers seen: {', '.join(seen)}", file=file, line=line,
                        field=column, hint=SPEAKER_MAP_HINT)
