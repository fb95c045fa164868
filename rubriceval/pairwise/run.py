"""Run a pairwise comparison: load the versions (dataset files or stored runs), pair their samples by id, judge
every (pair of versions, sample, rubric judge item) in both orders, and store each verdict as soon as it exists.

Which samples pair: those with the same id in both versions and the same question (a different question is not
the same test; it is left out with a note). Which rubrics: those with a judge item that apply to the sample
(`applies_to`, read on the earlier version's sample); conversation rubrics and checks-only rubrics are left out with
a note (deterministic checks need no A/B: compare their runs). With three or more versions every pair is judged,
so the Bradley–Terry ranking has a full round robin.
"""
from __future__ import annotations

import asyncio
import re
import sys
import time
from collections import Counter
from itertools import combinations
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from tqdm import tqdm

from rubriceval.common.errors import RubricEvalError
from rubriceval.core.totals import RunTotals
from rubriceval.data.io import read_dataset
from rubriceval.data.sample import Sample
from rubriceval.judge.config import JudgeConfig
from rubriceval.pairwise.judge import judge_pair
from rubriceval.pairwise.models import PairwiseVerdict, Version
from rubriceval.pairwise.store import PairwiseConfig, PairwiseStore
from rubriceval.rubric.applies import applies
from rubriceval.rubric.schema import JudgeItem, Rubric
from rubriceval.store.runs import RunStore


class Unit(BaseModel):
    """One pairwise judgement to make."""

    rubric: Rubric
    item: JudgeItem
    scorer: str
    version_a: str
    version_b: str
    sample_a: Sample
    sample_b: Sample

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.sample_a.id, self.scorer, self.version_a, self.version_b)


def _label(text: str) -> str:
    return re.sub(r"[\s:]+", "_", text.strip()) or "version"


def load_versions(sources: list[str], store_path: str | Path, labels: list[str] | None = None
                  ) -> list[tuple[Version, list[Sample]]]:
    """Each source is a dataset file (when the path exists) or a run id/name in the store."""
    if len(sources) < 2:
        raise RubricEvalError("pairwise needs at least two versions (datasets or runs)", field="versions")
    if labels is not None and len(labels) != len(sources):
        raise RubricEvalError(f"{len(labels)} label(s) for {len(sources)} version(s)", field="labels")
    loaded: list[tuple[Version, list[Sample]]] = []
    for index, source in enumerate(sources):
        if Path(source).exists():
            samples = read_dataset(source)
            version = Version(label=_label(Path(source).stem), kind="dataset", source=str(source))
        else:
            runs = RunStore(store_path)
            try:
                run_id = runs.resolve(source)
            except RubricEvalError:
                raise RubricEvalError(f"'{source}' is neither a dataset file nor a run in {store_path}",
                                      field="versions", hint="`rubriceval runs` lists the stored runs") from None
            info = runs.run_info(run_id)
            samples = runs.samples(run_id)
            version = Version(label=_label(info.name), kind="run", source=info.name, run_id=run_id)
        if labels is not None:
            version.label = _label(labels[index])
        version.n_samples = len(samples)
        loaded.append((version, samples))
    seen: Counter = Counter()
    for version, _ in loaded:                      # the same file twice, or two runs named alike
        seen[version.label] += 1
        if seen[version.label] > 1:
            version.label = f"{version.label}-{seen[version.label]}"
    return loaded


def plan_units(versions: list[tuple[Version, list[Sample]]], rubrics: list[Rubric]) -> tuple[list[Unit], list[str]]:
    """Every judgement the comparison needs, and notes on what was left out."""
    notes = []
    usable = []
    for rubric in rubrics:
        if rubric.is_conversation:
            notes.append(f"rubric '{rubric.id}' judges conversations: pairwise A/B covers single answers; left out")
        elif not rubric.judge_items:
            notes.append(f"rubric '{rubric.id}' has no judge item (checks only): left out")
        else:
            usable.append(rubric)
    units: list[Unit] = []
    for (va, samples_a), (vb, samples_b) in combinations(versions, 2):
        by_id_b = {s.id: s for s in samples_b}
        shared = [s for s in samples_a if s.id in by_id_b]
        differ = [s.id for s in shared if s.question.strip() != by_id_b[s.id].question.strip()]
        if differ:
            notes.append(f"{va.label} vs {vb.label}: {len(differ)} sample(s) share an id but not the question, left "
                         f"out (e.g. {differ[0]})")
        if len(shared) < len(samples_a) or len(shared) < len(samples_b):
            notes.append(f"{va.label} vs {vb.label}: {len(shared)} shared sample id(s) ({len(samples_a)} in "
                         f"{va.label}, {len(samples_b)} in {vb.label})")
        for sample_a in shared:
            if sample_a.id in differ:
                continue
            for rubric in usable:
                if not applies(rubric, sample_a):
                    continue
                for item in rubric.judge_items:
                    scorer = rubric.id if len(rubric.judge_items) == 1 else f"{rubric.id}/{item.id}"
                    units.append(Unit(rubric=rubric, item=item, scorer=scorer, version_a=va.label,
                                      version_b=vb.label, sample_a=sample_a, sample_b=by_id_b[sample_a.id]))
    return units, notes


