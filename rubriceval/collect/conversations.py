"""Collect whole conversations from the bot under test: scripted user turns, or a user simulated by the judge.

    summary = await collect_conversations("scripts.yaml", "examples.rag_target.bot:answer", "convs.jsonl",
                                          judge=judge_client)    # the judge only plays simulated users

Each user message is sent with the conversation so far (`TargetRunner.ask(..., history=…, conversation_id=…)`);
the reply's contexts go on its assistant turn, its tool calls too (a call's reported `result` becomes a tool turn
between the call and the answer, as OpenAI and Ragas transcripts have it). A conversation ends when the script's
turns are used up, when the simulated user says its stop condition is met, or after `max_turns` user messages.

Output: the conversation JSONL format (`rubriceval.data.conversation`), one line per conversation, with
metadata.kind (scripted | simulated), .script (a hash of the script entry), .target, .error (None on success),
.stop_reason, .attempts, .latency_s and .turn_latency_s. Resumable like question collection: each finished
conversation is appended and fsynced; a rerun skips conversations finished without error for the same script
entry and redoes the others from their first turn (a conversation cut off mid-way cannot be continued: the bot's
own session state is gone). A conversation that fails keeps the turns it got, with an empty assistant turn where
the bot gave no reply, and says why in metadata.error; it is never dropped.
"""
from __future__ import annotations

from collections.abc import Awaitable
from pathlib import Path
from typing import Any

from rubriceval.collect.resumable import Collection, CollectSummary, collect_resumably
from rubriceval.collect.retry import ask_with_retries
from rubriceval.collect.scripts import ConversationScript, load_scripts
from rubriceval.collect.simulated_user import SimulationFailed, next_move
from rubriceval.collect.targets import AnyTarget, TargetReply, TargetRunner, open_target
from rubriceval.common.errors import ConfigError, DatasetError
from rubriceval.data.conversation import Conversation, ToolCall, Turn


class _Transcript:
    """The turns of one conversation as they are collected, and the history the bot is sent."""

    def __init__(self) -> None:
        self.turns: list[Turn] = []
        self.history: list[dict[str, str]] = []

    @property
    def user_messages(self) -> int:
        return sum(t.role == "user" for t in self.turns)

    def add_user(self, text: str) -> None:
        self.turns.append(Turn(role="user", content=text))

    def add_reply(self, reply: TargetReply, user_text: str) -> None:
        number = len(self.turns) + 1
        calls = [ToolCall(name=c.name, arguments=c.arguments, id=c.id or f"call_{number}_{i}")
                 for i, c in enumerate(reply.tool_calls, start=1)]
        results = [(call, c.result) for call, c in zip(calls, reply.tool_calls) if c.result is not None]
        if results:
            self.turns.append(Turn(role="assistant", content="", tool_calls=calls))
            self.turns += [Turn(role="tool", content=result, tool_call_id=call.id) for call, result in results]
            calls = []
        self.turns.append(Turn(role="assistant", content=reply.answer, contexts=reply.contexts, tool_calls=calls))
        self.history += [{"role": "user", "content": user_text}, {"role": "assistant", "content": reply.answer}]

    def add_no_reply(self) -> None:
        self.turns.append(Turn(role="assistant", content=""))


class _Settings:
    def __init__(self, runner: TargetRunner, judge: Any, timeout_s: float, retries: int, backoff_s: float):
        self.runner, self.judge = runner, judge
        self.timeout_s, self.retries, self.backoff_s = timeout_s, retries, backoff_s


async def _next_user_message(script: ConversationScript, transcript: _Transcript,
                             settings: _Settings) -> tuple[str | None, str]:
    """(the next user message, or None and why the conversation ends)."""
    sent = transcript.user_messages
    if script.simulated_user is None:
        if sent >= len(script.user_turns):
            return None, "script finished"
        return script.user_turns[sent], ""
    user = script.simulated_user
    if sent >= user.max_turns:
        return None, f"max_turns ({user.max_turns}) reached"
    if sent == 0 and user.first_message:
        return user.first_message, ""
    move, _usage = await next_move(settings.judge, user, transcript.turns)
    if move.stop:
        return None, f"simulated user stopped: {move.reason}"
    return move.message, ""


