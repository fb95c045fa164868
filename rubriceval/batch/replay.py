"""The judge a batch run's scorers talk to: it answers from the replies the batches brought back.

Verdicts of a batch run are made by the very scorers of an online run (rubric scorer, self-consistency, the
standard metrics…), through the one judge path (`rubriceval.judge.ask`): only the judge differs. `BatchJudge` is a
`JudgeClient` whose `complete` looks the call up by its judge-cache key — the key the online call has — among the
run's collected replies (then in the judge cache), and reads a reply with the online client's own
`read_completion`. A call with no reply yet is recorded as wanted (with the exact body the online client would
post) and the scorer is stopped there (`BatchPending`): its unit waits for the next round. So a second step
(context verdicts after statement extraction) or a re-ask after an unreadable reply is planned from the previous
round's results by the scorers themselves, exactly as they would ask it online.

With `online=` (`batch collect --finish-online`) a call with no reply is made online instead, through the given
client (same settings, same cache). A panel's run has one BatchJudge per panel judge (its own settings, and its
own online client: the judges may sit at different providers), all answered from the same book.
"""
from __future__ import annotations

import copy
from contextvars import ContextVar

from pydantic import BaseModel

from rubriceval.judge.cache import CallCache
from rubriceval.judge.client import CallStats, JudgeClient, JudgeResponse, chat_body, read_completion
from rubriceval.judge.config import JudgeConfig
from rubriceval.judge.options import CallOptions
from rubriceval.store.batches import BatchStore

# The (sample id, scorer) whose verdict is being made; set around each unit, read when a call is wanted.
CURRENT_UNIT: ContextVar[tuple[str, str]] = ContextVar("batch_unit", default=("", ""))


class BatchPending(Exception):
    """A judge call of this unit has no reply yet: the unit is finished in a later round."""


class WantedCall(BaseModel):
    key: str
    sample_id: str
    scorer: str
    item: str
    seed: int | None
    body: dict
    judge: str = ""                  # the panel judge asking (its endpoint gets the request); "" the run's judge


def stored_reply(raw: dict, config: JudgeConfig, body_schema: dict | None, options: CallOptions | None
                 ) -> JudgeResponse:
    """A stored batch result → the JudgeResponse the online call would have given for the same completion."""
    if "completion" not in raw:
        return JudgeResponse(error=raw.get("error") or "no reply", error_kind=raw.get("error_kind") or "provider_error")
    try:
        return read_completion(config, raw["completion"], body_schema, options, config.batch_prices())
    except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
        return JudgeResponse(error=f"malformed response: {exc}", error_kind="provider_error")


def item_of(cache_tag: str, schema_name: str, scorer: str) -> str:
    """A readable item name for a custom_id: the rubric item in a rubric's tag (rubric/item/version), else the call."""
    parts = cache_tag.split("/")
    return parts[1] if len(parts) >= 3 and parts[0] == scorer else schema_name


class ReplayBook:
    """What one replay pass shares: the run's replies, the calls still wanted, cache writes made on the way."""

    def __init__(self, batches: BatchStore, run_id: str, cache: CallCache | None, online: JudgeClient | None = None):
        self.batches = batches
        self.run_id = run_id
        self.cache = cache
        self.online = online
        self.wanted: dict[str, WantedCall] = {}
        self._cache_writes: list[tuple[str, dict]] = []

    def remember(self, key: str, response: JudgeResponse) -> None:
        """A readable reply goes into the judge cache (written a window at a time), as an online reply would."""
        if self.cache is not None and response.ok:
            self._cache_writes.append((key, response.model_dump(exclude={"cached", "attempts"})))

    def flush_cache(self) -> None:
        if self.cache is not None and self._cache_writes:
            self.cache.put_many(self._cache_writes)
        self._cache_writes = []


class BatchJudge(JudgeClient):
    """A JudgeClient answered from a batch run's collected replies; see the module docstring."""

    def __init__(self, config: JudgeConfig, book: ReplayBook, stats: CallStats | None = None, *, judge: str = "",
                 online: JudgeClient | None = None):
        """judge: the panel judge this is ("" the run's judge); online: the client that makes its calls without a
        reply online (--finish-online; default the book's)."""
        super().__init__(config, base_url=_no_connection, cache=book.cache, stats=stats)
        self.book = book
        self.judge = judge
        self.online = online if online is not None else book.online

    async def complete(self, messages: list[dict], *, json_schema: dict | None = None, schema_name: str = "verdict",
                       cache_tag: str = "", use_cache: bool = True,
                       options: CallOptions | None = None) -> JudgeResponse:
        book = self.book
        key = self.key_for(messages, json_schema, cache_tag, options)
        raw = book.batches.reply_for(book.run_id, key)
        if raw is not None:
            self.stats.requests += 1
            body, body_schema = chat_body(self.config, messages, json_schema, schema_name, options)
            response = stored_reply(raw, self.config, body_schema, options)
            self.stats.calls += 1
            self.stats.prompt_tokens += response.prompt_tokens
            self.stats.completion_tokens += response.completion_tokens
            self.stats.cost_usd += response.cost_usd
            book.remember(key, response)
            return response
        if self.cache is not None and use_cache and key in self.cache:
            return await super().complete(messages, json_schema=json_schema, schema_name=schema_name,
                                          cache_tag=cache_tag, use_cache=use_cache,
                                          **({"options": options} if options is not None else {}))
        if self.online is not None:
            variant = copy.copy(self.online)        # shares connection, cache and counters; this call's settings
            variant.config = self.config
            return await variant.complete(messages, json_schema=json_schema, schema_name=schema_name,
                                          cache_tag=cache_tag, use_cache=use_cache,
                                          **({"options": options} if options is not None else {}))
        if key not in book.wanted:
            sample_id, scorer = CURRENT_UNIT.get()
            body, _ = chat_body(self.config, messages, json_schema, schema_name, options)
            book.wanted[key] = WantedCall(key=key, sample_id=sample_id, scorer=scorer,
                                          item=item_of(cache_tag, schema_name, scorer), seed=self.config.seed,
                                          body=body, judge=self.judge)
        raise BatchPending(key)


def _no_connection() -> str:
    raise RuntimeError("a batch replay judge makes no online call (use --finish-online)")