async def judge_units(store: PairwiseStore, comparison_id: str, units: list[Unit], judge: Any, *,
                      progress: bool = True) -> RunTotals:
    """Judge the units not yet stored, saving each verdict when it exists."""
    started = time.perf_counter()
    done = store.done_keys(comparison_id)
    todo = [u for u in units if u.key not in done]
    totals = RunTotals(units_total=len(units), units_skipped=len(units) - len(todo))
    bar = tqdm(total=len(units), initial=totals.units_skipped, unit="pair", disable=not progress,
               desc="pairwise", dynamic_ncols=True)
    # Bound judgements in flight (each is two calls); the judge client bounds the calls themselves.
    limit = asyncio.Semaphore(max(2, judge.config.concurrency))

    async def one(unit: Unit) -> None:
        async with limit:
            verdict: PairwiseVerdict = await judge_pair(unit.rubric, unit.item, unit.sample_a, unit.sample_b, judge,
                                                        scorer=unit.scorer, version_a=unit.version_a,
                                                        version_b=unit.version_b)
        store.save(comparison_id, verdict)
        totals.count(verdict.scored, verdict.unscored_kind)
        bar.update()

    try:
        await asyncio.gather(*(one(u) for u in todo))
    finally:
        bar.close()
        totals.wall_s = time.perf_counter() - started
        totals.judge = judge.stats.as_dict()
    return totals


async def run_pairwise(sources: list[str], rubrics: list[Rubric] | None, *, store_path: str | Path,
                       judge_config: JudgeConfig, name: str | None = None, labels: list[str] | None = None,
                       rubrics_path: str = "", progress: bool = True, resume: str | None = None,
                       judge: Any = None) -> tuple[str, RunTotals]:
    """Create (or resume) a comparison and judge it; `judge` replaces the client built from `judge_config`
    (tests). Without `rubrics`, the rubrics of the first version that is a run are used."""
    from rubriceval.local.backends import make_judge, public_judge_config
    from rubriceval.store.runs import rubrics_from_run

    store = PairwiseStore(store_path)
    if resume:
        info = store.info(resume)
        comparison_id = info.comparison_id
        rubrics = [Rubric.model_validate(r) for r in info.config.rubric_definitions]
        loaded = load_versions([v.source for v in info.versions], store_path, [v.label for v in info.versions])
    else:
        loaded = load_versions(sources, store_path, labels)
        if rubrics is None:
            run = next((v for v, _ in loaded if v.run_id), None)
            if run is None:
                raise RubricEvalError("no rubrics to compare by", field="rubrics",
                                      hint="pass --rubrics DIR (or compare runs, whose rubrics are stored)")
            rubrics, _ = rubrics_from_run(RunStore(store_path), run.run_id)  # type: ignore[arg-type]
        # An A/B preference is one holistic judgment per judge item: a checklist's yes/no questions and level rule
        # score a single answer. The mode is set through the one rule (rubriceval/scoring/judge_mode.py).
        from rubriceval.scoring.judge_mode import with_judge_mode

        model = (judge.config if judge is not None else judge_config).model
        rubrics, _ = with_judge_mode(rubrics, "holistic", judge_models=[model])
        config = PairwiseConfig(rubrics={r.id: r.version_tag for r in rubrics},
                                rubric_definitions=[r.model_dump(mode="json") for r in rubrics],
                                judge=public_judge_config(judge_config), rubrics_path=rubrics_path)
        comparison_id = store.create([v for v, _ in loaded], config, name=name)
    units, notes = plan_units(loaded, rubrics)
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    if not units:
        store.set_status(comparison_id, "complete", {"notes": notes})
        raise RubricEvalError("nothing to compare: no shared sample has a rubric with a judge item that applies",
                              hint="check the sample ids of the versions and the rubrics' applies_to")
    client = judge or make_judge(judge_config)
    store.set_status(comparison_id, "running")
    status, totals = "interrupted", None
    try:
        totals = await judge_units(store, comparison_id, units, client, progress=progress)
        status = "complete"
    finally:
        store.set_status(comparison_id, status, {**(totals.as_dict() if totals else {}), "notes": notes})
        if judge is None:
            await client.close()
        store.close()
    return comparison_id, totals
