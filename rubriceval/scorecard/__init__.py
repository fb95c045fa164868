"""Scorecards (质检评分表): the contact-centre QA sheet as YAML — a base (100), dimensions, items with exact integer
points, fatal items (一票否决), N/A conditions — scored per conversation (or single-turn sample) beside the rubrics.

    schema.py        Scorecard, Dimension, ScorecardItem (predicate: check | question | rubric; points; per
                     occurrence with cap; fatal; applies_when), content-hash versions (`version_tag`)
    loader.py        YAML → Scorecard, or ScorecardError naming file:line [field]
    arithmetic.py    scorecard_total(card, outcomes) → Totals: the total as a PURE function of the item outcomes
    verdict.py       CardItemOutcome (hit | clear | not_applicable | unscored, evidence), Totals, ScorecardVerdict
    applicability.py the deterministic N/A conditions;  questions.py  the yes/no questions, checklist-style
    score.py         one sample → ScorecardVerdict (checks, per-turn occurrences, questions, rubric verdicts)
    stage.py         the run stage (after rubrics and metrics; resumable, cached);  plan.py  dry-run calls
    store.py         scorecard tables of the run store, `scorecard_frame` (pandas: a row per conversation)
    summary.py       report figures; report.py  Markdown/HTML/Excel sections; gate.py, compare.py
    sheet.py         the QA lead's Excel sheet ↔ Scorecard (`rubriceval scorecard import/export`)

Recomputing a total after a review (issue 27: a reviewer removes a deduction, or confirms a missed one): take the
stored verdict's outcomes, change the status of that item (`hit` → `clear`, or `clear` → `hit` with occurrences),
and call `scorecard_total(card, outcomes)` with the card version the verdict names (ScorecardStore.cards(run)).
Nothing else is needed: no judge, no sample. Rules, in order: unscored items resolved by `card.on_unscored`;
points × occurrences up to `cap`; dimension subtotals held within [−max_deduction, +max_bonus]; total = base + Σ
subtotals clamped to [0, base] (`clamped`); a hit fatal item → 0 (listed in `fatal`); otherwise an unscored item
left → total None with `unscored_reason`.

Docs: docs/scorecards.md.
"""
