"""The total as a pure function of item outcomes: `scorecard_total(card, outcomes)`.

Nothing here reads a judge or a sample, so anyone holding a verdict's outcomes can recompute its total after a
reviewer flips one (issue 27: a removed deduction becomes `clear`). Exact integers throughout:

1. an unscored item is resolved by `card.on_unscored` (unscored total / N/A / hit);
2. a hit item earns its points once, or × occurrences (`per: occurrence`) up to its `cap`;
3. a dimension's subtotal is its items' sum, held within [−max_deduction, +max_bonus];
4. raw total = base + Σ subtotals, clamped to [0, base] (`clamped` says so);
5. a hit fatal item makes the total 0 (listed in `fatal`), even when another item is unscored;
6. otherwise any unscored item left makes the total None with the reason.
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


def scorecard_total(card: Scorecard, outcomes: Iterable[CardItemOutcome]) -> Totals:
    by_item = {o.item: _resolved(card, o) for o in outcomes}
    missing = [i.id for i in card.items if i.id not in by_item]
    unknown = sorted(set(by_item) - {i.id for i in card.items})
    if missing or unknown:
        raise ValueError(f"outcomes do not match scorecard '{card.id}': missing {missing}, unknown {unknown}")
    points = [item_points(card, by_item[i.id]) for i in card.items]
    dimensions = []
    for dim in card.dimensions:
        raw = sum(p.points for p in points if p.dimension == dim.id)
        held = raw
        if dim.max_deduction is not None:
            held = max(held, -dim.max_deduction)
        if dim.max_bonus is not None:
            held = min(held, dim.max_bonus)
        dimensions.append(DimensionTotal(dimension=dim.id, points=held, raw=raw, clamped=held != raw))
    raw_total = card.base + sum(d.points for d in dimensions)
    fatal = [i.id for i in card.items if i.fatal and by_item[i.id].status == "hit"]
    unscored = [i.id for i in card.items if by_item[i.id].status == "unscored"]
    totals = Totals(base=card.base, raw_total=raw_total, fatal=fatal, unscored=unscored, items=points,
                    dimensions=dimensions,
                    not_applicable=[i.id for i in card.items if by_item[i.id].status == "not_applicable"])
    if fatal:
        totals.total = 0
    elif unscored:
        first = by_item[unscored[0]]
        totals.unscored_reason = (f"{len(unscored)} item(s) undecided ({', '.join(unscored)}); "
                                  f"'{first.item}': {first.reason or 'no reason given'}")
    else:
        totals.total = min(max(raw_total, 0), card.base)
        totals.clamped = totals.total != raw_total
    return totals
