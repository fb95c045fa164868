"""The total as a pure function of item outcomes: `scorecard_total(card, outcomes)`.

Nothing here reads a judge or a sample, so anyone holding a verdict's outcomes can recompute its total after a
reviewer flips one (issue 27: a removed deduction becomes `clear`). Exact integers throughout:

1. an unscored item is resolved by `card.on_unscored` (unscored total / N/A / hit);
2. a hit item earns its points once, or × occurrences (`per: occurrence`) up to its `cap`;
3. a dimension's subtotal is its items' sum, held within [−max_deduction, +max_bonus];
4. raw total = base + Σ subtotals, clamped to [0, base] (`clamped` says so);
5. a hit fatal item makes the total 0 (listed in `fatal`), even when another item is unscored or waits;
6. otherwise any unscored item left makes the total None with the reason;
7. otherwise an item awaiting review (undecided, or a machine decision pending review) makes the total None, never a
   number counted as if decided: `undecided`/`pending` name them and `total_range` gives the lowest and highest total
   the reviewer's decisions can still make (waiting deductions all hit and bonuses clear, then the other way round).
   A waiting item earns no points in `items` and `dimensions`.
"""
from __future__ import annotations

from collections.abc import Iterable

from rubriceval.scorecard.schema import Scorecard
from rubriceval.scorecard.verdict import CardItemOutcome, DimensionTotal, ItemPoints, Totals


def _resolved(card: Scorecard, outcome: CardItemOutcome) -> CardItemOutcome:
    if outcome.status != "unscored" or card.on_unscored == "unscored":
        return outcome
    if card.on_unscored == "not_applicable":
        return outcome.model_copy(update={"status": "not_applicable", "occurrences": 0,
                                          "reason": f"unscored, counted as N/A: {outcome.reason}"})
    return outcome.model_copy(update={"status": "hit", "occurrences": max(1, outcome.occurrences),
                                      "reason": f"unscored, counted as hit: {outcome.reason}"})


def item_points(card: Scorecard, outcome: CardItemOutcome) -> ItemPoints:
    item = next(i for i in card.items if i.id == outcome.item)
    points, capped = 0, False
    if outcome.status == "hit" and item.points is not None:
        times = max(1, outcome.occurrences) if item.per == "occurrence" else 1
        points = item.points * times
        if item.cap is not None and abs(points) > item.cap:
            points, capped = item.cap if points > 0 else -item.cap, True
    return ItemPoints(item=item.id, dimension=item.dimension, points=points,
                      occurrences=outcome.occurrences if outcome.status == "hit" else 0, capped=capped)


def _waiting_as(outcome: CardItemOutcome, hit: bool) -> CardItemOutcome:
    return outcome.model_copy(update={"status": "hit" if hit else "clear", "occurrences": max(1, outcome.occurrences)
                                      if hit else 0, "pending_review": False})


def _held(card: Scorecard, by_item: dict[str, CardItemOutcome]) -> tuple[list[ItemPoints], list[DimensionTotal], int]:
    """Every item's points, the dimensions' subtotals within their limits, and the raw total (before [0, base])."""
    points = [item_points(card, by_item[i.id]) if not by_item[i.id].awaiting_review else
              ItemPoints(item=i.id, dimension=i.dimension, points=0) for i in card.items]
    dimensions = []
    for dim in card.dimensions:
        raw = sum(p.points for p in points if p.dimension == dim.id)
        held = raw
        if dim.max_deduction is not None:
            held = max(held, -dim.max_deduction)
        if dim.max_bonus is not None:
            held = min(held, dim.max_bonus)
        dimensions.append(DimensionTotal(dimension=dim.id, points=held, raw=raw, clamped=held != raw))
    return points, dimensions, card.base + sum(d.points for d in dimensions)


def _decided_total(card: Scorecard, by_item: dict[str, CardItemOutcome]) -> int:
    """The total of outcomes with nothing waiting (used for the range's two ends)."""
    if any(i.fatal and by_item[i.id].status == "hit" for i in card.items):
        return 0
    return min(max(_held(card, by_item)[2], 0), card.base)


def scorecard_total(card: Scorecard, outcomes: Iterable[CardItemOutcome]) -> Totals:
    by_item = {o.item: _resolved(card, o) for o in outcomes}
    missing = [i.id for i in card.items if i.id not in by_item]
    unknown = sorted(set(by_item) - {i.id for i in card.items})
    if missing or unknown:
        raise ValueError(f"outcomes do not match scorecard '{card.id}': missing {missing}, unknown {unknown}")
    points, dimensions, raw_total = _held(card, by_item)
    decided = {k: o for k, o in by_item.items() if not o.awaiting_review}
    fatal = [i.id for i in card.items if i.fatal and i.id in decided and decided[i.id].status == "hit"]
    unscored = [i.id for i in card.items if by_item[i.id].status == "unscored"]
    undecided = [i.id for i in card.items if by_item[i.id].status == "undecided"]
    pending = [i.id for i in card.items if by_item[i.id].awaiting_review and by_item[i.id].status != "undecided"]
    totals = Totals(base=card.base, raw_total=raw_total, fatal=fatal, unscored=unscored, items=points,
                    dimensions=dimensions, undecided=undecided, pending=pending,
                    not_applicable=[i.id for i in card.items if by_item[i.id].status == "not_applicable"])
    if fatal:
        totals.total = 0
    elif unscored:
        first = by_item[unscored[0]]
        totals.unscored_reason = (f"{len(unscored)} item(s) unscored ({', '.join(unscored)}); "
                                  f"'{first.item}': {first.reason or 'no reason given'}")
    elif undecided or pending:
        bonus = {i.id for i in card.items if i.is_bonus}
        ends = [_decided_total(card, {k: _waiting_as(o, hit=(k in bonus) != worst) if o.awaiting_review else o
                                      for k, o in by_item.items()}) for worst in (True, False)]
        totals.total_range = (min(ends), max(ends))
    else:
        totals.total = min(max(raw_total, 0), card.base)
        totals.clamped = totals.total != raw_total
    return totals
