"""Reviews feed the next run (issue 44.1): `rubriceval scorecard fit` fits a question item's p(yes) cut-off to what
reviewers decided, for the judge of the reviewed run, by calibrate's fit (held-out reviews must show it beats the
current cut-off); the fit is proposed as the card's next version naming the judge, written only with --write, and
refused — with the figures that say why — when it does not beat the cut-off the item has now."""
from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from rubriceval.audit.scorecard_reviews import ReviewStore
from rubriceval.cli import main
from rubriceval.data.sample import Sample
from rubriceval.scorecard.loader import load_scorecard
from rubriceval.scorecard.score import score_scorecard
from rubriceval.store.runs import RunConfig, RunStore
from rubriceval.store.scorecards import ScorecardStore
from rubriceval.testing.scripted_judge import ScriptedJudge, yes_no_reply
from rubriceval.trust.fit_reviews import fit_card, reviewers_statuses

JUDGE = "small-judge"
CARD_YAML = """# 质检卡（注释原样保留）
id: qa
name: 质检
version: 1          # 第一版
dimensions:
  - {id: d}
items:
  - id: promise
    name: 越权承诺
    dimension: d
    points: -10
    question: 客服是否承诺了政策以外的补偿？
    hit_on: "yes"
  - id: closing
    dimension: d
    points: -2
    check: {type: final_turn, phrases: ["还有什么"]}
"""
# An under-confident judge: the 10 promises get p(yes) 0.30–0.48 (all under 0.5), the 10 clean ones 0.02–0.20.
PROMISES = [0.30 + 0.02 * i for i in range(10)]
CLEAN = [0.02 + 0.02 * i for i in range(10)]


def conversation(sid: str, p_yes: float) -> Sample:
    return Sample.model_validate({"id": sid, "question": "", "conversation": {"id": sid, "turns": [
        {"role": "user", "content": "快递怎么还没到"},
        {"role": "assistant", "content": f"编号 {p_yes:.2f}，还有什么可以帮您？"}]}})


def scripted(model: str = JUDGE) -> ScriptedJudge:
    judge = ScriptedJudge(lambda request: yes_no_reply(float(re.search(r"编号 ([0-9.]+)", request[-1]["content"])
                                                                       .group(1))))
    judge.config = judge.config.model_copy(update={"model": model})
    return judge


@pytest.fixture
def reviewed(tmp_path: Path):
    """A week judged by the under-confident judge, every conversation reviewed (missed promises, agreed clears)."""
    folder = tmp_path / "scorecards"
    folder.mkdir()
    (folder / "qa.yaml").write_text(CARD_YAML, encoding="utf-8")
    card = load_scorecard(folder / "qa.yaml")
    store = RunStore(tmp_path / "runs.sqlite")
    samples = [conversation(f"p{i}", p) for i, p in enumerate(PROMISES)] + \
              [conversation(f"c{i}", p) for i, p in enumerate(CLEAN)]
    run_id = store.create_run(RunConfig(judge={"model": JUDGE}), samples, [], name="week1")
    judge = scripted()
    ScorecardStore(store).register(run_id, [card])
    ScorecardStore(store).save(run_id, [asyncio.run(score_scorecard(card, s, judge)) for s in samples])
    verdicts = {v.sample_id: v for v in ScorecardStore(store).verdicts("week1")}
    reviews = ReviewStore(store)
    for sid, verdict in verdicts.items():
        assert verdict.outcome("promise").status == "clear"           # 0.5 misses every promise
        reviews.add("week1", verdict, "promise", "missed" if sid.startswith("p") else "clear", reviewer="王")
    return tmp_path, folder, card, samples


def fit_cli(tmp_path: Path, folder: Path, *extra: str) -> int:
    return main(["scorecard", "fit", "week1", "--card", "qa", "--scorecards", str(folder),
                 "--store", str(tmp_path / "runs.sqlite"), *extra])


