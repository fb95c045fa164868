"""A cut-off fitted from reviews is read on the number the reviewed decisions were read on (issue 39 round 4): a turn
checker's probability (CardItemOutcome.score_kind "checker") is another scale than the judge's p(yes), so the fit
keeps one scale — the one most reviewed decisions carry — and names it; a run reads a checker-scale band through the
checker, and without that checker the band reads nothing."""
from __future__ import annotations

import asyncio

from rubriceval.rubric.calibration import ItemCalibration
from rubriceval.scorecard.verdict import CardItemOutcome, ScorecardVerdict, Totals
from rubriceval.scoring.judgement import kind_calibration, turn_checker
from rubriceval.scoring.judgement.decide import JudgementSpec, rule_in_place
from rubriceval.trust.fit_reviews import fit_card
from tests.scoring.test_judgement import LEAK, by_turn
from tests.scoring.test_turn_checker import EMBEDDED, checker, small
from tests.trust.test_fit_reviews import JUDGE, load_scorecard_text


def verdict(i: int, hit: bool, p: float, kind: str | None) -> ScorecardVerdict:
    return ScorecardVerdict(sample_id=f"s{i}", scorecard="qa", version="v1", totals=Totals(base=100), outcomes=[
        CardItemOutcome(item="promise", status="hit" if hit else "clear", p_yes=p, score_kind=kind)])


def test_the_fit_keeps_the_scale_most_reviewed_decisions_were_read_on_and_names_it(tmp_path):
    card = load_scorecard_text(tmp_path)
    verdicts, decided = [], {}
    # 30 decisions on the checker's scale: hits at 0.30–0.48, clear at 0.02–0.20 — a cut-off near 0.25 beats 0.5
    for i in range(30):
        hit = i % 2 == 0
        verdicts.append(verdict(i, hit, (0.30 if hit else 0.02) + i * 0.006, "checker"))
        decided[(f"s{i}", "promise")] = "hit" if hit else "clear"
    # 8 older decisions on the judge's p(yes) scale, where every hit sits under 0.1: fitted together they would drag
    # the cut-off down into the clear ones
    for i in range(30, 38):
        verdicts.append(verdict(i, True, 0.05, "turn_max"))
        decided[(f"s{i}", "promise")] = "hit"
    fit = fit_card(card, JUDGE, verdicts, decided).items[0]
    assert fit.calibration is not None and fit.calibration.score == "checker"
    assert 0.20 < fit.calibration.cutoff <= 0.30
    assert fit.fit.n_train + fit.fit.n_heldout == 30


def test_a_checker_scale_band_is_read_through_the_checker_and_without_it_reads_nothing(monkeypatch):
    monkeypatch.setattr(kind_calibration, "shipped", lambda: ())
    monkeypatch.setattr(turn_checker, "embedder_identity", lambda model="local": "in-process:test==1")
    own = ItemCalibration(judge=EMBEDDED, cutoff=0.7, undecided=(0.65, 0.75), method="reviews", n=40,
                          score="checker")
    spec = JudgementSpec(question=LEAK, calibration=[own])
    monkeypatch.setattr(turn_checker, "shipped", lambda: (checker("personal_data"),))
    rule, _, _ = asyncio.run(rule_in_place(spec, "assistant", small(by_turn({}))))
    assert rule == own                                   # the team's band, on the checker's probability
    monkeypatch.setattr(turn_checker, "shipped", lambda: ())
    rule, _, _ = asyncio.run(rule_in_place(spec, "assistant", small(by_turn({}))))
    assert rule is None                                  # no checker: its band is not read on a judge's p(yes)
