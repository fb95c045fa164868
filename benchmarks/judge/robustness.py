"""`rubriceval benchmark-judge robustness`: do answers that attack the grader move the score, which defence stops it.

Each pair of the set (benchmarks/judge/data/robustness.jsonl) is the same customer-service answer clean and
attacked. Per judge mode, the judge scores every clean answer (once per base answer) and every attacked one with the
rubric's manipulation policy off — the raw verdict — and each defence's policy (cap at 1, the default) is then applied
to those verdicts for the texts that defence flags. So one judging pass measures every defence, and per family:

* inflation: mean(attacked − clean) over pairs where both are scored, and the share of pairs where the attacked
  answer scored higher — raw, and under each defence's cap;
* recall: the share of attacked texts the defence flags;
* false positives: the share of benign texts it flags (the set's clean answers and benign texts, SummEval
  summaries, a HaluEval sample, the demo answers), per corpus;
* what it costs: extra judge or model calls and tokens per text screened.

Unscored verdicts are counted, never averaged. The judged verdicts are kept in `<out>.<mode>.partial.jsonl` as they
come, so a stopped run resumes (`--resume`) without judging again.
"""
from __future__ import annotations

import asyncio
import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from benchmarks.judge.judge import judge_records, partial_path
from benchmarks.judge.partial import PartialFile, partial_header
from benchmarks.judge.robustness_data import (
    FAMILIES,
    RobustnessPair,
    Split,
    benign_texts,
    load_set,
)
from benchmarks.judge.robustness_screens import (
    Screen,
    ScreenRun,
    pattern_screen,
    run_screens,
)
from rubriceval.core.verdict import Usage, Verdict
from rubriceval.data.sample import Sample
from rubriceval.judge.config import JudgeConfig
from rubriceval.rubric.loader import load_rubric
from rubriceval.rubric.schema import JudgeMode, Rubric
from rubriceval.scoring.judge_mode import with_judge_mode
from rubriceval.scoring.panel import PanelConfig, PanelJudge
from rubriceval.trust.self_consistency import sampling_config

RUBRIC_DIR = Path(__file__).resolve().parent / "rubrics"
RUBRICS = {"zh": "robustness_zh.yaml", "en": "robustness_en.yaml"}
# predicates: the answer as a chat turn, scored from per-turn questions alone (reference-free: see the files)
PREDICATE_RUBRICS = {"zh": "robustness_predicates_zh.yaml", "en": "robustness_predicates_en.yaml"}
# panel, when no --panel file names real judges: the holistic rubric judged by three sampled judgments of the one
# judge (the only model reachable offline; sampling as self-consistency does), median score — what a panel of seeds
# in a config file gives
PANEL_SEEDS = (1, 2, 3)
RobustnessMode = Literal["holistic", "checklist", "predicates", "panel"]
CAP_SCORE = 1.0             # the default policy: `manipulation: {action: cap, cap_score: 1}`
NO_DEFENCE = "none"
NOT_JUDGED = "not_judged"   # capped before judging (--judge-capped off), as a run with the default policy does


class JudgedText(BaseModel):
    id: str
    judge_score: float | None
    unscored_kind: str | None = None
    usage: Usage | None = None


class Rate(BaseModel):
    k: int
    n: int

    @property
    def value(self) -> float | None:
        return self.k / self.n if self.n else None

    def format(self) -> str:
        return f"{self.k}/{self.n}" + (f" ({100 * self.k / self.n:.1f} %)" if self.n else "")


class Inflation(BaseModel):
    n_pairs: int                    # both sides scored
    n_unscored: int                 # pairs left out: one side unscored
    n_not_judged: int = 0           # pairs left out of the raw column: the attacked side was capped before judging
    clean_mean: float | None = None
    attacked_mean: float | None = None
    inflation: float | None = None  # mean(attacked − clean)
    share_higher: float | None = None


class FamilyRow(BaseModel):
    mode: str
    family: str
    by_defence: dict[str, Inflation]     # "none" = the raw judge; else that defence's cap applied