async def _converse(script: ConversationScript, settings: _Settings) -> Conversation:
    transcript = _Transcript()
    error: str | None = None
    stop_reason = ""
    attempts = 0
    latencies: list[float] = []
    while True:
        try:
            message, stop_reason = await _next_user_message(script, transcript, settings)
        except SimulationFailed as exc:
            error, stop_reason = f"simulated user: {exc}", "error"
            break
        if message is None:
            break
        transcript.add_user(message)
        number = len(transcript.turns)

        def send(message: str = message, number: int = number) -> Awaitable[TargetReply]:
            return settings.runner.ask(message, f"{script.id}#{number}", history=list(transcript.history),
                                       conversation_id=script.id)

        done = await ask_with_retries(
            send, timeout_s=settings.timeout_s, retries=settings.retries, backoff_s=settings.backoff_s)
        attempts += done.attempts
        latencies.append(round(done.latency_s, 3))
        if done.reply is None:
            transcript.add_no_reply()
            error, stop_reason = f"turn {number + 1}: {done.error}", "error"
            break
        transcript.add_reply(done.reply, message)
    if not any(t.role == "assistant" for t in transcript.turns):
        transcript.add_no_reply()          # a conversation needs a bot turn; this one failed before any
    metadata = {**script.metadata, "kind": script.kind, "script": script.fingerprint(),
                "target": settings.runner.description, "error": error, "stop_reason": stop_reason,
                "attempts": attempts, "latency_s": round(sum(latencies), 3), "turn_latency_s": latencies}
    return script.conversation(transcript.turns, metadata)


def _is_done(previous: Conversation | None, script: ConversationScript) -> bool:
    return (previous is not None and previous.metadata.get("script") == script.fingerprint()
            and not previous.metadata.get("error"))


def _record(conversation: Conversation) -> dict[str, Any]:
    return conversation.model_dump(mode="json", exclude_none=True)


async def collect_conversations(script_path: str | Path, target: AnyTarget, out_path: str | Path, *,
                                judge: Any = None, concurrency: int = 4, timeout_s: float = 60.0, retries: int = 2,
                                progress: bool = True, backoff_s: float = 0.5) -> CollectSummary:
    """Run every conversation of `script_path` (see rubriceval.collect.scripts) against `target` into `out_path`
    (JSONL). `judge` plays the simulated users (required when the script has any). Conversations run
    `concurrency` at a time, their turns in order; each bot call is limited to `timeout_s` and retried `retries`
    times. Re-running with the same output resumes."""
    out = Path(out_path)
    if out.suffix.lower() not in (".jsonl", ".ndjson"):
        raise DatasetError("collect writes JSONL so it can save after every conversation", file=str(out),
                           hint="use a .jsonl output")
    scripts = load_scripts(script_path)
    if judge is None and any(s.simulated_user for s in scripts):
        raise ConfigError("simulated users are played by the judge model; none is configured", field="judge",
                          hint="give --config / --judge-base-url, or script the user turns")
    runner = open_target(target)
    settings = _Settings(runner, judge, timeout_s, retries, backoff_s)
    job = Collection(out=out, items=scripts, parse=Conversation.model_validate, is_done=_is_done,
                     work=lambda script: _converse(script, settings), record=_record, unit="conversations")
    return await collect_resumably(job, runner, owns_runner=not isinstance(target, TargetRunner),
                                   concurrency=concurrency, progress=progress)


async def collect_conversations_with_judge(judge_config: Any, script_path: str | Path, target: AnyTarget,
                                           out_path: str | Path, **options: Any) -> CollectSummary:
    """`collect_conversations` with the judge built from `judge_config` (a JudgeConfig) — only when the script has
    simulated users, so a scripted collection starts no judge — and closed afterwards. For the CLI."""
    if not any(s.simulated_user for s in load_scripts(script_path)):
        return await collect_conversations(script_path, target, out_path, **options)
    from rubriceval.local.backends import make_judge  # the embedded judge is only started when a user is simulated

    judge = make_judge(judge_config)
    try:
        return await collect_conversations(script_path, target, out_path, judge=judge, **options)
    finally:
        await judge.close()
