"""Which judge mode each rubric runs in, for the judge(s) that will judge it — decided here, for every caller.

A rubric runs the mode its file declares (`judge_mode`), or the one `--judge-mode` / `judge.judge_mode` asks for,
when it can. A mode a rubric cannot run falls back, and the run says so once per rubric:

- `checklist_fitted` without fitted weights → `checklist`; `checklist` without a checklist item → `holistic`;
- `predicates` without `predicate_levels` → `checklist` (or `holistic`); a rubric of checks alone (no judge or
  checklist item) with `predicate_levels` runs `predicates` whatever is asked: it has no other mode;
- `checklist_fitted` whose weights were fitted for another judge (`fitted.judge_model` ≠ `JudgeConfig.model`)
  → `checklist`, the rubric's declared level rule: p(yes) scales differ between judges, so weights fitted on one
  judge's answers mean nothing on another's. The note names the fix (`rubriceval calibrate --fit-weights` with
  this judge). A panel runs one version of each rubric, so the fitted weights are used only when EVERY judge of
  the panel is the model they were fitted for (a panel of seeds of that model); otherwise every judge runs the rule.

With no mode asked, a rubric whose `measured:` block names the judge runs the mode measured best on it (of the
modes it can run; best by the interval's lower bound, rubric/measured.py) — the file's `judge_mode` is the mode for
judges it was never measured on. A run says when a rubric with measurements runs a mode never measured on its judge.

The mode changes the rubric (its `judge_mode` field, so its version tag too): verdicts of different modes are never
mixed under one version. Callers: `api.start_run` (online and Batch API runs), the dry-run and Batch API planner
(`planning.py`), pairwise (holistic: an A/B preference), benchmark-judge and calibrate. A resumed run keeps the
versions it started with; `resumed_mode_notes` says when its judge would now run another mode.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any, get_args

from rubriceval.rubric.measured import Measurement, best_measured
from rubriceval.rubric.schema import JudgeMode, Rubric


def judging_models(config: Any, panel: Any = None) -> list[str]:
    """The models that judge the rubrics: each judge of a panel (a `PanelConfig`), else the one judge."""
    if panel is not None:
        return [judge.config.model for judge in panel.judges]
    return [config.model]


def misfitted_weights(rubric: Rubric, judge_models: Sequence[str]) -> str | None:
    """The judge a checklist's fitted weights were fitted for, when one of `judge_models` is another model; None
    when the weights apply (or name no judge: weights written by hand or before the judge was recorded)."""
    for item in rubric.checklist_items:
        fitted_for = item.fitted.judge_model if item.fitted is not None else ""
        if fitted_for and any(model != fitted_for for model in judge_models):
            return fitted_for
    return None


def supported_mode(rubric: Rubric, wanted: JudgeMode, judge_models: Sequence[str]) -> JudgeMode:
    """The closest mode this rubric can run with these judges: `wanted`, else checklist, else holistic."""
    checklists = rubric.checklist_items
    if not rubric.judge_items and not checklists and rubric.predicate_levels is not None:
        return "predicates"          # checks and their questions are all it has: the one mode it can run
    if wanted == "predicates":       # the checks alone, leveled by predicate_levels
        return wanted if rubric.predicate_levels is not None else ("checklist" if checklists else "holistic")
    if wanted == "checklist_fitted" and checklists and all(i.fitted for i in checklists) \
            and misfitted_weights(rubric, judge_models) is None:
        return wanted
    if wanted in ("checklist", "checklist_fitted") and checklists:
        return "checklist"
    return "holistic"


def fallback_reason(rubric: Rubric, wanted: JudgeMode, judge_models: Sequence[str]) -> str:
    """Why the rubric cannot run `wanted` with these judges, and the fix when there is one."""
    fitted_for = misfitted_weights(rubric, judge_models) if wanted == "checklist_fitted" else None
    if fitted_for is None:
        return f"it cannot run '{wanted}'"
    others = ", ".join(f"'{m}'" for m in dict.fromkeys(judge_models) if m != fitted_for)
    return (f"its fitted weights are for judge '{fitted_for}', not {others}: p(yes) scales differ between judges; "
            f"to fit weights for this judge, audit some of its verdicts, then "
            f"`rubriceval calibrate --fit-weights --rubric {rubric.id}` with it")


def measured_mode(rubric: Rubric, judge_models: Sequence[str]) -> Measurement | None:
    """The measurement of the mode this rubric agreed best in on these judges, among the modes it can run with
    them; None when a judge has none (a panel: None unless every judge's best is the same mode)."""
    runnable = {m.base_mode for m in rubric.measured if m.base_mode in get_args(JudgeMode)
                and supported_mode(rubric, m.base_mode, judge_models) == m.base_mode}   # type: ignore[arg-type]
    picks = [best_measured(rubric.measured, model, runnable) for model in dict.fromkeys(judge_models)]
    if not picks or any(p is None for p in picks) or len({p.base_mode for p in picks}) != 1:   # type: ignore[union-attr]
        return None
    return picks[0]


def unmeasured_clause(rubric: Rubric, mode: str, judge_models: Sequence[str]) -> str:
    """What a run says when this rubric, which has measurements, runs `mode` on a judge never measured in it
    ("" when every judge was)."""
    clauses = []
    for model in dict.fromkeys(judge_models) if rubric.measured else ():
        modes = list(dict.fromkeys(m.base_mode for m in rubric.measured if m.judge == model))
        if mode not in modes:
            known = (f"measured there: {', '.join(modes)}" if modes else
                     f"measured only on {', '.join(dict.fromkeys(m.judge for m in rubric.measured))}")
            clauses.append(f"'{mode}' was never measured on judge '{model}' ({known})")
    return "; ".join(clauses) + ": its agreement with people there is unknown" if clauses else ""


def with_judge_mode(rubrics: list[Rubric], wanted: JudgeMode | None, *, judge_models: Sequence[str]
                    ) -> tuple[list[Rubric], list[str]]:
    """The rubrics in the mode they run with these judges — `wanted`, or (None) each rubric's mode measured best on
    these judges, else its own — and the notes: a rubric that had to fall back, one that runs its measured mode
    rather than its file's, one that runs a mode never measured on a judge."""
    out, notes = [], []
    for rubric in rubrics:
        best = None if wanted else measured_mode(rubric, judge_models)
        asked = wanted or (best.base_mode if best is not None else rubric.judge_mode)
        mode = supported_mode(rubric, asked, judge_models)     # type: ignore[arg-type]
        said = []                  # one note per rubric
        if mode != asked and rubric.judge_items + rubric.checklist_items:
            said.append(f"({fallback_reason(rubric, asked, judge_models)})")   # type: ignore[arg-type]
        elif best is not None and mode != rubric.judge_mode:
            said.append(f"(measured best on judge '{best.judge}': {best.line()}; its file declares "
                        f"'{rubric.judge_mode}')")
        if unmeasured := unmeasured_clause(rubric, mode, judge_models):
            said.append(f"— {unmeasured}")
        if said:
            notes.append(f"note: rubric '{rubric.id}' runs in judge mode '{mode}' " + " ".join(said))
        if mode == rubric.judge_mode:
            out.append(rubric)
            continue
        changed = Rubric.model_validate({**rubric.model_dump(), "judge_mode": mode})
        changed.source_file = rubric.source_file
        out.append(changed)
    return out, notes


def resumed_mode_notes(rubrics: list[Rubric], judge_models: Sequence[str]) -> list[str]:
    """A resumed run keeps the rubric versions it started with (a version never mixes modes); one note per rubric
    whose stored mode these judges would not run (the run was started with another judge)."""
    notes = []
    for rubric in rubrics:
        mode = supported_mode(rubric, rubric.judge_mode, judge_models)
        if mode != rubric.judge_mode:
            notes.append(f"note: the resumed run keeps rubric '{rubric.id}' in judge mode '{rubric.judge_mode}' "
                         f"as it started, though with this judge it would run '{mode}' "
                         f"({fallback_reason(rubric, rubric.judge_mode, judge_models)}); "
                         "start a new run to judge it in that mode")
    return notes
