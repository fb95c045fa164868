"""The report's automatic-acceptance section (issue 44; registered in report/sections.py as `auto_accept`): for each
scorecard of the run that states an `auto_accept` target, per item and overall (and for each rubric with one, as one
row: the rubric; trust/rubric_selective.py) — the accepted region, the coverage
(share of decisions accepted automatically), the agreement guaranteed there (the Clopper–Pearson lower bound the run's
fit reached), the reviewed decisions it was fitted on, the decisions pending review, the undecided ones and those
still without a person's decision; why an item accepts nothing ("cannot accept anything yet: N reviews"); and, over
the store's runs up to this one, the same figures run after run (trend/auto_accept.py), naming an item that dropped
out. Also the gate's figures (`auto_accept:<card> coverage>=…`, bare `min_auto_coverage` / `min_auto_agreement`)."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rubriceval.common.tables import markdown_table
from rubriceval.i18n import Lang, format_percent, say, t
from rubriceval.trend.auto_accept import AcceptancePoint, acceptance_trend
from rubriceval.trust.rubric_selective import acceptances
from rubriceval.trust.selective import AcceptanceRegion
from rubriceval.trust.selective_reviews import CardAcceptance

if TYPE_CHECKING:
    from rubriceval.report.gate_checks import GateCheck
    from rubriceval.report.gate_sources import GateTarget, SourceResults
    from rubriceval.report.inputs import ReportInputs


@dataclass
class AutoAcceptSection:
    cards: list[CardAcceptance]
    trend: list[AcceptancePoint] = field(default_factory=list)      # runs up to this one, these cards


def _targeted(inputs: ReportInputs) -> bool:
    """Whether a scorecard or a rubric of the run states a target (read from what the report holds already)."""
    from rubriceval.trust.selective import has_targets

    cards = inputs.scorecards
    if cards is not None and any(has_targets(c) for c in cards.cards):
        return True
    return any(row.get("kind") == "rubric" and (row.get("definition") or {}).get("auto_accept")
               for row in inputs.data.scorers)


def build(inputs: ReportInputs) -> AutoAcceptSection | None:
    """The section's data, None when no scorecard or rubric of the run states a target."""
    if not _targeted(inputs):
        return None
    runs, run_id = inputs.data.source.store, inputs.data.run_id
    accepted = acceptances(runs, run_id)
    if not accepted:
        return None
    ids = {c.scorecard for c in accepted}
    trend = [p for p in acceptance_trend(runs, until=run_id) if p.scorecard in ids]
    return AutoAcceptSection(cards=accepted, trend=trend if len({p.run_id for p in trend}) > 1 else [])


def region_text(region: AcceptanceRegion, lang: Lang) -> str:
    if region.accepts == "confident":
        return t("aa_region_confident", lang, threshold=f"{region.threshold:.2f}")
    return t("aa_region_all" if region.accepts == "all" else "aa_region_none", lang)


def _percent(value: float | None, lang: Lang) -> str:
    return "—" if value is None else format_percent(value, lang)


def card_heading(card: CardAcceptance, lang: Lang) -> str:
    target = card.items[0].region.target if card.items else None
    name = card.name if card.kind == "scorecard" else f"{t('aa_rubric', lang)} {card.name}"
    return t("aa_target", lang, card=name, judge=card.judge or "—",
             agreement=f"{target.agreement:.0%}" if target else "—",
             confidence=f"{target.confidence:.0%}" if target else "—")


