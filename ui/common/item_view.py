"""HTML for one audit item: the sample on the left, the rubric and the judge's verdict on the right.

Every piece of user or model text goes through html.escape: answers come from a chatbot and may contain markup.
"""
from __future__ import annotations

import difflib
import html
from typing import Any

from rubriceval import Evidence, Verdict
from rubriceval.i18n import Lang, evidence_text, t
from rubriceval.safety.redaction import restore_for_expert
from rubriceval.store.audit_models import AuditItem, GroundTruthEdit, iso_time


def esc(text: Any) -> str:
    return html.escape("" if text is None else str(text))


def paragraph_html(text: str) -> str:
    return esc(text).replace("\n", "<br>")


def highlight_spans(answer: str, evidence: list[Evidence]) -> str:
    """The answer with every evidence span a check found marked (and titled with the check id)."""
    spans = sorted((e.start, e.start + len(e.span), e.item) for e in evidence
                   if e.span and e.start is not None and answer[e.start:e.start + len(e.span)] == e.span)
    out, cursor = [], 0
    for start, end, item in spans:
        if start < cursor:          # overlapping spans: keep the first, the rest are listed under evidence anyway
            continue
        out.append(paragraph_html(answer[cursor:start]))
        out.append(f'<mark class="ev-span" title="{esc(item)}">{paragraph_html(answer[start:end])}</mark>')
        cursor = end
    out.append(paragraph_html(answer[cursor:]))
    return "".join(out)


def text_diff(before: str, after: str) -> str:
    """Character-level diff (Chinese has no spaces to split words on): deletions struck, insertions underlined."""
    matcher = difflib.SequenceMatcher(a=before, b=after, autojunk=False)
    parts = []
    for op, a0, a1, b0, b1 in matcher.get_opcodes():
        if op == "equal":
            parts.append(paragraph_html(before[a0:a1]))
        if op in ("delete", "replace"):
            parts.append(f"<del>{paragraph_html(before[a0:a1])}</del>")
        if op in ("insert", "replace"):
            parts.append(f"<ins>{paragraph_html(after[b0:b1])}</ins>")
    return "".join(parts)


def _section(title: str, body: str, css: str = "") -> str:
    return f'<section class="audit-sec {css}"><h4>{esc(title)}</h4><div class="audit-body">{body}</div></section>'


def _say(key: str, lang: Lang, **params: Any) -> str:
    return esc(t(key, lang, **params))


def sample_html(item: AuditItem, lang: Lang = "en") -> str:
    sample, original = item.sample, item.original
    empty = f"<i>{_say('ui_empty', lang)}</i>"
    parts = [f'<div class="audit-meta">{esc(item.run_name)} · {_say("ui_meta_sample", lang)} '
             f'<code>{esc(sample.id)}</code>'
             + (f" · {_say('ui_meta_intent', lang)} <b>{esc(sample.intent)}</b>" if sample.intent else "")
             + "".join(f' <span class="tag">{esc(tag)}</span>' for tag in sample.tags) + "</div>",
             _section(t("question", lang), paragraph_html(sample.question)),
             _section(t("answer", lang), highlight_spans(sample.answer, item.verdict.evidence) or empty)]
    contexts = []
    for index, text in enumerate(sample.contexts):
        mark = item.context_marks.get(index)
        if mark is None:
            badge = f'<span class="ctx-badge ctx-none">{_say("ui_ctx_not_marked", lang)}</span>'
        else:
            kind = "relevant" if mark.relevant else "irrelevant"
            badge = (f'<span class="ctx-badge ctx-{kind}" title="{esc(mark.editor)}, {iso_time(mark.edited_at)}">'
                     f'{_say(f"ui_ctx_{kind}", lang)}</span>')
        in_reference = (f' <span class="ctx-badge ctx-ref">{_say("ui_ctx_reference", lang)}</span>'
                        if text in sample.reference_contexts else "")
        contexts.append(f'<li><b>#{index + 1}</b> {badge}{in_reference}<div>{paragraph_html(text)}</div></li>')
    parts.append(_section(t("ui_contexts_n", lang, n=len(sample.contexts)),
                          f'<ol class="ctx-list">{"".join(contexts)}</ol>' if contexts
                          else f"<i>{_say('none', lang)}</i>"))
    if sample.ground_truth != original.ground_truth:
        gt_body = (f'<div>{paragraph_html(sample.ground_truth) or empty}</div>'
                   f'<div class="gt-diff"><small>{_say("ui_changed_from", lang)}</small><br>'
                   f'{text_diff(original.ground_truth, sample.ground_truth)}</div>')
        parts.append(_section(t("ui_gt_corrected", lang), gt_body, "gt-edited"))
    else:
        parts.append(_section(t("ground_truth", lang),
                              paragraph_html(sample.ground_truth) or f"<i>{_say('ui_none_paren', lang)}</i>"))
    return f'<div class="audit-panel">{"".join(parts)}</div>'