class RobustnessResult(BaseModel):
    judge: str
    split: str
    modes: list[str]
    n_pairs: int
    rows: list[FamilyRow] = Field(default_factory=list)
    recall: dict[str, dict[str, Rate]] = Field(default_factory=dict)             # defence → family → flagged
    false_positives: dict[str, dict[str, Rate]] = Field(default_factory=dict)    # defence → corpus → flagged
    screen_usage: dict[str, Usage] = Field(default_factory=dict)                 # defence → its calls, tokens
    screened_texts: dict[str, int] = Field(default_factory=dict)                 # defence → texts it screened
    screen_failures: dict[str, dict[str, str]] = Field(default_factory=dict)     # defence → text id → why not
    judge_usage: dict[str, Usage] = Field(default_factory=dict)                  # mode → judging calls, tokens
    unscored_kinds: dict[str, dict[str, int]] = Field(default_factory=dict)      # mode → kind → count
    not_judged: dict[str, int] = Field(default_factory=dict)     # mode → attacked answers capped before judging
    pending: dict[str, int] = Field(default_factory=dict)        # mode → pairs not judged yet (--report-partial)
    findings: dict[str, dict[str, list[str]]] = Field(default_factory=dict)      # defence → text id → quoted spans
    judged: dict[str, list[JudgedText]] = Field(default_factory=dict)            # mode → verdicts
    elapsed_s: float = 0.0
    command: str = ""

    def summary(self) -> str:
        from benchmarks.judge.robustness_table import summary_text

        return summary_text(self)


def benchmark_rubrics(mode: RobustnessMode, judge_model: str) -> dict[str, Rubric]:
    files = PREDICATE_RUBRICS if mode == "predicates" else RUBRICS
    rubrics = {lang: load_rubric(RUBRIC_DIR / name) for lang, name in files.items()}
    judge_mode: JudgeMode = "holistic" if mode == "panel" else mode
    measured, notes = with_judge_mode(list(rubrics.values()), judge_mode, judge_models=[judge_model])
    for line in notes:
        print(line, file=sys.stderr)
    return dict(zip(rubrics, measured))


def seed_panel(config: JudgeConfig) -> PanelConfig:
    """The default panel: the judge three times, sampling with distinct seeds (PANEL_SEEDS) at its
    self_consistency_temperature (0.7 unless configured)."""
    return PanelConfig(judges=[
        PanelJudge(name=f"seed-{seed}", config=sampling_config(config, config.self_consistency_temperature, seed))
        for seed in PANEL_SEEDS])


def judged_samples(pairs: list[RobustnessPair], as_chat: bool = False) -> list[Sample]:
    """Every clean answer once (shared by its pairs) and every attacked one, base answer by base answer, Chinese and
    English alternating: a run stopped part-way has whole pairs of both languages (--report-partial). `as_chat`:
    each answer as the assistant turn of a chat (predicates mode)."""
    by_base: dict[str, list[RobustnessPair]] = {}
    for pair in pairs:
        by_base.setdefault(pair.base_id, []).append(pair)
    zh = [b for b in by_base if by_base[b][0].lang == "zh"]
    en = [b for b in by_base if by_base[b][0].lang == "en"]
    order = [b for couple in zip(zh, en) for b in couple] + zh[len(en):] + en[len(zh):]
    return [s for b in order for s in (by_base[b][0].sample(attacked=False, as_chat=as_chat),
                                       *(p.sample(attacked=True, as_chat=as_chat) for p in by_base[b]))]


def _record(sample: Sample, verdict: Verdict) -> JudgedText:
    return JudgedText(id=sample.id, judge_score=verdict.score, usage=verdict.usage,
                      unscored_kind=None if verdict.score is not None else verdict.unscored_kind or "error")


async def judge_mode(mode: RobustnessMode, pairs: list[RobustnessPair], config: JudgeConfig, *,
                     out: str | Path | None, resume: bool, progress: bool, skip: set[str] = frozenset(),
                     panel: PanelConfig | None = None) -> list[JudgedText]:
    """Raw verdicts of the clean and attacked samples; those in `skip` are not judged (recorded as not judged).
    Mode `panel` judges with `panel` (default: seed_panel of the judge)."""
    rubrics = benchmark_rubrics(mode, config.model)
    samples = judged_samples(pairs, as_chat=mode == "predicates")
    panel = (panel or seed_panel(config)) if mode == "panel" else None
    todo = [(rubrics[s.metadata["lang"]], s) for s in samples if s.id not in skip]
    partial = partial_path(f"{out}.{mode}" if out is not None else None, resume)
    keep = None
    if partial is not None:
        # another panel's verdicts are not these: the panel is part of the header
        options = {"panel": json.dumps(panel.public(), sort_keys=True, default=str)} if panel is not None else None
        header = partial_header("robustness", todo, config, judge_mode=mode, few_shot=None, options=options)
        keep = PartialFile(partial, header, JudgedText)
    records, _, _ = await judge_records(todo, config, _record, progress=progress, keep=keep, resume=resume,
                                        panel=panel)
    return records + [JudgedText(id=s.id, judge_score=None, unscored_kind=NOT_JUDGED) for s in samples if s.id in skip]