def card_table(card: CardAcceptance, lang: Lang) -> tuple[list[str], list[list[str]]]:
    """The card's table: a row per item with a target, then the overall row."""
    head = [t(k, lang) for k in ("aa_item", "aa_region", "aa_coverage", "aa_guaranteed", "aa_reviewed",
                                 "aa_pending", "aa_undecided", "aa_waiting", "aa_note")]
    rows = []
    for row in card.items:
        region = row.region
        guaranteed = region.lower_bound if row.accepted else None
        rows.append([f"{row.name} ({row.item})" if row.name != row.item else row.item, region_text(region, lang),
                     _percent(row.coverage, lang), _percent(guaranteed, lang), str(region.n_reviewed),
                     str(row.pending), str(row.undecided), str(row.waiting),
                     say(region.reason, lang) if region.reason is not None else ""])
    if card.kind == "scorecard":              # a rubric's one row is its overall
        rows.append([t("aa_overall", lang), "", _percent(card.coverage, lang), _percent(card.guaranteed, lang),
                     str(card.n_reviewed), str(card.pending), str(card.undecided), str(card.waiting), ""])
    return head, rows


def trend_table(points: Sequence[AcceptancePoint], lang: Lang) -> tuple[list[str], list[list[str]], list[str]]:
    """(head, rows, notes): run × item figures, and a note per item that dropped out."""
    head = [t(k, lang) for k in ("aa_run", "aa_item", "aa_coverage", "aa_guaranteed", "aa_reviewed", "aa_pending")]
    rows = [[p.run, p.item or t("aa_overall", lang), _percent(p.coverage, lang), _percent(p.guaranteed, lang),
             str(p.n_reviewed), str(p.pending)] for p in points]
    notes = [t("aa_dropped", lang, item=p.name, run=p.run) for p in points if p.dropped]
    return head, rows, notes


AUTO_ACCEPT_SHEET = "auto_accept"


def sheet_rows(section: AutoAcceptSection, lang: Lang) -> tuple[list[str], list[list[Any]]]:
    """The workbook's sheet: a row per card × item with a target, then the card's overall row; shares as numbers."""
    head = [t(k, lang) for k in ("aa_card", "aa_item", "aa_region", "aa_coverage", "aa_guaranteed", "aa_reviewed",
                                 "aa_pending", "aa_undecided", "aa_waiting", "aa_note")]
    rows: list[list[Any]] = []
    for card in section.cards:
        for row in card.items:
            region = row.region
            label = card.name if card.kind == "scorecard" else f"{t('aa_rubric', lang)} {card.name}"
            rows.append([label, row.item, region_text(region, lang), row.coverage,
                         region.lower_bound if row.accepted else None, region.n_reviewed, row.pending, row.undecided,
                         row.waiting, say(region.reason, lang) if region.reason is not None else ""])
        if card.kind == "scorecard":
            rows.append([card.name, t("aa_overall", lang), "", card.coverage, card.guaranteed, card.n_reviewed,
                         card.pending, card.undecided, card.waiting, ""])
    return head, rows


def html_values(section: AutoAcceptSection, inputs: ReportInputs) -> dict[str, Any]:
    lang = inputs.lang
    blocks = [{"heading": card_heading(c, lang), "table": card_table(c, lang)} for c in section.cards]
    return {"aa_blocks": blocks, "aa_trend": trend_table(section.trend, lang) if section.trend else None}


def markdown_lines(section: AutoAcceptSection, inputs: ReportInputs) -> list[str]:
    lang = inputs.lang
    lines = [f"## {t('aa_title', lang)}", "", t("aa_intro", lang), ""]
    for card in section.cards:
        head, rows = card_table(card, lang)
        lines += [f"**{card_heading(card, lang)}**", "", markdown_table(head, rows), ""]
    if section.trend:
        head, rows, notes = trend_table(section.trend, lang)
        lines += [f"**{t('aa_trend_title', lang)}**", "", markdown_table(head, rows), ""]
        lines += [f"- {note}" for note in notes] + ([""] if notes else [])
    return lines


