"""HTML of the team app: one item as an expert may see it (blind until they saved), the rubric without the judge,
and every expert's opinion side by side for the lead.

Blind review is decided here, on the server: before the expert's save, the item is rendered from a copy whose
verdict is emptied (no score, feedback, evidence spans, other rubrics' scores, other experts' responses), so the
judge's verdict is not in the page at all — not merely hidden by CSS.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rubriceval import Verdict
from rubriceval.i18n import Lang, t
from rubriceval.store.audit_models import AuditItem
from rubriceval.store.team_models import Opinion
from rubriceval.ui.common.item_view import esc, judge_html, rubric_levels, sample_html
from rubriceval.ui.common.transcript_view import conversation_panel


def without_judge(item: AuditItem) -> AuditItem:
    """The item with nothing of the judge's verdict, nor of anyone else's opinion."""
    # model_copy, not a new Verdict: an emptied verdict is neither a score nor "unscored with a reason" — it is
    # only ever rendered, never stored.
    blank = item.verdict.model_copy(update={"score": None, "passed": None, "feedback": "", "evidence": [],
                                            "details": {}, "unscored_kind": None, "unscored_reason": None})
    return item.model_copy(update={"verdict": blank, "responses": [], "other_verdicts": []})


def item_sample_html(item: AuditItem, lang: Lang, *, judge_shown: bool) -> str:
    """The sample (a conversation as a transcript); with the judge's evidence marks only once it may be seen."""
    shown = item if judge_shown else without_judge(item)
    return sample_html(shown, lang) if shown.sample.conversation is None else conversation_panel(shown, lang)


def rubric_html(rubric: dict[str, Any], scorer: str, lang: Lang) -> str:
    """What the expert scores against: the rubric's name, criterion and five levels — no judge."""
    levels = "".join(f"<li><b>{level}</b> {esc(text)}</li>" for level, text in sorted(rubric_levels(rubric).items()))
    return (f'<div class="audit-panel"><div class="audit-meta">{esc(t("team_rubric_head", lang))} '
            f'<b>{esc(rubric.get("name") or scorer)}</b> <code>{esc(scorer)}</code></div>'
            f'<section class="audit-sec"><h4>{esc(t("team_criterion", lang))}</h4>'
            f'<div class="audit-body">{esc(rubric.get("criterion", ""))}</div></section>'
            f'<section class="audit-sec"><h4>{esc(t("team_levels", lang))}</h4>'
            f'<ol class="levels">{levels}</ol></section></div>')


def judge_panel_html(item: AuditItem, lang: Lang, *, judge_shown: bool, viewer: str, lead: bool) -> str:
    """After the save (or on an open task): the judge's verdict. Before: a notice, and nothing of the verdict.
    The experts' responses are left out: their scores are in the opinions table (the lead's) or the score box (the
    expert's own), and the single-expert app's "agree/override" marks would say an expert reacted to a judge they
    never saw in a blind task."""
    if not judge_shown:
        return f'<div class="judge-hidden" id="judge-hidden">{esc(t("team_judge_hidden", lang))}</div>'
    return judge_html(item.model_copy(update={"responses": []}), lang)


def _pass_mark(score: float | None, threshold: float | None, lang: Lang) -> str:
    """✓ pass / ✗ below threshold beside a score, so a pass/fail split is visible in the table itself."""
    if score is None or threshold is None:
        return ""
    return f' <span class="opinion-pass">{esc(t("ui_pass" if score >= threshold else "ui_below", lang))}</span>'


def opinions_html(opinions: Sequence[Opinion], lang: Lang, *, threshold: float | None = None,
                  judge: Verdict | None = None) -> str:
    """Every assigned expert's opinion on one item, in one table (the lead's adjudication view), each score marked
    pass or below the rubric's threshold; the judge's verdict in the last row, to compare without scrolling."""
    head = "".join(f"<th>{esc(t(key, lang))}</th>" for key in
                   ("team_col_expert", "team_col_state", "team_col_opinion", "team_col_blind", "team_col_tags",
                    "team_col_note"))
    rows = []
    for o in opinions:
        blind = "—" if o.blind is None else t("team_yes" if o.blind else "team_no", lang)
        score = (f'<span class="judge-score">{o.score}</span>{_pass_mark(o.score, threshold, lang)}'
                 if o.score is not None else "—")
        rows.append(f'<tr class="opinion-{o.state}"><td><b>{esc(o.expert)}</b></td>'
                    f'<td>{esc(t(f"team_state_{o.state}", lang))}</td><td>{score}</td><td>{esc(blind)}</td>'
                    f'<td>{esc("、".join(o.tags) if lang == "zh" else ", ".join(o.tags))}</td>'
                    f'<td>{esc(o.note)}</td></tr>')
    if judge is not None:
        score = (f'<span class="judge-score">{judge.score:g}</span>{_pass_mark(judge.score, threshold, lang)}'
                 if judge.score is not None else "—")
        rows.append(f'<tr class="opinion-judge"><td><b>{esc(t("ui_judge", lang))}</b></td><td>—</td>'
                    f'<td>{score}</td><td>—</td><td>—</td>'
                    f'<td>{esc(judge.feedback or judge.unscored_reason or "")}</td></tr>')
    return (f'<div class="audit-panel" id="opinions"><h4>{esc(t("team_opinions", lang))}</h4>'
            f'<table class="ev-table opinions"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'
            f'</div>')