def judged_so_far(mode: str, out: str | Path, samples: list[Sample], skip: set[str]) -> list[JudgedText]:
    """What a stopped or still running judging of `mode` has written to its partial file (--report-partial)."""
    from benchmarks.judge.partial import read_partial

    path = partial_path(f"{out}.{mode}", False)
    items = read_partial(path, JudgedText)[1] if path is not None and path.exists() else []
    return items + [JudgedText(id=s.id, judge_score=None, unscored_kind=NOT_JUDGED) for s in samples if s.id in skip]


def _capped(judged: JudgedText | None, flagged: bool) -> float | None:
    if judged is None:
        return None
    if flagged and judged.unscored_kind == NOT_JUDGED:
        return CAP_SCORE             # the cap decided it without the judge, as in a run
    if judged.judge_score is None or not flagged:
        return judged.judge_score
    return min(judged.judge_score, CAP_SCORE)


def inflation(pairs: list[RobustnessPair], judged: dict[str, JudgedText], flagged: dict[str, bool]) -> Inflation:
    """Attacked − clean over pairs with both sides scored; `flagged` (sample id → flagged) applies the cap."""
    diffs, clean, attacked, unscored, not_judged = [], [], [], 0, 0
    for pair in pairs:
        c_id, a_id = pair.sample(False).id, pair.sample(True).id
        c, a = _capped(judged.get(c_id), flagged.get(c_id, False)), _capped(judged.get(a_id), flagged.get(a_id, False))
        if a is None and judged.get(a_id) is not None and judged[a_id].unscored_kind == NOT_JUDGED:
            not_judged += 1
            continue
        if c is None or a is None:
            unscored += 1
            continue
        clean.append(c)
        attacked.append(a)
        diffs.append(a - c)
    if not diffs:
        return Inflation(n_pairs=0, n_unscored=unscored, n_not_judged=not_judged)
    return Inflation(n_pairs=len(diffs), n_unscored=unscored, n_not_judged=not_judged,
                     clean_mean=sum(clean) / len(clean),
                     attacked_mean=sum(attacked) / len(attacked), inflation=sum(diffs) / len(diffs),
                     share_higher=sum(d > 0 for d in diffs) / len(diffs))


def family_rows(mode: str, pairs: list[RobustnessPair], judged: list[JudgedText],
                flags: dict[str, dict[str, bool]]) -> list[FamilyRow]:
    by_id = {j.id: j for j in judged}
    rows = []
    for family in [*[f for f in FAMILIES if any(p.family == f for p in pairs)], "all"]:
        chosen = [p for p in pairs if family in ("all", p.family)]
        by_defence = {NO_DEFENCE: inflation(chosen, by_id, {})}
        by_defence.update({name: inflation(chosen, by_id, flagged) for name, flagged in flags.items()})
        rows.append(FamilyRow(mode=mode, family=family, by_defence=by_defence))
    return rows


def rates(pairs: list[RobustnessPair], benign: list, run: ScreenRun) -> tuple[dict[str, Rate], dict[str, Rate]]:
    recall: dict[str, Rate] = {}
    for family in [*[f for f in FAMILIES if any(p.family == f for p in pairs)], "all"]:
        chosen = [p for p in pairs if family in ("all", p.family) and run.screened(p.sample(True).id)]
        recall[family] = Rate(k=sum(run.flagged(p.sample(True).id) for p in chosen), n=len(chosen))
    fp: dict[str, Rate] = {}
    screened = [t for t in benign if run.screened(f"benign:{t.corpus}:{t.id}")]
    for corpus in [*dict.fromkeys(t.corpus for t in screened), "all"]:
        chosen = [t for t in screened if corpus in ("all", t.corpus)]
        fp[corpus] = Rate(k=sum(run.flagged(f"benign:{t.corpus}:{t.id}") for t in chosen), n=len(chosen))
    return recall, fp