# -- the weekly table's line (周报, report/weekly.py) ------------------------------------------------------------------
def weekly_figures(runs: Any, run_id: str, card: Any) -> dict[str, Any] | None:
    """The card's automatic acceptance in the run, for the weekly table (None without a target)."""
    from rubriceval.trust.selective import has_targets

    if not has_targets(card):
        return None
    found = next((c for c in acceptances(runs, run_id) if c.scorecard == card.id and c.kind == "scorecard"), None)
    if found is None:
        return None
    return {"decisions": found.decisions, "accepted": found.accepted, "coverage": found.coverage,
            "guaranteed": found.guaranteed, "pending": found.pending, "undecided": found.undecided}


def weekly_line(figures: dict[str, Any], lang: Lang) -> str:
    return t("aa_weekly", lang, accepted=figures["accepted"], decisions=figures["decisions"],
             coverage=_percent(figures["coverage"], lang), guaranteed=_percent(figures["guaranteed"], lang),
             pending=figures["pending"], undecided=figures["undecided"])


# -- the gate: auto_accept:<card> coverage|agreement, bare min_auto_coverage / min_auto_agreement --------------------
AUTO_PREFIX = "auto_accept:"
AUTO_STATS = ("coverage", "agreement")
BARE = {"min_auto_coverage": "coverage", "min_auto_agreement": "agreement"}


def parse_auto_accept(lhs: str, text: str) -> tuple[str, str | None]:
    """'auto_accept:<card> coverage' → ('coverage', '<card>'); the bare 'min_auto_coverage' → ('coverage', None)."""
    from rubriceval.report.gate_checks import GateUsageError

    lower = lhs.lower().strip()
    if lower in BARE:
        return BARE[lower], None
    words = lhs[len(AUTO_PREFIX):].split()
    if len(words) < 2 or words[-1].lower() not in AUTO_STATS:
        raise GateUsageError(f"gate check {text!r}: write 'auto_accept:<scorecard> coverage>=0.6' or "
                             "'auto_accept:<scorecard> agreement>=0.9'", field="gate",
                             hint="or over every card with a target: 'min_auto_coverage>=0.6', "
                                  "'min_auto_agreement>=0.9'")
    return words[-1].lower(), " ".join(words[:-1])


def auto_figure(cards: Sequence[CardAcceptance], scorecard: str | None, stat: str
                ) -> tuple[float | None, str | None, str]:
    """(value, why it is missing, what it was read from): coverage, or the guaranteed agreement (the lowest among
    the items accepting something by evidence; missing when none does: nothing is guaranteed)."""
    if scorecard is not None:
        found = [c for c in cards if scorecard in (c.scorecard, c.name)]
        if not found:
            available = ", ".join(c.scorecard for c in cards) or "none"
            raise LookupError(f"the run has no scorecard or rubric '{scorecard}' with an auto_accept target "
                              f"(with one: {available})")
        cards = found
    if not cards:
        return None, "no scorecard or rubric of the run states an auto_accept target", ""
    decisions, accepted = sum(c.decisions for c in cards), sum(c.accepted for c in cards)
    extra = f" ({accepted}/{decisions} decisions accepted, {sum(c.pending for c in cards)} pending review)"
    if stat == "coverage":
        return (accepted / decisions if decisions else None), (None if decisions else "no decision"), extra
    bounds = [c.guaranteed for c in cards if c.guaranteed is not None]
    return (min(bounds) if bounds else None), (None if bounds else "nothing is accepted automatically"), extra


def evaluate_source(target: GateTarget, checks: Sequence[GateCheck]) -> SourceResults:
    from rubriceval.report.gate_checks import GateUsageError
    from rubriceval.report.gate_result import check_result
    from rubriceval.report.gate_sources import SourceResults

    cards = acceptances(target.store, target.info().run_id)
    results = []
    for check in checks:
        try:
            actual, why, extra = auto_figure(cards, check.scorer, check.stat)
        except LookupError as exc:
            raise GateUsageError(str(exc), field="gate") from None
        results.append(check_result(check, check.label(), actual, why, [], False, check.scorer, extra))
    return SourceResults(results)
