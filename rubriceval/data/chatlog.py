"""Import a flat chat-log export (CSV / Excel / JSONL, one row per message) as conversations.

Rows carry a conversation id, a turn index or a timestamp, a speaker and the text. Column names default to common
English/Chinese headers (会话ID, 序号, 时间, 发言人, 内容 …) and can be set in a dataset config YAML; speakers map to
roles through `--speaker-map "客服=assistant,机器人=assistant,用户=user"` or `speakers:` in that config. A speaker with
no role is an error naming file:line [speaker] and every speaker seen, never a guess.

A dataset config (`rubriceval run chats.yaml`):

    file: export.xlsx            # relative to this YAML
    columns: {conversation_id: 会话ID, turn_index: 序号, speaker: 发言人, text: 内容}
    speakers: {客服: assistant, 机器人: assistant, 用户: user}
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rubriceval.data.conversation import ROLES, Conversation, Role, Turn, TurnProblem
from rubriceval.data.io import _read_records
from rubriceval.common.errors import DatasetError

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
REQUIRED = ("conversation_id", "speaker", "text")
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


class ChatLogConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    file: str | None = None
    columns: ChatLogColumns = Field(default_factory=ChatLogColumns)
    # Speaker label → role. The role names themselves (user, assistant, …) always map to themselves.
    speakers: dict[str, Role] = Field(default_factory=dict)


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
        if role not in ROLES:
            raise DatasetError(f"'{role}' is not a role (speaker '{speaker.strip()}')", field="--speaker-map",
                               hint=f"roles: {', '.join(ROLES)}")
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


def _header(records: list[tuple[int, dict[str, Any]]]) -> list[str]:
    return list(records[0][1]) if records else []


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


def looks_like_chatlog(records: list[tuple[int, dict[str, Any]]]) -> bool:
    """One row per message under the default headers (and not a question/answer dataset)."""
    header = _header(records)
    if any(h in header for h in ("question", "user_input", "turns", "messages")):
        return False
    return all(any(h in header for h in DEFAULT_COLUMNS[n]) for n in REQUIRED)


def _cell(record: dict[str, Any], column: str | None) -> str:
    value = record.get(column) if column else None
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


def _role_of(speakers: dict[str, str], records, cols: dict[str, str], file: str) -> dict[str, str]:
    mapping = {role: role for role in ROLES} | speakers
    seen: list[str] = []
    for _, record in records:
        label = _cell(record, cols["speaker"])
        if label not in seen:
            seen.append(label)
    for line, record in records:
        label = _cell(record, cols["speaker"])
        if label not in mapping:
            raise DatasetError(f"speaker '{label}' has no role; speakers seen: {', '.join(seen)}", file=file,
                               line=line, field=cols["speaker"], hint=SPEAKER_MAP_HINT)
    return mapping


def _build(conversation_id: str, rows: list[tuple[int, dict[str, Any]]], cols: dict[str, str],
           roles: dict[str, str], file: str) -> Conversation:
    turns = []
    for line, record in rows:
        label = _cell(record, cols["speaker"])
        turns.append(Turn(role=roles[label], speaker=label, content=_cell(record, cols["text"]),
                          contexts=_contexts(_cell(record, cols.get("contexts")), file, line, cols.get("contexts", "")),
                          index=_index(_cell(record, cols.get("turn_index")), file, line, cols.get("turn_index", "")),
                          timestamp=_cell(record, cols.get("timestamp")) or None))
    first = rows[0][1]
    try:
        return Conversation(id=conversation_id, turns=turns, tags=_cell(first, cols.get("tags")),
                            intent=_cell(first, cols.get("intent")))
    except ValidationError as exc:
        problem = (exc.errors()[0].get("ctx") or {}).get("error")
        if not isinstance(problem, TurnProblem):
            raise DatasetError(exc.errors()[0]["msg"], file=file, line=rows[0][0]) from None
        line = rows[problem.turn - 1][0] if problem.turn else rows[0][0]
        column = {"index": cols.get("turn_index"), "timestamp": cols.get("timestamp")}.get(
            problem.field.rsplit(".", 1)[-1], cols["speaker"])
        message = str(problem) if problem.turn else f"conversation '{conversation_id}': {problem}"
        raise DatasetError(message, file=file, line=line, field=column,
                           hint="sort the export by conversation and turn" if "out of order" in message else None
                           ) from None


def read_chatlog(path: str | Path, config: ChatLogConfig | None = None, *,
                 records: list[tuple[int, dict[str, Any]]] | None = None) -> list[Conversation]:
    """Group an export's rows into conversations (in order of first appearance). `path` may be the export itself
    or a dataset config YAML naming it; a config given here (e.g. from --speaker-map) adds to the YAML's."""
    path = Path(path)
    config = config or ChatLogConfig()
    if path.suffix.lower() in (".yaml", ".yml"):
        from_file = load_chatlog_config(path)
        config = ChatLogConfig(file=from_file.file,
                               columns=from_file.columns.model_copy(update=config.columns.model_dump(exclude_none=True)),
                               speakers={**from_file.speakers, **config.speakers})
        path = path.parent / from_file.file
    file = str(path)
    if records is None:
        records = _read_records(path)
    if not records:
        raise DatasetError("the chat log has no rows", file=file)
    cols = _resolve_columns(_header(records), config.columns, file)
    roles = _role_of(config.speakers, records, cols, file)
    grouped: dict[str, list[tuple[int, dict[str, Any]]]] = {}
    for line, record in records:
        conversation_id = _cell(record, cols["conversation_id"])
        if not conversation_id:
            raise DatasetError("empty conversation id", file=file, line=line, field=cols["conversation_id"])
        grouped.setdefault(conversation_id, []).append((line, record))
    return [_build(cid, rows, cols, roles, file) for cid, rows in grouped.items()]
