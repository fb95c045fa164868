"""What goes into a round's request files: the first round from the dry-run planner, later rounds from the calls
the scorers still want (rubriceval/batch/replay.py). Either way each request is (RequestRow, body), the body built
by the online client's `chat_body`, and nothing the judge cache already answers or this run already asked.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from rubriceval.data.sample import Sample
from rubriceval.judge.cache import CallCache
from rubriceval.judge.client import chat_body
from rubriceval.judge.config import JudgeConfig
from rubriceval.planning import planned_judge_calls
from rubriceval.rubric.schema import Rubric
from rubriceval.store.batches import RequestRow

_UNSAFE = re.compile(r"[^\w.\-]+")
MAX_PART = 48


def _part(text: object) -> str:
    return _UNSAFE.sub("_", str(text))[:MAX_PART] or "_"


class CustomIds:
    """custom_id = run/sample/scorer/item/seed/round, unique within the run (a repeat in a round gets #n)."""

    def __init__(self, run_id: str, round_no: int):
        self.run_id = run_id
        self.round_no = round_no
        self._taken: dict[str, int] = {}

    def __call__(self, sample_id: str, scorer: str, item: str, seed: int | None) -> str:
        base = "/".join([self.run_id, _part(sample_id), _part(scorer), _part(item), f"s{seed}", f"r{self.round_no}"])
        n = self._taken.get(base, 0)
        self._taken[base] = n + 1
        return base if n == 0 else f"{base}#{n}"


def first_round(windows: Iterable[list[Sample]], rubrics: list[Rubric], metrics: list[str], config: JudgeConfig,
                cache: CallCache | None, ids: CustomIds) -> Iterator[tuple[RequestRow, dict]]:
    """The planner's calls that can be asked now, a window of samples at a time: exact (a second step waits for
    its first step's answer), not in the judge cache, each distinct call once."""
    seen: set[str] = set()
    for samples in windows:
        for call in planned_judge_calls(samples, rubrics, metrics, config, cache=cache):
            if not call.exact:
                continue
            key = call.key()
            if key in seen or (cache is not None and key in cache):
                continue
            seen.add(key)
            body, _ = chat_body(call.config, call.messages, call.json_schema, call.schema_name, call.options)
            yield RequestRow(custom_id=ids(call.sample_id, call.scorer, call.item, call.config.seed), key=key,
                             sample_id=call.sample_id, scorer=call.scorer, item=call.item,
                             seed=call.config.seed), body


def wanted_requests(wanted: Iterable, ids: CustomIds) -> Iterator[tuple[RequestRow, dict]]:
    """Rows for the calls a replay pass found still wanted (`replay.WantedCall`)."""
    for call in wanted:
        yield RequestRow(custom_id=ids(call.sample_id, call.scorer, call.item, call.seed), key=call.key,
                         sample_id=call.sample_id, scorer=call.scorer, item=call.item, seed=call.seed), call.body
