"""The labelled Chinese customer-service set (`datasets/labelled/cs_zh_labels.jsonl`) as a judge benchmark, per
judge mode: how far each shipped rubric's score agrees with labels fixed from its own level descriptions.

Modes and options (each measured on the same rows with the same judge):
  holistic            one 1–5 judgment per row (`few_shot`: the rubric's examples all / one per level / none;
                      `shuffle_levels`: level descriptions in a seeded per-row order)
  checklist           yes/no questions per row, the rubric's declared level rule
  checklist_fitted    the same answers (cached: no extra calls), levels from an ordinal model fitted per rubric
                      on the other fold (2-fold, stratified by label) — every row is predicted by a model that
                      never saw it; the rule's κ on the same rows is reported beside it

Run: `rubriceval benchmark-judge cs_zh --judge-mode checklist --out out/bench_cs_checklist.json`.
"""
from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from benchmarks.judge.judge import judge_records, partial_path, verdict_p_yes, verdict_score_probs
from benchmarks.judge.partial import PartialFile, partial_header
from rubriceval.common.errors import DatasetError
from rubriceval.core.verdict import Usage, Verdict
from rubriceval.data.io import read_dataset
from rubriceval.data.sample import Sample
from rubriceval.judge.config import JudgeConfig
from rubriceval.rubric.applies import applies
from rubriceval.rubric.loader import load_rubrics
from rubriceval.rubric.schema import FewShot, FittedWeights, JudgeMode, Rubric
from rubriceval.scoring.judge_mode import with_judge_mode
from rubriceval.stats.agreement import AgreementReport, agreement_report
from rubriceval.trust.fit_weights import cross_fitted_levels, fit_ordinal

DEFAULT_DATA = Path("datasets/labelled/cs_zh_labels.jsonl")
DEFAULT_RUBRICS = Path("rubrics")


class CsRow(BaseModel):
    id: str
    rubric_id: str
    label: int
    judge_score: float | None
    unscored_reason: str | None = None
    unscored_kind: str | None = None      # why unscored, counted in the result's unscored_kinds (None when scored)
    p_yes: dict[str, float] = Field(default_factory=dict)
    rule_score: float | None = None       # checklist_fitted: what the declared rule gave this row
    score_probs: dict | None = None       # holistic with logprobs: P(level), expected score, tie (score_probs.py)
    usage: Usage | None = None            # this row's judge calls and tokens


class CsBenchmarkResult(BaseModel):
    judge_mode: JudgeMode
    few_shot: FewShot | None = None
    shuffle_levels: bool = False
    judge: str
    n_items: int
    n_scored: int
    unscored_kinds: dict[str, int] = Field(default_factory=dict)
    elapsed_s: float
    usage: Usage
    resumed_items: int = 0                # rows kept from a stopped run's partial file (--resume)
    overall: AgreementReport
    per_rubric: dict[str, AgreementReport]
    rule_overall: AgreementReport | None = None          # checklist_fitted: the declared rule on the same rows
    rule_per_rubric: dict[str, AgreementReport] = Field(default_factory=dict)
    # checklist_fitted: weights fitted on ALL rows of each rubric (its κ above is cross-fitted, never on these)
    fitted_on_all: dict[str, FittedWeights] = Field(default_factory=dict)
    rows: list[CsRow]
    command: str = ""

    def summary(self) -> str:
        options = f", few_shot={self.few_shot}" if self.few_shot else ""
        options += ", shuffled levels" if self.shuffle_levels else ""
        u = self.usage
        lines = [f"cs_zh, judge mode {self.judge_mode}{options}; judge {self.judge}",
                 f"  {self.n_items} rows, {self.n_scored} scored"
                 + (f", unscored: {self.unscored_kinds}" if self.unscored_kinds else "")
                 + (f"; {self.resumed_items} rows from a stopped run (--resume)" if self.resumed_items else "")
                 + f"; {self.elapsed_s:.0f} s; {u.calls} calls, {u.cache_hits} cache hits, {u.prompt_tokens} prompt "
                   f"tokens ({u.cached_prompt_tokens} from the server's prefix cache), {u.completion_tokens} "
                   f"completion tokens",
                 f"  all rubrics: κ(quadratic) {self.overall.kappa_quadratic.format()}, exact "
                 f"{self.overall.exact.format()}, n={self.overall.n}"]
        for rubric_id, report in self.per_rubric.items():
            lines.append(f"  {rubric_id}: κ {report.kappa_quadratic.format()}, exact {report.exact.format()}, "
                         f"n={report.n}")
        if self.rule_overall is not None:
            lines.append(f"  declared rule on the same rows: κ {self.rule_overall.kappa_quadratic.format()}")
            for rubric_id, report in self.rule_per_rubric.items():
                lines.append(f"    {rubric_id}: κ {report.kappa_quadratic.format()}")
        return "\n".join(lines)