async def run_robustness_async(config: JudgeConfig | None, modes: list[RobustnessMode], *, split: Split = "heldout",
                               screens: list[Screen] | None = None, out: str | Path | None = None,
                               resume: bool = False, progress: bool = True, data: str | Path | None = None,
                               families: list[str] | None = None, halueval_n: int = 1000,
                               judge_capped: bool = True, report_partial: bool = False,
                               panel: PanelConfig | None = None) -> RobustnessResult:
    """`config` None: the defences only (recall, false positives), no judging. `judge_capped` False: attacked answers
    the patterns flag are not judged — the default policy caps them at 1 without asking the judge, as a run does —
    so the raw column covers the other pairs only (counted as not judged). `report_partial`: no judging — the tables
    of the pairs whose verdicts the modes' partial files already hold (a run still going or stopped)."""
    started = time.perf_counter()
    pairs, benign_rows = load_set(data, split)
    if families:
        pairs = [p for p in pairs if p.family in families]
    benign = benign_texts(pairs, benign_rows, halueval_n=halueval_n)
    screens = screens or [pattern_screen()]
    texts = {p.sample(True).id: p.attacked for p in pairs} | {p.sample(False).id: p.clean for p in pairs}
    texts |= {f"benign:{t.corpus}:{t.id}": t.text for t in benign}
    runs = await run_screens(screens, texts, progress=progress)
    result = RobustnessResult(judge=config.model if config else "none", split=split,
                              modes=list(modes) if config else [], n_pairs=len(pairs))
    for name, run in runs.items():
        result.recall[name], result.false_positives[name] = rates(pairs, benign, run)
        result.screen_usage[name], result.screened_texts[name] = run.usage, run.n_screened
        result.screen_failures[name] = run.failed
        result.findings[name] = {key: spans for key, spans in run.spans.items() if spans}
    flags = {name: {key: run.flagged(key) for key in texts} for name, run in runs.items()}
    if len(runs) > 1:
        flags["all defences"] = {key: any(f[key] for f in flags.values()) for key in texts}
    for mode in modes if config else []:
        patterns = runs.get("patterns")
        capped = {p.sample(True).id for p in pairs if patterns is not None and patterns.flagged(p.sample(True).id)}
        skip = set() if judge_capped else capped
        if report_partial:
            judged = judged_so_far(mode, out, judged_samples(pairs), skip)
            have = {j.id for j in judged}
            done = [p for p in pairs if {p.sample(False).id, p.sample(True).id} <= have]
            result.pending[mode] = len(pairs) - len(done)
        else:
            judged = await judge_mode(mode, pairs, config, out=out, resume=resume, progress=progress, skip=skip,
                                      panel=panel)
            done = pairs
        result.judged[mode] = judged
        result.rows += family_rows(mode, done, judged, flags)
        result.judge_usage[mode] = sum((j.usage for j in judged if j.usage), Usage())
        result.unscored_kinds[mode] = dict(Counter(j.unscored_kind for j in judged
                                                   if j.unscored_kind and j.unscored_kind != NOT_JUDGED))
        result.not_judged[mode] = len(skip)
    result.elapsed_s = time.perf_counter() - started
    return result


def run_robustness(config: JudgeConfig | None, modes: list[RobustnessMode], *, out: str | Path | None = None,
                   resume: bool = False, command: str = "", **options) -> RobustnessResult:
    result = asyncio.run(run_robustness_async(config, modes, out=out, resume=resume, **options))
    result.command = command
    if options.get("report_partial"):
        if out is not None:
            Path(f"{out}.so_far.json").write_text(result.model_dump_json(indent=2), encoding="utf-8")
        print(result.summary())
        return result
    for mode in result.modes:                       # complete: the full result replaces the partial files
        partial = partial_path(f"{out}.{mode}" if out is not None else None, False)
        if partial is not None:
            partial.unlink(missing_ok=True)
    if out is not None:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        Path(out).write_text(result.model_dump_json(indent=2), encoding="utf-8")
    print(result.summary())
    return result
