"""Risk-first review by rank (issue 39, item 3): which card verdicts a sampling plan adds to the review queue
whatever the judge decided, beside the random part and the plan's own risk kinds (audit/team_cards.card_risks):

- `undecided`: an item the judge could not tell — it waits for a reviewer, so it is always reviewed;
- `pending_review`: a machine decision not accepted automatically (issue 44) — the same; a rubric verdict pending
  review likewise (`rubric_awaiting_reasons`, audit/team_plan.py);
- `top_p_yes:<item>`: each judgement item's k highest-p(yes) conversations of each period of the plan among those
  the machine did not hit, whatever the cut-off — a violation the calibration misses (p(yes) 0.49 under a 0.5
  cut-off, or a calibrated one) is still seen by a person. Hits are left out: they are deductions already shown,
  appealable, and fatal ones are the `fatal` risk. The p(yes) ranked is that of the answer making the item a hit
  (`hit_on: no`, a deduction's default: 1 − p(yes)); an item found not applicable by its `applies_when.question`
  ranks by that question's p(yes) (an upset customer the judge put under 0.5 is still reviewed).

The additions go through the one sampler (audit/plan.draw): deduplicated with the random part and with each other, a
conversation's reasons joined in its `risk:` selection (e.g. `risk:undecided,top_p_yes:promise`), never in the
estimates. `reason_text` says a selection in words for the lead.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from rubriceval.core.pending_review import PendingReview
from rubriceval.i18n import MESSAGES, Lang, t
from rubriceval.scorecard.decided import is_judgement_item
from rubriceval.scorecard.schema import Scorecard, ScorecardItem
from rubriceval.scorecard.verdict import CardItemOutcome, ScorecardVerdict

TOP_P_YES = "top_p_yes"
UNDECIDED, PENDING = "undecided", "pending_review"


def awaiting_reasons(verdict: ScorecardVerdict) -> list[str]:
    """`undecided` and/or `pending_review` when an item of the verdict waits for a reviewer."""
    reasons = []
    if any(o.status == "undecided" for o in verdict.outcomes):
        reasons.append(UNDECIDED)
    if any(o.awaiting_review and o.status != "undecided" for o in verdict.outcomes):
        reasons.append(PENDING)
    return reasons


def rubric_awaiting_reasons(details: Mapping[str, Any]) -> list[str]:
    """`pending_review` when a rubric verdict waits for a reviewer (issue 44: outside its rubric's auto_accept
    region, core/pending_review.py): it joins the plan's risk-first part whatever the plan's risk kinds, as a card's
    pending item does."""
    return [PENDING] if PendingReview.read(details) is not None else []


def p_hit(item: ScorecardItem, outcome: CardItemOutcome) -> float | None:
    """How likely the judge thought a hit: its p(yes) toward the hit answer; an N/A outcome's applies-when p(yes)."""
    if outcome.p_yes is None:
        return None
    if outcome.status == "not_applicable" or not item.question:
        return outcome.p_yes
    return outcome.p_yes if item.hit_answer else 1 - outcome.p_yes


def top_p_yes(card: Scorecard, verdicts: Iterable[ScorecardVerdict], period_of: Mapping[str, str], k: int
              ) -> dict[str, list[str]]:
    """sample id → `top_p_yes:<item>` for each judgement item of which it is among the k highest p(yes) of its
    period, among the outcomes the machine did not hit, in verdicts not already awaiting review (ties broken by
    sample id, so a plan draws the same)."""
    if k <= 0:
        return {}
    judged = {i.id: i for i in card.items if is_judgement_item(i)}
    ranked: dict[tuple[str, str], list[tuple[float, str]]] = {}
    for v in verdicts:
        if any(o.awaiting_review for o in v.outcomes):
            continue                  # in the queue already (a reviewer decides every item of the card there)
        for o in v.outcomes:
            if o.item not in judged or o.status == "hit":
                continue
            p = p_hit(judged[o.item], o)
            if p is not None:
                ranked.setdefault((o.item, period_of.get(v.sample_id, "")), []).append((p, v.sample_id))
    out: dict[str, list[str]] = {}
    for (item, _), found in sorted(ranked.items()):
        for _, sample_id in sorted(found, key=lambda f: (-f[0], f[1]))[:k]:
            reason = f"{TOP_P_YES}:{item}"
            if reason not in out.setdefault(sample_id, []):
                out[sample_id].append(reason)
    return out


def reason_text(reason: str, lang: Lang, names: Mapping[str, str] | None = None) -> str:
    """One reason of a `risk:` selection in words: 'highest p(yes) for 承诺超出政策', 'undecided', 'pending review'."""
    kind, _, item = reason.partition(":")
    if kind == TOP_P_YES:
        return t("rq_top_p_yes", lang, item=(names or {}).get(item, item))
    key = f"rq_{kind}"
    return t(key, lang) if key in MESSAGES else reason


def selection_text(selection: str, lang: Lang, names: Mapping[str, str] | None = None) -> str:
    """A plan row's selection ('random', or 'risk:undecided,top_p_yes:promise') in words for the lead."""
    if not selection.startswith("risk:"):
        return selection
    sep = "；" if lang == "zh" else "; "
    return sep.join(reason_text(r, lang, names) for r in selection.removeprefix("risk:").split(","))