def load_labelled(path: str | Path | None) -> list[Sample]:
    path = Path(path or DEFAULT_DATA)
    if not path.exists():
        raise DatasetError("labelled set not found", file=str(path),
                           hint="run from a rubriceval checkout, or pass --data datasets/labelled/cs_zh_labels.jsonl")
    samples = read_dataset(path)
    for number, sample in enumerate(samples, start=1):
        for field in ("rubric", "label"):
            if field not in sample.metadata:
                raise DatasetError(f"row has no '{field}'", file=str(path), line=number, field=field)
    return samples


def spread(samples: list[Sample], n: int | None) -> list[Sample]:
    """n rows evenly spaced through the file (which is ordered by rubric, then level), so a smaller run keeps
    every rubric and level; all rows when n is None or not smaller."""
    if n is None or n >= len(samples):
        return samples
    return [samples[int(i * len(samples) / n)] for i in range(n)]


def variant(rubric: Rubric, mode: JudgeMode, few_shot: FewShot | None, shuffle: bool, judge_model: str) -> Rubric:
    """The rubric as measured: its judge mode (checklist for both checklist modes: fitting happens here; through
    the one rule, rubriceval/scoring/judge_mode.py), and the holistic prompt options."""
    update: dict[str, Any] = {"shuffle_levels": shuffle}
    if few_shot is not None:
        update["few_shot"] = few_shot
    changed = Rubric.model_validate({**rubric.model_dump(), **update})
    changed.source_file = rubric.source_file
    (measured,), _ = with_judge_mode([changed], "checklist" if mode == "checklist_fitted" else mode,
                                     judge_models=[judge_model])
    return measured


def _check_no_example_leak(rubric: Rubric, samples: list[Sample]) -> None:
    shown = {(" ".join(e.question.split()), " ".join(e.answer.split())) for e in rubric.examples}
    leaked = [s.id for s in samples if (" ".join(s.question.split()), " ".join(s.answer.split())) in shown]
    if leaked:
        raise DatasetError(f"rows {leaked} are few-shot examples of rubric '{rubric.id}': they cannot be measured")


def _reports(rows: list[CsRow], score_of, n_boot: int, seed: int, name: str
             ) -> tuple[AgreementReport, dict[str, AgreementReport]]:
    def report(subset: list[CsRow], label: str) -> AgreementReport:
        scored = [r for r in subset if score_of(r) is not None]
        return agreement_report([score_of(r) for r in scored], [r.label for r in scored], ids=[r.id for r in scored],
                                name=label, n_boot=n_boot, seed=seed, n_unscored=len(subset) - len(scored))

    per = {rid: report([r for r in rows if r.rubric_id == rid], f"{rid} ({name})")
           for rid in dict.fromkeys(r.rubric_id for r in rows)}
    return report(rows, f"cs_zh ({name})"), per


def _row(sample: Sample, verdict: Verdict) -> CsRow:
    return CsRow(id=sample.id, rubric_id=sample.metadata["rubric"], label=int(sample.metadata["label"]),
                 judge_score=verdict.score, unscored_reason=verdict.unscored_reason, p_yes=verdict_p_yes(verdict),
                 unscored_kind=None if verdict.score is not None else verdict.unscored_kind or "error",
                 score_probs=verdict_score_probs(verdict), usage=verdict.usage)


async def run_cs_benchmark_async(config: JudgeConfig, mode: JudgeMode = "holistic", *, few_shot: FewShot | None = None,
                                 shuffle_levels: bool = False, data: str | Path | None = None,
                                 rubrics_dir: str | Path | None = None, n: int | None = None, seed: int = 0,
                                 n_boot: int = 1000, progress: bool = True,
                                 answers: str | Path | None = None, partial: str | Path | None = None,
                                 resume: bool = False) -> CsBenchmarkResult:
    """`answers`: a saved checklist result (`--out` of a checklist run) whose p(yes) the fitted mode reuses
    instead of asking the judge again (same rows and rubrics required); `partial`: a JSON-lines file that gets
    each row as it is judged; `resume`: keep the rows it holds when they were judged with these very prompts
    (benchmarks/judge/partial.py) and judge only the others."""
    samples = spread(load_labelled(data), n)
    by_id = {r.id: r for r in load_rubrics(rubrics_dir or DEFAULT_RUBRICS,
                                           only=sorted({s.metadata["rubric"] for s in samples}))}
    pairs: list[tuple[Rubric, Sample]] = []
    for sample in samples:
        rubric = variant(by_id[sample.metadata["rubric"]], mode, few_shot, shuffle_levels, config.model)
        if mode != "holistic" and rubric.judge_mode != "checklist":
            raise DatasetError(f"rubric '{rubric.id}' has no checklist item to run in mode {mode}")
        if not applies(rubric, sample):
            raise DatasetError(f"rubric '{rubric.id}' does not apply to row {sample.id}; check its applies_to")
        pairs.append((rubric, sample))
    for rubric in {id(r): r for r, _ in pairs}.values():
        _check_no_example_leak(rubric, [s for r, s in pairs if r.id == rubric.id])
    result: dict[str, Any] = {}
    if answers is not None:
        saved = _saved_answers(answers, pairs, mode)
        rows, usage, elapsed, unscored = saved.rows, saved.usage, saved.elapsed_s, saved.unscored_kinds
        result["judge"] = saved.judge
    else:
        keep = None if partial is None else PartialFile(partial, partial_header(
            "cs_zh", pairs, config, judge_mode=mode, few_shot=few_shot,
            options={"shuffle_levels": str(shuffle_levels)}), CsRow)
        rows, elapsed, result["resumed_items"] = await judge_records(pairs, config, _row, progress=progress,
                                                                     keep=keep, resume=resume)
        usage = sum((r.usage or Usage() for r in rows), Usage())
        unscored = dict(Counter(r.unscored_kind or "error" for r in rows if r.judge_score is None))
    if mode == "checklist_fitted":
        rows = _cross_fit(rows, pairs, seed)
        result["fitted_on_all"] = _fit_all(rows, pairs, config.model)
        result["rule_overall"], result["rule_per_rubric"] = _reports(rows, lambda r: r.rule_score, n_boot, seed,
                                                                     "declared rule")
    overall, per = _reports(rows, lambda r: r.judge_score, n_boot, seed, mode)
    result.setdefault("judge", config.describe())
    return CsBenchmarkResult(judge_mode=mode, few_shot=few_shot, shuffle_levels=shuffle_levels, n_items=len(rows),
                             n_scored=sum(r.judge_score is not None for r in rows), unscored_kinds=unscored,
                             elapsed_s=elapsed, usage=usage, overall=overall, per_rubric=per, rows=rows, **result)


