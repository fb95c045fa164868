"""What goes into a round's request files: the first round from the dry-run planner, later rounds from the calls
the scorers still want (rubriceval/batch/replay.py). Either way each request is (RequestRow, body), the body built
by the online client's `chat_body`, and nothing the judge cache already answers or this run already asked.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any, NamedTuple

from rubriceval.batch.endpoints import RUN_JUDGE, RunJudges
from rubriceval.batch.files import safe_part
from rubriceval.batch.replay import WantedCall
from rubriceval.data.sample import Sample
from rubriceval.judge.cache import CallCache
from rubriceval.judge.client import chat_body
from rubriceval.judge.config import JudgeConfig
from rubriceval.rubric.schema import Rubric
from rubriceval.run.planning import planned_judge_calls
from rubriceval.store.batches import RequestRow


class CustomIds:
    """custom_id = run/sample/scorer/item/seed/round, unique within the run (a repeat in a round gets #n); a panel
    judge's request says which judge after the item: run/sample/scorer/item/j<n>-<judge>/seed/round (n: the judge's
    place in the panel, so two names that read alike in an id stay apart)."""

    def __init__(self, run_id: str, round_no: int):
        self.run_id = run_id
        self.round_no = round_no
        self._taken: dict[str, int] = {}

    def __call__(self, sample_id: str, scorer: str, item: str, seed: int | None, judge_tag: str = "") -> str:
        """judge_tag: `RunJudges.id_tag` of a panel judge ("" for the run's judge)."""
        judge_part = [f"j{judge_tag}"] if judge_tag else []
        base = "/".join([self.run_id, safe_part(sample_id), safe_part(scorer), safe_part(item), *judge_part,
                         f"s{seed}", f"r{self.round_no}"])
        n = self._taken.get(base, 0)
        self._taken[base] = n + 1
        return base if n == 0 else f"{base}#{n}"

    @staticmethod
    def judge_part(custom_id: str) -> str | None:
        """The panel judge's tag (`RunJudges.id_tag`) a custom_id holds, None for the run's judge."""
        parts = custom_id.split("/")
        return parts[4][1:] if len(parts) == 7 and parts[4].startswith("j") else None


class PlannedRequest(NamedTuple):
    """A request for a round's files: for which endpoint (rubriceval/batch/endpoints.py), its row and its body."""

    endpoint: str
    row: RequestRow
    body: dict


def first_round(windows: Iterable[list[Sample]], rubrics: list[Rubric], metrics: list[str], config: JudgeConfig,
                cache: CallCache | None, ids: CustomIds, judges: RunJudges | None = None, scorecards: Any = (),
                metric_options: Any = None) -> Iterator[PlannedRequest]:
    """The planner's calls that can be asked now, a window of samples at a time: exact (a second step waits for
    its first step's answer), not in the judge cache, each distinct call once. `judges`: a panel's run plans every
    panel judge's rubric calls (the planner's own panel planning) and says whose each call is. `scorecards`: the
    run's scorecards, their questions planned as the dry run plans them (an item behind an `applies_when.question`
    is asked too: one round, not two). `metric_options`: the run's (its extraction/context-call cut), as the dry run
    and the replay read them."""
    judges = judges or RunJudges(config)
    seen: set[str] = set()
    for samples in windows:
        for call in planned_judge_calls(samples, rubrics, metrics, config, cache=cache, panel=judges.panel,
                                        scorecards=scorecards, metric_options=metric_options):
            if not call.exact:
                continue
            key = call.key()
            if key in seen or (cache is not None and key in cache):
                continue
            seen.add(key)
            judge = judges.judge_of(call.kind, call.config)
            body, _ = chat_body(call.config, call.messages, call.json_schema, call.schema_name, call.options)
            yield PlannedRequest(judges.endpoint_of(judge), RequestRow(
                custom_id=ids(call.sample_id, call.scorer, call.item, call.config.seed, judges.id_tag(judge)), key=key,
                sample_id=call.sample_id, scorer=call.scorer, item=call.item, seed=call.config.seed), body)


def wanted_requests(wanted: Iterable, ids: CustomIds, judges: RunJudges) -> Iterator[PlannedRequest]:
    """Rows for the calls a replay pass found still wanted (`replay.WantedCall`), each to its judge's endpoint."""
    for call in wanted:
        yield PlannedRequest(judges.endpoint_of(call.judge), RequestRow(
            custom_id=ids(call.sample_id, call.scorer, call.item, call.seed, judges.id_tag(call.judge)), key=call.key,
            sample_id=call.sample_id, scorer=call.scorer, item=call.item, seed=call.seed), call.body)


def prices_by_custom_id(judges: RunJudges) -> Callable[[str], tuple[float, float]]:
    """custom_id → the batch price of the judge it names (an offline output file of a panel's run may hold any
    judge's lines)."""
    by_part = {judges.id_tag(name): config.batch_prices() for name, config in judges.configs.items()
               if name != RUN_JUDGE}
    default = judges.configs.get(RUN_JUDGE, next(iter(judges.configs.values()))).batch_prices()

    def prices(custom_id: str) -> tuple[float, float]:
        return by_part.get(CustomIds.judge_part(custom_id) or "", default)
    return prices


def unit_calls_without_reply(sample: Sample, rubric: Rubric | None, config: JudgeConfig, judges: RunJudges,
                             answered: Callable[[str], bool], scorecard: Any = None) -> Iterator[WantedCall]:
    """Every planned call of one (sample, rubric) — or (sample, scorecard) — with no reply yet (`answered(key)`
    False), as wanted calls. A scorer that asks one call after another (a checklist's questions, a scorecard's)
    stops at the first without a reply; its other missing calls are asked in the same next round instead of one
    round each."""
    for call in planned_judge_calls([sample], [rubric] if rubric is not None else [], [], config, panel=judges.panel,
                                    scorecards=[scorecard] if scorecard is not None else []):
        key = call.key()
        if not call.exact or answered(key):
            continue
        body, _ = chat_body(call.config, call.messages, call.json_schema, call.schema_name, call.options)
        yield WantedCall(key=key, sample_id=call.sample_id, scorer=call.scorer, item=call.item,
                         seed=call.config.seed, body=body, judge=judges.judge_of(call.kind, call.config))
