"""`rubriceval validate`: load every rubric (collecting all errors, not just the first) and lint what the schema
cannot see: near-duplicate anchors, placeholders the template cannot fill, rubrics the judge cannot act on."""
from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel
from rapidfuzz.distance import Levenshtein

from rubriceval.common.errors import RubricEvalError
from rubriceval.rubric.checklist_lint import checklist_findings
from rubriceval.rubric.knowledge_lint import knowledge_findings
from rubriceval.rubric.measured import measured_findings
from rubriceval.rubric.schema import CONVERSATION_CHECKS, LEVELS, PER_TURN_CHECKS, JudgeItem, Rubric
from rubriceval.rubric.yaml_lines import field_label
from rubriceval.store.stored_sources import rubric_sources
from rubriceval.validate.template_lint import template_findings

NEAR_DUPLICATE = 0.9   # normalized similarity above which two anchors say the same thing


class Finding(BaseModel):
    severity: str        # "error" | "warning"
    stage: str = "lint"  # "load": the file is not a valid rubric (YAML/schema); "lint": it loads, lint found this
    file: str
    line: int | None = None
    field: str | None = None
    message: str

    def format(self) -> str:
        where = self.file + (f":{self.line}" if self.line else "") + (f" [{self.field}]" if self.field else "")
        return f"{self.severity}: {where}: {self.message}"


def _line(lines: dict, *path) -> int | None:
    return lines.get(tuple(path))


def lint_rubric(rubric: Rubric, lines: dict) -> list[Finding]:
    file = rubric.source_file or ""
    out: list[Finding] = []
    raw = rubric.model_dump(mode="python")

    def add(sev, msg, *path):
        out.append(Finding(severity=sev, file=file, line=_line(lines, *path) or _line(lines, path[0]) if path else None,
                           field=field_label(path, raw), message=msg))

    def check_levels(levels: dict[int, str], *path):
        for i, a in enumerate(LEVELS):
            for b in LEVELS[i + 1:]:
                sim = Levenshtein.normalized_similarity(levels[a], levels[b])
                if sim >= NEAR_DUPLICATE:
                    add("warning", f"score levels {a} and {b} are {sim:.0%} alike; the judge cannot tell them apart",
                        *path, b)

    check_levels(rubric.score_descriptions, "score_descriptions")
    for idx, item in enumerate(rubric.items):
        if isinstance(item, JudgeItem) and item.score_descriptions:
            check_levels(item.score_descriptions, "items", idx, "score_descriptions")
    for severity, message, *path in template_findings(rubric):      # criteria rendered in the prompt sandbox
        add(severity, message, *path)
    if rubric.judge_items and "answer" not in rubric.judge_sees and not rubric.is_conversation:
        add("warning", "the judge does not see the answer (judge_sees lacks 'answer')", "judge_sees")
    for finding in scope_mismatches(rubric):
        add("error", *finding)
    for i, ex in enumerate(rubric.examples):
        if not ex.feedback.strip():
            add("warning", "few-shot example without feedback teaches the judge nothing", "examples", i, "feedback")
    if rubric.examples and len({e.score for e in rubric.examples}) == 1 and len(rubric.examples) > 1:
        add("warning", "all few-shot examples have the same score; the judge may copy it", "examples")
    for severity, message, *path in checklist_findings(rubric):      # checklist items, few_shot options
        add(severity, message, *path)
    for severity, message, *path in measured_findings(rubric.measured, rubric.judge_mode, rubric.source_file):
        add(severity, message, *path)
    for severity, message, *path in knowledge_findings(rubric):      # the knowledge file exists and reads
        add(severity, message, *path)
    return out


def scope_mismatches(rubric: Rubric) -> list[tuple]:
    """(message, *field path) for checks that cannot run on what the rubric's scope judges: a conversation check
    in a single-turn rubric, or a single-turn check (without `turns:`) in a conversation rubric."""
    out: list[tuple] = []
    for idx, item in enumerate(rubric.items):
        per_turn = getattr(item, "turns", None)
        if not rubric.is_conversation:
            if item.type in CONVERSATION_CHECKS:
                out.append((f"'{item.type}' checks a conversation, but this rubric judges single-turn samples; set "
                            "scope: conversation (or assistant_turn)", "items", idx, "type"))
            elif per_turn:
                out.append(("`turns:` needs a conversation, but this rubric judges single-turn samples; set scope: "
                            "conversation (or assistant_turn)", "items", idx, "turns"))
        elif item.type not in ("judge", "checklist") and item.type not in CONVERSATION_CHECKS and not per_turn:
            fix = ("add `turns: assistant` to run it on every assistant turn" if item.type in PER_TURN_CHECKS
                   else f"'{item.type}' has no conversation form; use must_mention/regex with `turns: assistant`")
            out.append((f"'{item.type}' is a single-turn check in a conversation rubric: {fix}", "items", idx, "type"))
    return out


def validate_path(path: str | Path, store: str | Path | None = None) -> tuple[list[Rubric], list[Finding]]:
    """Every rubric under `path` (or of a `store:` source in the run store `store`: rubric/loader.rubric_sources)."""
    rubrics: list[Rubric] = []
    findings: list[Finding] = []
    ids: dict[str, str] = {}
    for source in rubric_sources(path, store):
        try:
            rubric = source.load()
        except RubricEvalError as exc:
            findings.append(Finding(severity="error", stage="load", file=exc.file or source.name, line=exc.line,
                                    field=exc.field, message=exc.message + (f" (hint: {exc.hint})" if exc.hint else "")))
            continue
        _, lines = source.yaml()
        if rubric.id in ids:
            findings.append(Finding(severity="error", file=source.name, line=_line(lines, "id"), field="id",
                                    message=f"id '{rubric.id}' is also used by {ids[rubric.id]}"))
        ids[rubric.id] = source.name
        findings += lint_rubric(rubric, lines)
        rubrics.append(rubric)
    return rubrics, findings