def test_the_fit_is_proposed_as_the_next_version_naming_the_judge(reviewed, capsys):
    tmp_path, folder, card, _ = reviewed
    assert fit_cli(tmp_path, folder) == 0
    out = capsys.readouterr().out
    assert "PROPOSED cut-off" in out and "beats 0.5 on held-out reviews" in out
    assert "-version: 1" in out and "+version: 2" in out and f"judge: {JUDGE}" in out
    assert "proposed as version 2 (from 1); --write saves it" in out
    assert (folder / "qa.yaml").read_text(encoding="utf-8") == CARD_YAML        # nothing written without --write

    assert fit_cli(tmp_path, folder, "--write", "--by", "组长") == 0
    written = (folder / "qa.yaml").read_text(encoding="utf-8")
    old_lines = [line for line in CARD_YAML.splitlines() if not line.startswith("version:")]
    assert all(line in written.splitlines() for line in old_lines)             # the file's own lines kept
    assert "version: 2          # 第一版" in written
    assert (folder / ".versions" / "qa" / "v1.yaml").read_text(encoding="utf-8") == CARD_YAML
    new = load_scorecard(folder / "qa.yaml")
    assert new.version_tag != card.version_tag
    promise = next(i for i in new.items if i.id == "promise")
    fitted = promise.calibration_for(JUDGE)
    assert fitted is not None and fitted.method == "reviews" and fitted.judge == JUDGE
    assert 0.2 < fitted.cutoff < 0.3 and fitted.n == 20 and "held-out balanced accuracy 1.00 vs 0.50" in fitted.note
    assert promise.calibration_for("another-judge") is None                    # ignored with another judge
    assert next(i for i in new.items if i.id == "closing").calibration == []


def test_the_fit_is_ignored_with_another_judge_when_scoring(reviewed, capsys):
    tmp_path, folder, _, samples = reviewed
    assert fit_cli(tmp_path, folder, "--write") == 0
    new = load_scorecard(folder / "qa.yaml")
    promise_sample = samples[5]                                               # p(yes) 0.40: a promise
    mine = asyncio.run(score_scorecard(new, promise_sample, scripted(JUDGE)))
    other = asyncio.run(score_scorecard(new, promise_sample, scripted("another-judge")))
    assert other.outcome("promise").status == "clear"                          # 0.5 as before: the fit is not its
    assert other.outcome("promise").decided_by == "judge"
    assert mine.outcome("promise").status == "hit"                             # the judge it was fitted for uses it
    assert mine.outcome("promise").decided_by == "judge_calibrated"


def test_a_fit_that_does_not_beat_the_current_cutoff_is_refused_and_says_why(reviewed, capsys):
    tmp_path, folder, _, _ = reviewed
    assert fit_cli(tmp_path, folder, "--write") == 0                           # v2: fitted for the judge
    capsys.readouterr()
    before = (folder / "qa.yaml").read_text(encoding="utf-8")
    # The same reviews again: the cut-off the item now has for this judge already separates them.
    assert fit_cli(tmp_path, folder, "--write") == 1
    out = capsys.readouterr().out
    current = load_scorecard(folder / "qa.yaml").items[0].calibration_for(JUDGE)
    assert "REFUSED cut-off" in out and f"does not beat {current.cutoff:g} on held-out reviews (1.00 ≤ 1.00)" in out
    assert "no cut-off proposed: the card keeps its cut-offs" in out
    assert (folder / "qa.yaml").read_text(encoding="utf-8") == before          # nothing written


def test_a_judge_already_right_at_half_gets_no_new_cutoff(tmp_path):
    card = load_scorecard_text(tmp_path)
    from rubriceval.scorecard.verdict import CardItemOutcome, ScorecardVerdict, Totals

    verdicts, decided = [], {}
    for i in range(20):
        hit = i % 2 == 0
        p = 0.7 + i / 100 if hit else 0.1 + i / 100
        verdicts.append(ScorecardVerdict(sample_id=f"s{i}", scorecard="qa", version=card.version_tag, totals=Totals(
            base=100), outcomes=[CardItemOutcome(item="promise", status="hit" if hit else "clear", p_yes=p)]))
        decided[(f"s{i}", "promise")] = "hit" if hit else "clear"
    fit = fit_card(card, JUDGE, verdicts, decided)
    promise = fit.items[0]
    assert not fit.proposed and not promise.accepted and "does not beat 0.5" in promise.reason
    few = fit_card(card, JUDGE, verdicts[:5], decided)
    assert not few.proposed and "needs at least 2 reviewed yes and no review decisions" in few.items[0].reason
    # a reviewer's N/A has no right answer; a decision without a p(yes) is counted, never guessed
    decided[("s0", "promise")] = "not_applicable"
    verdicts[1] = verdicts[1].model_copy(update={"outcomes": [CardItemOutcome(item="promise", status="not_applicable")]})
    counted = fit_card(card, JUDGE, verdicts, decided).items[0]
    assert (counted.n_answers, counted.n_unasked) == (18, 1)


