"""HTML for one audit item: the sample on the left, the rubric and the judge's verdict on the right.

Every piece of user or model text goes through html.escape: answers come from a chatbot and may contain markup.
"""
from __future__ import annotations

import difflib
import html
from typing import Any

from rubriceval import Evidence, Verdict
from rubriceval.safety.redaction import restore_for_expert
from rubriceval.store.audit_models import AuditItem, GroundTruthEdit, iso_time


def esc(text: Any) -> str:
    return html.escape("" if text is None else str(text))


def _para(text: str) -> str:
    return esc(text).replace("\n", "<br>")


def highlight_spans(answer: str, evidence: list[Evidence]) -> str:
    """The answer with every evidence span a check found marked (and titled with the check id)."""
    spans = sorted((e.start, e.start + len(e.span), e.item) for e in evidence
                   if e.span and e.start is not None and answer[e.start:e.start + len(e.span)] == e.span)
    out, cursor = [], 0
    for start, end, item in spans:
        if start < cursor:          # overlapping spans: keep the first, the rest are listed under evidence anyway
            continue
        out.append(_para(answer[cursor:start]))
        out.append(f'<mark class="ev-span" title="{esc(item)}">{_para(answer[start:end])}</mark>')
        cursor = end
    out.append(_para(answer[cursor:]))
    return "".join(out)


def text_diff(before: str, after: str) -> str:
    """Character-level diff (Chinese has no spaces to split words on): deletions struck, insertions underlined."""
    matcher = difflib.SequenceMatcher(a=before, b=after, autojunk=False)
    parts = []
    for op, a0, a1, b0, b1 in matcher.get_opcodes():
        if op == "equal":
            parts.append(_para(before[a0:a1]))
        if op in ("delete", "replace"):
            parts.append(f"<del>{_para(before[a0:a1])}</del>")
        if op in ("insert", "replace"):
            parts.append(f"<ins>{_para(after[b0:b1])}</ins>")
    return "".join(parts)


def _section(title: str, body: str, css: str = "") -> str:
    return f'<section class="audit-sec {css}"><h4>{esc(title)}</h4><div class="audit-body">{body}</div></section>'


def sample_html(item: AuditItem) -> str:
    sample, original = item.sample, item.original
    parts = [f'<div class="audit-meta">{esc(item.run_name)} · sample <code>{esc(sample.id)}</code>'
             + (f" · intent <b>{esc(sample.intent)}</b>" if sample.intent else "")
             + "".join(f' <span class="tag">{esc(t)}</span>' for t in sample.tags) + "</div>",
             _section("Question", _para(sample.question)),
             _section("Answer", highlight_spans(sample.answer, item.verdict.evidence) or "<i>(empty)</i>")]
    contexts = []
    for index, text in enumerate(sample.contexts):
        mark = item.context_marks.get(index)
        if mark is None:
            badge = '<span class="ctx-badge ctx-none">not marked</span>'
        else:
            kind = "relevant" if mark.relevant else "irrelevant"
            badge = (f'<span class="ctx-badge ctx-{kind}" title="{esc(mark.editor)}, {iso_time(mark.edited_at)}">'
                     f'{kind}</span>')
        in_reference = ' <span class="ctx-badge ctx-ref">reference</span>' if text in sample.reference_contexts else ""
        contexts.append(f'<li><b>#{index + 1}</b> {badge}{in_reference}<div>{_para(text)}</div></li>')
    parts.append(_section(f"Retrieved contexts ({len(sample.contexts)})",
                          f'<ol class="ctx-list">{"".join(contexts)}</ol>' if contexts else "<i>none</i>"))
    if sample.ground_truth != original.ground_truth:
        gt_body = (f'<div>{_para(sample.ground_truth) or "<i>(empty)</i>"}</div>'
                   f'<div class="gt-diff"><small>changed from the run\'s value:</small><br>'
                   f'{text_diff(original.ground_truth, sample.ground_truth)}</div>')
        parts.append(_section("Ground truth (corrected)", gt_body, "gt-edited"))
    else:
        parts.append(_section("Ground truth", _para(sample.ground_truth) or "<i>(none)</i>"))
    return f'<div class="audit-panel">{"".join(parts)}</div>'


