"""What a scorecard review shows, in the audit app and the team app alike: the run's scorecard verdicts as a table,
and one verdict's deductions (each with its evidence: turn and quoted span, or the judge's feedback and p(yes), and
the latest review) above the transcript, where the turns a deduction cites are marked and its spans highlighted.
Every piece of conversation and reviewer text is escaped (hostile input)."""
from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from rubriceval.audit.scorecard_reviews import Review, latest
from rubriceval.data.sample import Sample
from rubriceval.i18n import Lang, evidence_text, t
from rubriceval.scorecard.verdict import CardItemOutcome, ScorecardVerdict
from rubriceval.ui.common.item_view import esc
from rubriceval.ui.common.transcript_view import Citation, TurnMarks, transcript_html


def decision_choices(lang: Lang) -> list[tuple[str, str]]:
    """clear: decides an item the judge left undecided (or re-affirms a machine clear) without a deduction."""
    return [(t("scr_confirm", lang), "confirm"), (t("scr_reject", lang), "reject"), (t("scr_missed", lang), "missed"),
            (t("scr_clear_choice", lang), "clear"), (t("scr_na", lang), "na")]


def decision_text(decision: str, lang: Lang) -> str:
    """A saved decision (stored as confirm / reject / missed) as the page says it."""
    return t(f"scr_decided_{decision}", lang)


def verdict_key(v: ScorecardVerdict) -> str:
    return f"{v.sample_id}|{v.scorecard}"


def verdict_choices(verdicts: Sequence[ScorecardVerdict]) -> list[tuple[str, str]]:
    return [(f"{v.sample_id} · {v.scorecard}", verdict_key(v)) for v in verdicts]


def _total(v: ScorecardVerdict, lang: Lang) -> str:
    """The total, or why there is none: awaiting review (with the range a reviewer can still give it) or unscored."""
    if v.totals.awaiting_review:
        low, high = v.totals.total_range or ("?", "?")
        return t("aw_total", lang, low=low, high=high)
    return t("scr_unscored", lang) if v.totals.total is None else f"{v.totals.total}/{v.totals.base}"


def _official(total: int | None) -> str:
    return "—" if total is None else str(total)


def verdicts_frame(verdicts: Sequence[ScorecardVerdict], reviews: Sequence[Review], lang: Lang,
                   official: dict[tuple[str, str], int | None] | None = None) -> pd.DataFrame:
    """official: (sample, scorecard) → the official total (audit/scorecard_official.official_totals), a column."""
    decided = latest(reviews)
    rows = []
    for v in verdicts:
        hits = [o.item for o in v.outcomes if o.status == "hit"]
        done = sum((v.sample_id, o.item) in decided and decided[(v.sample_id, o.item)].scorecard == v.scorecard
                   for o in v.outcomes)
        rows.append({t("ui_col_sample", lang): v.sample_id, t("ui_col_scorecard", lang): v.scorecard,
                     t("scr_total", lang): _total(v, lang),
                     t("scr_deductions", lang): ", ".join(hits) or "—", t("scr_reviewed", lang): done,
                     **({t("appeal_ui_official", lang): _official(official.get((v.sample_id, v.scorecard)))}
                        if official is not None else {})})
    return pd.DataFrame(rows, dtype=object)


def _points(v: ScorecardVerdict) -> dict[str, int]:
    return {p.item: p.points for p in v.totals.items}


def _evidence(o: CardItemOutcome, lang: Lang) -> str:
    parts = []
    for e in o.evidence:
        where = t("scr_turn", lang, turn=e.turn) + " · " if e.turn is not None else ""
        said = e.span or evidence_text(e, lang) or e.question or ""      # a check's words in the page's language
        p_yes = f" · p(yes) {e.p_yes:.2f}" if e.p_yes is not None else ""
        parts.append(f"<li>{esc(where)}<q>{esc(said)}</q>{esc(p_yes)}</li>")
    if o.p_yes is not None and not any(e.p_yes is not None for e in o.evidence):
        parts.append(f"<li>p(yes) {o.p_yes:.2f}</li>")
    if o.reason:
        parts.append(f"<li>{esc(o.reason)}</li>")
    return f"<ul class='scr-evidence'>{''.join(parts)}</ul>" if parts else ""


def _flags(v: ScorecardVerdict, lang: Lang) -> str:
    """Fatal hits and N/A items named on the head line: both change how the total reads."""
    out = ""
    if v.totals.fatal:
        out += f" · <span class='scr-fatal'>{esc(t('scr_fatal', lang))}: {esc(', '.join(v.totals.fatal))}</span>"
    if v.totals.not_applicable:
        out += f" · <span class='scr-na'>N/A: {esc(', '.join(v.totals.not_applicable))}</span>"
    if v.totals.unscored_reason:
        out += f" · <span class='scr-unscored'>{esc(v.totals.unscored_reason)}</span>"
    return out


