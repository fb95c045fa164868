"""Trying a draft without a run: validate it as `rubriceval validate` does, test its deterministic checks on a
pasted text or a sample, preview the exact messages the judge would receive, pick samples to try it on.

Pasted text and samples are untrusted: checks read them as data, the preview renders them through the one sandboxed
prompt environment (rubriceval/prompt/environment.py), exactly as a run would.
"""
from __future__ import annotations

import random
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from rubriceval.checks import run_check
from rubriceval.common.errors import RubricEvalError
from rubriceval.data.sample import Sample
from rubriceval.i18n import Lang
from rubriceval.prompt.rubric_prompts import compile_rubric, prompts_text
from rubriceval.rubric.applies import why_not
from rubriceval.rubric.schema import Rubric
from rubriceval.studio.messages import Problem, say_problem
from rubriceval.validate.lint import Finding, validate_path

PickRule = Literal["random", "tag", "failing", "first"]


class DraftCheck(BaseModel):
    """A draft as `rubriceval validate` sees it: the rubric when it loads, and every finding (file:line [field])."""

    model_config = {"arbitrary_types_allowed": True}

    rubric: Rubric | None
    findings: list[Finding]

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "error"]

    def report(self, lang: Lang = "en") -> str:
        if not self.findings:
            return "✔ 校验通过（0 个错误，0 个警告）" if lang == "zh" else "✔ valid (0 errors, 0 warnings)"
        return "\n".join(say_problem(Problem.of(f), lang) for f in self.findings)     # en: as validate prints


def check_draft(yaml_text: str, name: str) -> DraftCheck:
    """Validate a draft's YAML exactly as `rubriceval validate` does (it is written to a private temporary file
    named like the rubric's own, so every message names that file, line and field)."""
    safe = Path(name).name or "draft.yaml"
    with tempfile.TemporaryDirectory(prefix="rubriceval-studio-") as folder:
        path = Path(folder) / safe
        path.write_text(yaml_text, encoding="utf-8")
        rubrics, findings = validate_path(path)
        for finding in findings:
            finding.file = finding.file.replace(str(path), safe)
        rubric = rubrics[0] if rubrics else None
        if rubric is not None:
            rubric = rubric.model_copy(update={"source_file": None})
    return DraftCheck(rubric=rubric, findings=findings)


class CheckLine(BaseModel):
    """One deterministic check on the tried text: passed or not (None: needs the judge), and its evidence."""

    item: str
    type: str
    passed: bool | None
    detail: str
    span: str | None = None
    turn: int | None = None


def try_checks(rubric: Rubric, sample: Sample) -> list[CheckLine]:
    """Every deterministic check of the rubric on one sample (a pasted answer is a sample with that answer)."""
    lines = []
    knowledge = _knowledge_passages(rubric)
    for item in rubric.check_items:
        evidence = run_check(item, sample, knowledge)
        lines.append(CheckLine(item=item.id, type=item.type, passed=evidence.passed, detail=evidence.detail or "",
                               span=evidence.span, turn=evidence.turn))
    return lines


def _knowledge_passages(rubric: Rubric) -> list[str] | None:
    """The rubric's knowledge file, as a run's context conditions read it (None: none, or unreadable — validation
    names that error)."""
    from rubriceval.scoring.turn_questions import rubric_knowledge

    try:
        knowledge = rubric_knowledge(rubric)
    except RubricEvalError:
        return None
    return knowledge.passages if knowledge is not None else None


def pasted_sample(answer: str, question: str = "") -> Sample:
    return Sample(id="pasted", question=question or "(pasted)", answer=answer)


def preview(rubric: Rubric, sample: Sample, *, structured: bool = True) -> str:
    """The messages the judge will receive for this sample, as `rubriceval compile` prints them."""
    reason = why_not(rubric, sample)
    head = f"(rubric '{rubric.id}' does not apply to sample '{sample.id}': {reason}; a run skips it)\n" if reason \
        else ""
    prompts = compile_rubric(rubric, sample, structured=structured)
    if not prompts:
        return head + f"rubric '{rubric.id}' has no judge items: it is scored by deterministic checks only."
    return head + prompts_text(prompts)


def pick_samples(samples: Sequence[Sample], rubric: Rubric | None, rule: PickRule, n: int, *, tag: str = "",
                 failing: set[str] | frozenset[str] = frozenset(), seed: int = 0) -> list[Sample]:
    """N samples to try a draft on: random (seeded), by tag, the ones an earlier verdict failed, or the first —
    only samples the draft applies to."""
    if n < 1:
        raise RubricEvalError("pick at least one sample", field="n")
    pool = [s for s in samples if rubric is None or why_not(rubric, s) is None]
    if rule == "tag":
        if not tag.strip():
            raise RubricEvalError("name the tag to pick samples by", field="tag")
        pool = [s for s in pool if tag.strip() in s.tags]
    elif rule == "failing":
        pool = [s for s in pool if s.id in failing]
    elif rule == "random":
        pool = random.Random(seed).sample(pool, k=len(pool))
    return pool[:n]