def _score_text(verdict: Verdict) -> str:
    if verdict.score is None:
        return (f'<span class="unscored">unscored ({esc(verdict.unscored_kind)})</span>: '
                f'{esc(verdict.unscored_reason)}')
    passed = "" if verdict.passed is None else (" ✓ pass" if verdict.passed else " ✗ below threshold")
    return f'<span class="judge-score">{verdict.score:g}</span>{passed}'


def _evidence_rows(evidence: list[Evidence]) -> str:
    rows = []
    for e in evidence:
        status = "—" if e.passed is None else ("✓" if e.passed else "✗")
        found = f"<br><small>found: <q>{esc(e.span)}</q></small>" if e.span else ""
        missing = f"<br><small>missing: {esc(', '.join(e.missing))}</small>" if e.missing else ""
        score = f" ({e.score:g})" if e.score is not None else ""
        rows.append(f'<tr class="{"ev-fail" if e.passed is False else ""}"><td>{status}</td>'
                    f"<td><code>{esc(e.item)}</code>{score}</td><td>{_para(e.detail)}{found}{missing}</td></tr>")
    return f'<table class="ev-table">{"".join(rows)}</table>' if rows else "<i>no evidence recorded</i>"


def rubric_levels(rubric: dict[str, Any]) -> dict[int, str]:
    """score_descriptions as {1..5: text}; JSON turns the int keys into strings."""
    levels = rubric.get("score_descriptions") or {}
    return {int(k): str(v) for k, v in levels.items() if str(k).isdigit()}


def judge_html(item: AuditItem) -> str:
    rubric, verdict = item.rubric, item.verdict
    feedback = restore_for_expert(verdict.feedback, verdict.details)   # judge.redact: the expert sees the originals
    name = rubric.get("name") or verdict.scorer
    levels = rubric_levels(rubric)
    level_rows = "".join(
        f'<li class="{"judge-level" if verdict.score == level else ""}"><b>{level}</b> {_para(text)}</li>'
        for level, text in sorted(levels.items()))
    threshold = rubric.get("threshold")
    parts = [f'<div class="audit-meta">rubric <b>{esc(name)}</b> <code>{esc(verdict.scorer)}</code> '
             f'<small>{esc(item.scorer_version)}</small>'
             + (f" · pass threshold {threshold:g}" if isinstance(threshold, (int, float)) else "") + "</div>",
             _section("Criterion", _para(rubric.get("criterion", "")) or "<i>(definition not stored)</i>"),
             _section("Score levels", f'<ol class="levels">{level_rows}</ol>' if level_rows else "<i>—</i>"),
             _section("Judge", f"<div>{_score_text(verdict)}</div>"
                               f'<div class="feedback">{_para(feedback) or "<i>no feedback</i>"}</div>',
                      "judge-box"),
             _section("Evidence", _evidence_rows(verdict.evidence))]
    if item.responses:
        rows = "".join(
            f'<li><b>{esc(r.expert)}</b>: {r.score} ({esc(r.action)})'
            + (f" — {_para(r.reason)}" if r.reason else "") + f' <small>{iso_time(r.updated_at)}</small></li>'
            for r in item.responses)
        parts.append(_section(f"Expert responses ({len(item.responses)})", f"<ul>{rows}</ul>"))
    if item.other_verdicts:
        rows = "".join(f"<li><code>{esc(v.scorer)}</code> {esc(v.kind)}: "
                       + (f"{v.score:g}" if v.score is not None else f"unscored ({esc(v.unscored_kind)})")
                       + "</li>" for v in item.other_verdicts)
        parts.append(_section("Other scores for this sample", f'<ul class="others">{rows}</ul>'))
    return f'<div class="audit-panel">{"".join(parts)}</div>'


def history_html(edits: list[GroundTruthEdit]) -> str:
    if not edits:
        return ""
    rows = []
    for e in reversed(edits):
        if e.field.startswith("context:"):
            index = int(e.field.split(":", 1)[1]) + 1
            before = {True: "relevant", False: "irrelevant", None: "not marked"}[e.before]
            after = "relevant" if e.after else "irrelevant"
            change = f"context #{index}: {before} → {after}"
        else:
            change = f"ground truth: {text_diff(str(e.before), str(e.after))}"
        rows.append(f"<li><b>{esc(e.editor)}</b> <small>{iso_time(e.edited_at)}</small> — {change}</li>")
    return f'<details class="gt-history"><summary>Edit history ({len(edits)})</summary><ul>{"".join(rows)}</ul></details>'