def deduction_marks(v: ScorecardVerdict, n_turns: int, lang: Lang) -> dict[int, TurnMarks]:
    """Turn number → the hit items citing it: the bubble marked, the quoted span highlighted under the item's id."""
    marks: dict[int, TurnMarks] = {}
    points = _points(v)
    for o in v.outcomes:
        if o.status != "hit":
            continue
        for e in o.evidence:
            if e.turn is None or not 1 <= e.turn <= n_turns:
                continue
            mark = marks.setdefault(e.turn, TurnMarks())
            # A deduction's turn is a failing one even where its check "passed" (a bonus item's hit is green).
            passed = points.get(o.item, 0) > 0
            mark.citations.append(Citation(source=o.item, passed=passed, text=evidence_text(e, lang) or e.span or ""))
            mark.evidence.append(e.model_copy(update={"item": o.item}))
    return marks


def _status(o: CardItemOutcome, lang: Lang) -> str:
    """hit, clear, N/A, unscored, undecided (awaiting review), or a machine decision pending review."""
    if o.awaiting_review and o.status in ("hit", "clear"):
        return t(f"scr_status_pending_{o.status}", lang)
    return t(f"scr_status_{o.status}", lang)


def _value(v: ScorecardVerdict, o: CardItemOutcome, points: dict[str, int]) -> str:
    """A hit's signed points; a fatal item's are its 一票否决, named beside it, not a "+0"."""
    if o.status != "hit" or o.item not in points or o.item in v.totals.fatal:
        return ""
    return f" {points[o.item]:+d}"


def item_choices(v: ScorecardVerdict, reviews: Sequence[Review], lang: Lang = "en") -> list[tuple[str, str]]:
    """Hits first (to confirm or reject), then the rest (where a missed one can be added)."""
    decided = {item: r for (sample, item), r in latest(reviews).items() if sample == v.sample_id}
    points = _points(v)
    ordered = sorted(v.outcomes, key=lambda o: o.status != "hit")
    out = []
    for o in ordered:
        label = f"{o.item} · {_status(o, lang)}{_value(v, o, points)}"
        if o.item in v.totals.fatal:
            label += f" · {t('scr_fatal', lang)}"
        if o.item in decided:
            label += f" · {decision_text(decided[o.item].decision, lang)}"
        out.append((label, o.item))
    return out


def verdict_html(v: ScorecardVerdict, sample: Sample, reviews: Sequence[Review], lang: Lang,
                 names: dict[str, str] | None = None, official: int | None | bool = False) -> str:
    """names: item id → the name the card gives it (未使用欢迎语), shown beside the id; official: the official total
    (audit/scorecard_official.py) shown beside the machine's (False: not shown)."""
    decided = {item: r for (sample_id, item), r in latest(reviews).items() if sample_id == v.sample_id}
    points = _points(v)
    names = names or {}

    def line(o: CardItemOutcome) -> str:
        review = decided.get(o.item)
        said = ""
        if review is not None:
            latest_text = t("scr_latest", lang, decision=decision_text(review.decision, lang),
                            reviewer=review.reviewer)
            note = f" · {esc(review.note)}" if review.note else ""
            said = f"<div class='scr-review'>{esc(latest_text)}{note}</div>"
        fatal = f" · {t('scr_fatal', lang)}" if o.item in v.totals.fatal else ""
        name = names.get(o.item, "")
        called = (f"<b>{esc(name)}</b> <code>{esc(o.item)}</code>" if name and name != o.item
                  else f"<b>{esc(o.item)}</b>")
        return (f"<li class='scr-{esc(o.status)}' data-item='{esc(o.item)}'>{called} "
                f"{esc(_status(o, lang))}{esc(_value(v, o, points))}{esc(fatal)}{_evidence(o, lang)}{said}</li>")

    hits = [line(o) for o in v.outcomes if o.status == "hit" and not o.awaiting_review]
    waiting = [line(o) for o in v.outcomes if o.awaiting_review]      # shown open: a reviewer decides these
    others = [line(o) for o in v.outcomes if o.status != "hit" and not o.awaiting_review]
    head = (f"<p><b>{esc(v.sample_id)}</b> · {esc(v.scorecard)} ({esc(v.version)}) · {esc(t('scr_total', lang))} "
            f"<b class='scr-total'>{esc(_total(v, lang))}</b>"
            + ("" if official is False else f" · {esc(t('appeal_ui_official', lang))} "
               f"<b class='official-score'>{esc(_official(official))}</b>")
            + f"{_flags(v, lang)}</p>")
    deductions = (f"<h4>{esc(t('scr_deductions', lang))}</h4><ul class='scr-hits'>{''.join(hits)}</ul>" if hits
                  else f"<p>{esc(t('scr_no_deduction', lang))}</p>")
    if waiting:
        deductions += (f"<h4>{esc(t('aw_total_plain', lang))}</h4><ul class='scr-awaiting'>{''.join(waiting)}</ul>")
    rest = f"<details><summary>{esc(t('scr_other_items', lang))}</summary><ul>{''.join(others)}</ul></details>"
    if sample.conversation is not None:
        marks = deduction_marks(v, len(sample.conversation.turns), lang)
        body = transcript_html(sample.conversation, None, lang, marks=marks)
    else:
        body = f"<p class='q'>{esc(sample.question)}</p><p class='a'>{esc(sample.answer)}</p>"
    return f"<div class='scorecard-review'>{head}{deductions}{rest}{body}</div>"
