"""Trust per scorecard item from reviews (issue 25.6): reviewers confirm or reject deductions and add missed ones;
per-item precision and recall with Wilson intervals; items below their bar flagged in the reports; a reviewed total
recomputed with the pure scorecard_total."""
import asyncio
import json

import pytest

from rubriceval.audit.scorecard_reviews import ReviewStore, item_trust, reviewed_outcomes
from rubriceval.cli import main
from rubriceval.common.errors import RubricEvalError
from rubriceval.data.sample import Sample
from rubriceval.report.scorecards import ScorecardReport
from rubriceval.scorecard.arithmetic import scorecard_total
from rubriceval.scorecard.schema import Scorecard
from rubriceval.scorecard.score import score_scorecard
from rubriceval.store.runs import RunConfig, RunStore
from rubriceval.store.scorecards import ScorecardStore
from rubriceval.testing.scripted_judge import ScriptedJudge, yes_no_reply

CARD = {"id": "qa", "name": "qa", "trust": {"min_precision": 0.75, "min_reviews": 4},
        "dimensions": [{"id": "d"}],
        "items": [{"id": "resolve", "dimension": "d", "points": -5, "question": "客服是否解决了问题？"},
                  {"id": "closing", "dimension": "d", "points": -2,
                   "check": {"type": "final_turn", "phrases": ["还有什么"]}}]}


def conversation(sid, answer):
    return Sample.model_validate({"id": sid, "question": "", "conversation": {
        "id": sid, "turns": [{"role": "user", "content": "在吗"}, {"role": "assistant", "content": answer}]}})


@pytest.fixture
def run(tmp_path):
    store = RunStore(tmp_path / "runs.sqlite")
    card = Scorecard.model_validate(CARD)
    samples = [conversation(f"c{i}", "好的" if i % 2 else "好的，还有什么可以帮您？") for i in range(6)]
    run_id = store.create_run(RunConfig(), samples, [], name="r")
    judge = ScriptedJudge(lambda request: yes_no_reply(0.2))         # the judge says every one was unresolved
    ScorecardStore(store).register(run_id, [card])
    ScorecardStore(store).save(run_id, [asyncio.run(score_scorecard(card, s, judge)) for s in samples])
    return store, card


def test_precision_recall_with_intervals_and_the_bar(run):
    store, card = run
    verdicts = {v.sample_id: v for v in ScorecardStore(store).verdicts("r")}
    reviews = ReviewStore(store)
    for sid, decision in [("c0", "confirm"), ("c1", "reject"), ("c2", "confirm"), ("c3", "reject")]:
        reviews.add("r", verdicts[sid], "resolve", decision, reviewer="王")
    reviews.add("r", verdicts["c0"], "closing", "missed", reviewer="王")     # the rule missed one
    stats = item_trust(card, reviews.reviews("r"))
    resolve = stats["resolve"]
    assert (resolve.confirmed, resolve.rejected, resolve.precision) == (2, 2, 0.5)
    assert resolve.precision_ci[0] == pytest.approx(0.150, abs=0.01) and resolve.precision_ci[1] == pytest.approx(
        0.850, abs=0.01)
    assert resolve.untrusted == "precision 50% < 75%"
    closing = stats["closing"]
    assert (closing.missed, closing.recall, closing.bar) == (1, 0.0, None)   # a rule: no bar by default
    # the latest decision counts
    reviews.add("r", verdicts["c1"], "resolve", "confirm", reviewer="李")
    reviews.add("r", verdicts["c3"], "resolve", "confirm", reviewer="李")
    assert item_trust(card, reviews.reviews("r"))["resolve"].untrusted is None


def test_too_few_reviews_is_flagged_in_every_report(run, tmp_path):
    store, card = run
    report = ScorecardReport(store, "r", "en")
    assert "Items below their trust bar: resolve (0 review(s), the bar needs 4)" in report.markdown()
    assert "⚠ 0 review(s), the bar needs 4" in report.html()


def test_reviewed_total_is_recomputed_from_the_outcomes(run):
    store, card = run
    verdict = next(v for v in ScorecardStore(store).verdicts("r") if v.sample_id == "c1")
    assert verdict.totals.total == 93                                     # −5 resolve, −2 closing
    ReviewStore(store).add("r", verdict, "resolve", "reject", reviewer="王")
    outcomes = reviewed_outcomes(verdict, ReviewStore(store).reviews("r"))
    assert scorecard_total(card, outcomes).total == 98


def test_decisions_that_do_not_fit_are_refused(run, tmp_path, capsys):
    store, card = run
    verdict = next(v for v in ScorecardStore(store).verdicts("r") if v.sample_id == "c0")
    with pytest.raises(RubricEvalError, match="only a hit can be confirmed"):
        ReviewStore(store).add("r", verdict, "closing", "confirm")
    with pytest.raises(RubricEvalError, match="already hit"):
        ReviewStore(store).add("r", verdict, "resolve", "missed")
    decisions = tmp_path / "d.jsonl"
    decisions.write_text(json.dumps({"sample_id": "c0", "item": "resolve", "decision": "confirm"}) + "\n"
                         + json.dumps({"sample_id": "c0", "item": "resolve", "decision": "maybe"}) + "\n")
    assert main(["scorecard", "review", "r", "--store", str(store.path), "--from", str(decisions)]) == 2
    assert "d.jsonl:2 [decision]" in capsys.readouterr().err
    assert main(["scorecard", "review", "r", "--store", str(store.path), "--sample", "c2", "--item", "resolve",
                 "--reject", "--reviewer", "王"]) == 0
    assert main(["scorecard", "trust", "r", "--store", str(store.path)]) == 0
    assert "BELOW BAR" in capsys.readouterr().out
    assert [r.sample_id for r in ReviewStore(store).reviews("r")] == ["c2"]     # the bad file wrote nothing


def test_the_scorecard_tables_work_on_both_store_back_ends(store_target):
    """SQLite and PostgreSQL: definitions, verdicts (replaced, not duplicated, when saved again) and reviews."""
    store = RunStore(store_target)
    card = Scorecard.model_validate(CARD)
    samples = [conversation("c0", "好的"), conversation("c1", "还有什么可以帮您？")]
    run_id = store.create_run(RunConfig(), samples, [], name="pg")
    cards = ScorecardStore(store)
    cards.register(run_id, [card])
    judge = ScriptedJudge(lambda request: yes_no_reply(0.9))
    made = [asyncio.run(score_scorecard(card, s, judge)) for s in samples]
    cards.save(run_id, made)
    cards.save(run_id, made[:1])                       # a resumed pair saved again
    assert [v.sample_id for v in cards.verdicts("pg")] == ["c0", "c1"]
    assert cards.done(run_id, "qa", ["c0", "c1", "c9"]) == {"c0", "c1"}
    assert cards.cards("pg")[0].version_tag == card.version_tag
    ReviewStore(store).add("pg", made[0], "closing", "confirm", reviewer="王")
    assert item_trust(card, ReviewStore(store).reviews("pg"))["closing"].precision == 1.0