def _saved_answers(path: str | Path, pairs: list[tuple[Rubric, Sample]], mode: JudgeMode) -> CsBenchmarkResult:
    """A checklist run's saved result, checked to cover exactly these rows with the same rubrics."""
    if mode != "checklist_fitted":
        raise DatasetError("saved answers only serve --judge-mode checklist_fitted", file=str(path))
    saved = CsBenchmarkResult.model_validate_json(Path(path).read_text(encoding="utf-8"))
    if saved.judge_mode != "checklist":
        raise DatasetError(f"a {saved.judge_mode} result has no checklist answers", file=str(path), field="judge_mode")
    wanted = [(s.id, r.id) for r, s in pairs]
    if [(row.id, row.rubric_id) for row in saved.rows] != wanted:
        raise DatasetError("the saved rows are not this run's rows (other data, --n or rubrics)", file=str(path))
    return saved


def _fit_all(rows: list[CsRow], pairs: list[tuple[Rubric, Sample]], judge: str) -> dict[str, FittedWeights]:
    """The weights to ship: each rubric's model fitted on all its labelled rows."""
    out: dict[str, FittedWeights] = {}
    for rubric_id in dict.fromkeys(r.rubric_id for r in rows):
        index = [i for i, r in enumerate(rows) if r.rubric_id == rubric_id and r.p_yes]
        item = pairs[index[0]][0].checklist_items[0]
        out[rubric_id] = fit_ordinal([rows[i].p_yes for i in index], [rows[i].label for i in index],
                                     [q.id for q in item.questions], judge_model=judge)
    return out


def _cross_fit(rows: list[CsRow], pairs: list[tuple[Rubric, Sample]], seed: int) -> list[CsRow]:
    """Replace each row's score by the level of a model fitted on the other fold of its rubric's rows; the
    rule's score is kept beside it. Deterministic check caps apply as the rubric's combine rule says."""
    from rubriceval.checks import run_check
    from rubriceval.scoring.combine import ItemScore, combine

    # Rows decided without the judge (e.g. a manipulation attempt) keep their score under both.
    out = [r.model_copy(update={"rule_score": r.judge_score}) for r in rows]
    for rubric_id in dict.fromkeys(r.rubric_id for r in rows):
        index = [i for i, r in enumerate(rows) if r.rubric_id == rubric_id and r.p_yes]
        rubric = pairs[index[0]][0]
        item = rubric.checklist_items[0]
        qids = [q.id for q in item.questions]
        levels = cross_fitted_levels([rows[i].p_yes for i in index], [rows[i].label for i in index], qids, seed=seed)
        for i, level in zip(index, levels):
            sample = pairs[i][1]
            scores = [ItemScore(item_id=item.id, kind="judge", weight=item.weight, must=item.must, score=level)]
            scores += [ItemScore(item_id=c.id, kind=c.type, weight=c.weight, must=c.must,
                                 passed=run_check(c, sample).passed) for c in rubric.check_items]
            final, _ = combine(scores, rubric.combine)
            out[i] = rows[i].model_copy(update={"judge_score": float(final), "rule_score": rows[i].judge_score})
    return out


def run_cs_benchmark(config: JudgeConfig, mode: JudgeMode = "holistic", out: str | Path | None = None,
                     command: str = "", resume: bool = False, **options: Any) -> CsBenchmarkResult:
    partial = partial_path(out, resume)
    result = asyncio.run(run_cs_benchmark_async(config, mode, partial=partial, resume=resume, **options))
    result = result.model_copy(update={"command": command})
    print(result.summary())
    if partial is not None:
        partial.unlink(missing_ok=True)          # complete: the full result replaces it
    if out is not None:
        path = Path(out)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(result.model_dump_json(indent=2), encoding="utf-8")
    return result
