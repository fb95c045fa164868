"""`--judge-mode` / `judge.judge_mode`: run rubrics in another judge mode than their files say.

The mode changes the rubric (its `judge_mode` field, so its version tag too): verdicts of different modes are never
mixed under one version. A mode a rubric cannot run falls back, and says so: checklist_fitted without fitted
weights → checklist; checklist without a checklist item → holistic.
"""
from __future__ import annotations

from rubriceval.rubric.schema import JudgeMode, Rubric


def supported_mode(rubric: Rubric, wanted: JudgeMode) -> JudgeMode:
    """The closest mode this rubric can run: `wanted`, else checklist, else holistic."""
    if wanted == "checklist_fitted" and rubric.checklist_items and all(i.fitted for i in rubric.checklist_items):
        return wanted
    if wanted in ("checklist", "checklist_fitted") and rubric.checklist_items:
        return "checklist"
    return "holistic"


def with_judge_mode(rubrics: list[Rubric], wanted: JudgeMode | None) -> tuple[list[Rubric], list[str]]:
    """The rubrics in the wanted mode (None: unchanged), and one note per rubric that had to fall back."""
    if wanted is None:
        return rubrics, []
    out, notes = [], []
    for rubric in rubrics:
        mode = supported_mode(rubric, wanted)
        if mode != wanted and rubric.judge_items + rubric.checklist_items:
            notes.append(f"note: rubric '{rubric.id}' runs in judge mode '{mode}' (it cannot run '{wanted}')")
        if mode == rubric.judge_mode:
            out.append(rubric)
            continue
        changed = Rubric.model_validate({**rubric.model_dump(), "judge_mode": mode})
        changed.source_file = rubric.source_file
        out.append(changed)
    return out, notes