def test_reviewers_statuses_latest_decision_counts_task_reviews_included(tmp_path):
    from rubriceval.audit.scorecard_reviews import Review
    from rubriceval.scorecard.verdict import CardItemOutcome, ScorecardVerdict, Totals

    v = ScorecardVerdict(sample_id="s1", scorecard="qa", version="v1@x", totals=Totals(base=100),
                         outcomes=[CardItemOutcome(item="promise", status="clear", p_yes=0.3)])
    task = [(10.0, "s1", {"promise": "clear", "closing": "hit"})]           # a blind task review: every item
    lead = Review(sample_id="s1", scorecard="qa", item="promise", version="v1@x", decision="missed", created_at=20.0)
    stale = Review(sample_id="s1", scorecard="qa", item="closing", version="v0@y", decision="reject", created_at=30.0)
    decided = reviewers_statuses([v], [lead, stale], task)
    assert decided == {("s1", "promise"): "hit", ("s1", "closing"): "hit"}  # another version's review is not counted


def load_scorecard_text(tmp_path: Path):
    path = tmp_path / "qa.yaml"
    path.write_text(CARD_YAML, encoding="utf-8")
    return load_scorecard(path)


def test_a_rubric_checklist_question_is_fitted_by_the_same_path(tmp_path: Path):
    """calibrate --fit-thresholds: a labelled row without a turn names a checklist question; its fit is written as
    the question's calibration for the run's judge (ignored with another), refused when 0.5 already separates."""
    import json

    from rubriceval.rubric.loader import load_rubric
    from rubriceval.run.runner import execute
    from rubriceval.trust.fit_cutoff import fit_thresholds

    rubric = load_rubric_text(tmp_path)
    samples = [Sample.model_validate({"id": f"a{i}", "question": "能退款吗", "answer": f"编号 {p:.2f}"})
               for i, p in enumerate(PROMISES + CLEAN)]
    store = RunStore(tmp_path / "runs.sqlite")
    run_id = store.create_run(RunConfig(judge={"model": JUDGE}), samples,
                              [(rubric.id, "rubric", rubric.version_tag, rubric.model_dump(mode="json"))])
    asyncio.run(execute(store, run_id, samples, [rubric], [], judge=scripted(), progress=False))
    store.set_status(run_id, "complete")
    store.close()
    labels = tmp_path / "answers.jsonl"
    labels.write_text("\n".join(json.dumps({"sample_id": s.id, "item": "promised", "answer": s.id in
                                            {f"a{i}" for i in range(10)}}) for s in samples) + "\n", encoding="utf-8")
    fits, unasked, path = fit_thresholds(tmp_path / "runs.sqlite", "policy", labels, proposal_dir=tmp_path / "p")
    assert unasked == 0 and fits[0].accepted and fits[0].current == 0.5 and path is not None
    question = load_rubric(path).checklist_items[0].questions[0]
    assert question.calibration_for(JUDGE).method == "reviews" and 0.2 < question.calibration_for(JUDGE).cutoff < 0.3
    assert question.calibration_for("another-judge") is None
    flipped = tmp_path / "flipped.jsonl"                       # the experts say the opposite: nothing beats 0.5
    flipped.write_text(labels.read_text(encoding="utf-8").replace("true", "X").replace("false", "true")
                       .replace("X", "false"), encoding="utf-8")
    fits, _, path = fit_thresholds(tmp_path / "runs.sqlite", "policy", flipped, proposal_dir=tmp_path / "q")
    assert path is None and not fits[0].accepted and "does not beat 0.5" in fits[0].reason


def load_rubric_text(tmp_path: Path):
    from rubriceval.rubric.loader import load_rubric

    path = tmp_path / "policy.yaml"
    path.write_text("""id: policy
name: 政策
criterion: 回答是否守政策
judge_mode: checklist
score_descriptions: {1: 差, 2: 较差, 3: 一般, 4: 较好, 5: 很好}
items:
  - id: checklist
    type: checklist
    questions:
      - {id: promised, ask: 回答是否承诺了政策以外的补偿？}
    levels: {5: "not promised", 1: "promised"}
""", encoding="utf-8")
    return load_rubric(path)