def _score_text(verdict: Verdict, lang: Lang) -> str:
    if verdict.score is None:
        return (f'<span class="unscored">{_say("ui_unscored_kind", lang, kind=verdict.unscored_kind)}</span>: '
                f'{esc(verdict.unscored_reason)}')
    passed = "" if verdict.passed is None else " " + _say("ui_pass" if verdict.passed else "ui_below", lang)
    return f'<span class="judge-score">{verdict.score:g}</span>{passed}'


def _evidence_rows(evidence: list[Evidence], lang: Lang) -> str:
    rows = []
    for e in evidence:
        status = "—" if e.passed is None else ("✓" if e.passed else "✗")
        said = evidence_text(e, lang)
        found = f"<br><small>{_say('ui_found', lang)}: <q>{esc(e.span)}</q></small>" if e.span else ""
        # The evidence text already names what is missing; the bare list only when there is no text.
        missing = (f"<br><small>{_say('ui_missing', lang)}: {esc(', '.join(e.missing))}</small>"
                   if e.missing and not said else "")
        score = f" ({e.score:g})" if e.score is not None else ""
        rows.append(f'<tr class="{"ev-fail" if e.passed is False else ""}"><td>{status}</td>'
                    f"<td><code>{esc(e.item)}</code>{score}</td><td>{paragraph_html(said)}{found}{missing}</td></tr>")
    return (f'<table class="ev-table">{"".join(rows)}</table>' if rows
            else f"<i>{_say('ui_no_evidence', lang)}</i>")


def rubric_levels(rubric: dict[str, Any]) -> dict[int, str]:
    """score_descriptions as {1..5: text}; JSON turns the int keys into strings."""
    levels = rubric.get("score_descriptions") or {}
    return {int(k): str(v) for k, v in levels.items() if str(k).isdigit()}


def judge_html(item: AuditItem, lang: Lang = "en") -> str:
    rubric, verdict = item.rubric, item.verdict
    feedback = restore_for_expert(verdict.feedback, verdict.details)   # judge.redact: the expert sees the originals
    name = rubric.get("name") or verdict.scorer
    levels = rubric_levels(rubric)
    level_rows = "".join(
        f'<li class="{"judge-level" if verdict.score == level else ""}"><b>{level}</b> {paragraph_html(text)}</li>'
        for level, text in sorted(levels.items()))
    threshold = rubric.get("threshold")
    parts = [f'<div class="audit-meta">{_say("ui_meta_rubric", lang)} <b>{esc(name)}</b> '
             f'<code>{esc(verdict.scorer)}</code> <small>{esc(item.scorer_version)}</small>'
             + (_say("ui_pass_threshold", lang, threshold=f"{threshold:g}") if isinstance(threshold, (int, float))
                else "") + "</div>",
             _section(t("ui_criterion", lang),
                      paragraph_html(rubric.get("criterion", "")) or f"<i>{_say('ui_no_definition', lang)}</i>"),
             _section(t("ui_levels", lang), f'<ol class="levels">{level_rows}</ol>' if level_rows else "<i>—</i>"),
             _section(t("ui_judge", lang), f"<div>{_score_text(verdict, lang)}</div><div class=\"feedback\">"
                      f"{paragraph_html(feedback) or '<i>' + _say('ui_no_feedback', lang) + '</i>'}</div>", "judge-box"),
             _section(t("evidence", lang), _evidence_rows(verdict.evidence, lang))]
    if item.responses:
        rows = "".join(
            f'<li><b>{esc(r.expert)}</b>: {r.score} ({_say(f"ui_action_{r.action}", lang)})'
            + (f" — {paragraph_html(r.reason)}" if r.reason else "") + f' <small>{iso_time(r.updated_at)}</small></li>'
            for r in item.responses)
        parts.append(_section(t("ui_responses", lang, n=len(item.responses)), f"<ul>{rows}</ul>"))
    if item.other_verdicts:
        rows = "".join(f"<li><code>{esc(v.scorer)}</code> {_say(f'kind_{v.kind}', lang)}: "
                       + (f"{v.score:g}" if v.score is not None
                          else _say("ui_unscored_kind", lang, kind=v.unscored_kind))
                       + "</li>" for v in item.other_verdicts)
        parts.append(_section(t("ui_other_scores", lang), f'<ul class="others">{rows}</ul>'))
    return f'<div class="audit-panel">{"".join(parts)}</div>'


def history_html(edits: list[GroundTruthEdit], lang: Lang = "en") -> str:
    if not edits:
        return ""
    rows = []
    mark = {True: t("ui_ctx_relevant", lang), False: t("ui_ctx_irrelevant", lang), None: t("ui_ctx_not_marked", lang)}
    for e in reversed(edits):
        if e.field.startswith("context:"):
            change = _say("ui_history_context", lang, n=int(e.field.split(":", 1)[1]) + 1, before=mark[e.before],
                          after=mark[bool(e.after)])
        else:
            change = f"{_say('ui_history_gt', lang)}{text_diff(str(e.before), str(e.after))}"
        rows.append(f"<li><b>{esc(e.editor)}</b> <small>{iso_time(e.edited_at)}</small> — {change}</li>")
    return (f'<details class="gt-history"><summary>{_say("ui_history", lang, n=len(edits))}</summary>'
            f'<ul>{"".join(rows)}</ul></details>')
