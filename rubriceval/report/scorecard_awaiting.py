"""What the scorecard section says of items awaiting review (issues 39, 44) and of how each judgement item was decided,
for the Markdown, HTML and Excel outputs alike (report/scorecards.py draws them):

- a headline line: how many conversations await review (undecided items, machine decisions pending review), their
  share, that they are left out of the mean and pass rate, and the range their totals can still reach;
- the waiting conversations (the items that wait, each conversation's reachable range), up to AWAITING_SHOWN;
- a small table per card: each judgement item's outcomes by how they were decided on this judge in this run — rule,
  judge at a plain 0.5, judge with a calibrated cut-off, rubric, undecided, pending review (scorecard/decided.py).
"""
from __future__ import annotations

from rubriceval.i18n import Lang, format_percent, t
from rubriceval.report.scorecard_summary import ScorecardSummary
from rubriceval.scorecard.decided import HOW, How
from rubriceval.scorecard.verdict import Totals

AWAITING_SHOWN = 20


def total_text(totals: Totals, lang: Lang) -> str | None:
    """'awaiting review (92–100)' for a total that waits for a reviewer; None for any other total."""
    if not totals.awaiting_review:
        return None
    if totals.total_range is None:
        return t("aw_total_plain", lang)
    return t("aw_total", lang, low=totals.total_range[0], high=totals.total_range[1])


def awaiting_line(s: ScorecardSummary, lang: Lang) -> str | None:
    if not s.awaiting:
        return None
    low, high = s.awaiting_range or ("?", "?")
    return t("aw_counts", lang, n=s.n_awaiting, share=format_percent(s.awaiting_review_rate, lang),
             undecided=sum(1 for a in s.awaiting if a.undecided), pending=sum(1 for a in s.awaiting if a.pending),
             low=low, high=high)


def awaiting_headers(lang: Lang) -> list[str]:
    return [t(k, lang) for k in ("aw_conversation", "aw_undecided_items", "aw_pending_items", "aw_range")]


def awaiting_rows(s: ScorecardSummary, names: dict[str, str], lang: Lang) -> list[list[str]]:
    """The waiting conversations (the first AWAITING_SHOWN, then a line saying how many more)."""
    sep = "、" if lang == "zh" else ", "
    rows = [[a.sample_id, sep.join(names.get(i, i) for i in a.undecided), sep.join(names.get(i, i) for i in a.pending),
             "" if a.total_range is None else f"{a.total_range[0]}–{a.total_range[1]}"]
            for a in s.awaiting[:AWAITING_SHOWN]]
    if len(s.awaiting) > AWAITING_SHOWN:
        rows.append([t("aw_more", lang, n=len(s.awaiting) - AWAITING_SHOWN), "", "", ""])
    return rows


def _shown_ways(s: ScorecardSummary) -> list[How]:
    """The ways of deciding any judgement item of this card took (rule, judge … ), in HOW's order; the decision ways
    are always shown (rule, judge, calibrated judge, undecided), the others when they happened."""
    always = ("rule", "judge", "judge_calibrated", "undecided")
    used = {h for i in s.items if i.how for h, n in i.how.items() if n}
    return [h for h in HOW if h in always or h in used]


def how_headers(s: ScorecardSummary, lang: Lang) -> list[str]:
    return [t("how_item", lang), *(t(f"how_{h}", lang) for h in _shown_ways(s))]


def how_rows(s: ScorecardSummary) -> list[list[str]]:
    """A row per judgement item: its name, then its outcomes' counts per way of deciding."""
    ways = _shown_ways(s)
    return [[i.name, *(str(i.how.get(h, 0)) for h in ways)] for i in s.items if i.how is not None]


def how_lines(s: ScorecardSummary, lang: Lang) -> list[str]:
    """The same table as one text line per item (the workbook's figures above its rows are text lines)."""
    ways = _shown_ways(s)
    sep = "；" if lang == "zh" else "; "
    return [t("how_line", lang, item=i.name, counts=sep.join(f"{t(f'how_{h}', lang)} {i.how.get(h, 0)}"
                                                             for h in ways))
            for i in s.items if i.how is not None]
