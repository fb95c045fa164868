"""Agreement from expert audits and from labels files, stored per rubric version (rubriceval.trust.human_scores).

`make_audited_store` builds a real run store + audit tables in tmp_path; the other test_trust_* files use it.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from rubriceval import (
    AuditStore,
    DatasetError,
    Rubric,
    RubricEvalError,
    RunConfig,
    RunStore,
    Sample,
    TrustBar,
    Verdict,
    agreement_report,
)
from rubriceval.run.evaluate import scorer_rows
from rubriceval.stats.agreement import krippendorff_alpha
from rubriceval.trust.human_scores import (
    agreement_for_rubric,
    audited_items,
    consensus_score,
    read_label_file,
)
from rubriceval.trust.store import TrustStore


def tone_rubric(**changes) -> Rubric:
    data = dict(id="tone", name="Tone", language="en", criterion="Is the answer polite and warm?",
                score_descriptions={1: "rude", 2: "curt", 3: "neutral", 4: "polite", 5: "warm and polite"},
                trust=TrustBar(min_kappa=0.6, min_items=10))
    data.update(changes)
    return Rubric(**data)


@dataclass
class Row:
    """One sample of a test run: the judge's score (None = unscored) and the experts' scores."""

    sample: Sample
    judge: int | None
    experts: dict[str, int] = field(default_factory=dict)


def sample(i: int, *, answer: str | None = None, **extra) -> Sample:
    return Sample(id=f"s{i}", question=f"question {i}?", answer=answer or f"answer number {i}", **extra)


def make_audited_store(path: Path, rubric: Rubric, rows: list[Row], *, run_name: str = "r1",
                       judge_model: str = "scripted") -> str:
    """A run of `rubric` over the rows' samples, its verdicts, and the experts' audit responses; → run id."""
    runs = RunStore(path)
    config = RunConfig(rubrics={rubric.id: rubric.version_tag}, judge={"model": judge_model})
    run_id = runs.create_run(config, [r.sample for r in rows], scorer_rows([rubric], []), name=run_name)
    for r in rows:
        if r.judge is None:
            verdict = Verdict.unscored(r.sample.id, rubric.id, "parse_error", "no score in the reply",
                                       scorer_version=rubric.version_tag)
        else:
            verdict = Verdict(sample_id=r.sample.id, scorer=rubric.id, scorer_version=rubric.version_tag,
                              score=float(r.judge), feedback=f"judge feedback for {r.sample.id}")
        runs.save_verdict(run_id, verdict, r.sample.input_hash())
    runs.close()
    with AuditStore(path) as audits:
        for r in rows:
            for expert, score in r.experts.items():
                reason = "" if score == r.judge else f"{expert}: the judge missed something in {r.sample.id}"
                result = audits.save_response(run_id, r.sample.id, rubric.id, expert=expert, score=score,
                                              reason=reason,
                                              expected=audits.versions(run_id, r.sample.id, rubric.id))
                assert result.ok
    return run_id


def test_consensus_is_the_lower_median():
    assert consensus_score([4]) == 4
    assert consensus_score([3, 4]) == 3
    assert consensus_score([5, 1, 4]) == 4


def test_agreement_from_audits_matches_the_hand_computed_report(tmp_path):
    rubric = tone_rubric()
    store = tmp_path / "runs.sqlite"
    judge = [5, 4, 3, 2, 1, 5, 4, 3]
    human = [5, 4, 2, 2, 1, 3, 4, 4]
    rows = [Row(sample(i), judge[i], {"alice": human[i]}) for i in range(8)]
    rows.append(Row(sample(8), 4))                                       # not audited: not in the statistics
    make_audited_store(store, rubric, rows)

    report = agreement_for_rubric(store, "tone", n_boot=200)

    expected = agreement_report(judge, human, ids=[f"s{i}" for i in range(8)], n_boot=200)
    assert report.n == 8
    assert report.kappa_quadratic.value == pytest.approx(expected.kappa_quadratic.value)
    assert report.confusion == expected.confusion
    assert report.version_tag == rubric.version_tag and report.source == "audit"
    assert report.judge_model == "scripted"
    assert report.experts is None                                        # one expert: nothing to compare
    # An "agree" response is the judge's own score: item s0 (judge 5, alice agreed) is an exact match.
    assert report.confusion[4][4] >= 1
    with TrustStore(store) as trust:
        stored = trust.agreement_results("tone", rubric.version_tag)
    assert len(stored) == 1 and stored[0].n == 8 and stored[0].result_id == report.stored_result_id
    assert stored[0].kappa == pytest.approx(expected.kappa_quadratic.value)


def test_several_experts_give_consensus_and_between_expert_alpha(tmp_path):
    rubric = tone_rubric()
    store = tmp_path / "runs.sqlite"
    rows = [Row(sample(0), 5, {"alice": 5, "bob": 4}),
            Row(sample(1), 2, {"alice": 2, "bob": 1}),
            Row(sample(2), 3, {"alice": 4, "bob": 4, "carol": 3}),
            Row(sample(3), 1, {"bob": 1}),
            Row(sample(4), 4, {"alice": 4, "carol": 5})]
    make_audited_store(store, rubric, rows)

    audited = audited_items(store, "tone")
    assert audited.human_scores() == {"s0": 4, "s1": 1, "s2": 4, "s3": 1, "s4": 4}
    assert audited.items[0].reasons == {"bob": "bob: the judge missed something in s0"}

    report = agreement_for_rubric(store, "tone", n_boot=100, save=False)
    matrix = [[5, 4, float("nan")], [2, 1, float("nan")], [4, 4, 3], [4, float("nan"), 5]]
    assert report.experts is not None and report.experts.n_items == 4 and report.experts.n_experts == 3
    assert report.experts.alpha_ordinal.value == pytest.approx(krippendorff_alpha(matrix).value)
    assert report.experts.fleiss_kappa is None                           # 2, 2, 3, 2 ratings: not Fleiss-shaped
    assert report.experts.ratings_per_expert == {"alice": 4, "bob": 4, "carol": 2}
    assert "α" in report.summary()


def test_unscored_verdicts_are_counted_not_scored(tmp_path):
    rubric = tone_rubric()
    store = tmp_path / "runs.sqlite"
    rows = [Row(sample(i), s, {"alice": h}) for i, (s, h) in enumerate([(5, 5), (3, 2), (1, 1)])]
    rows.append(Row(sample(3), None, {"alice": 4}))                     # expert scored an unscored verdict
    make_audited_store(store, rubric, rows)
    report = agreement_for_rubric(store, "tone", n_boot=0, save=False)
    assert report.n == 3 and report.n_unscored == 1
    assert any("unscored" in note for note in report.notes)


def test_the_same_input_in_two_runs_is_one_item_and_versions_are_kept_apart(tmp_path):
    rubric = tone_rubric()
    store = tmp_path / "runs.sqlite"
    make_audited_store(store, rubric, [Row(sample(i), 4, {"alice": 4}) for i in range(3)], run_name="first")
    make_audited_store(store, rubric, [Row(sample(i), 4, {"bob": 3}) for i in range(3)], run_name="second")
    audited = audited_items(store, "tone")
    assert len(audited.items) == 3                                       # not 6
    assert audited.items[0].expert_scores == {"alice": 4, "bob": 3}
    assert all(item.run_name == "second" for item in audited.items)      # the newest run's verdict

    edited = tone_rubric(criterion="Is the answer polite, warm and short?")
    make_audited_store(store, edited, [Row(sample(9), 2, {"alice": 2})], run_name="third")
    assert audited_items(store, "tone").version_tag == edited.version_tag          # newest audited version
    assert len(audited_items(store, "tone", version_tag=rubric.version_tag).items) == 3
    assert len(audited_items(store, "tone", run="first").items) == 3
    with pytest.raises(RubricEvalError, match="no run used"):
        audited_items(store, "tone", version_tag="v9@nothing")


def test_responses_to_a_rescored_verdict_are_left_out(tmp_path):
    rubric = tone_rubric()
    store = tmp_path / "runs.sqlite"
    run_id = make_audited_store(store, rubric, [Row(sample(i), 3, {"alice": 3}) for i in range(3)])
    runs = RunStore(store)
    runs.save_verdict(run_id, Verdict(sample_id="s0", scorer="tone", scorer_version="v1@rescored", score=5.0))
    runs.close()
    audited = audited_items(store, "tone")
    assert [item.key for item in audited.items] == ["s1", "s2"]
    assert "different version of the verdict" in audited.notes[0]


def test_agreement_from_a_labels_file_with_several_experts(tmp_path):
    rubric = tone_rubric()
    store = tmp_path / "runs.sqlite"
    judge = [5, 4, 2, 1, 3, 4]
    make_audited_store(store, rubric, [Row(sample(i), judge[i]) for i in range(6)])   # no audits at all
    labels = tmp_path / "labels.csv"
    lines = ["sample_id,expert,score"]
    human_a = [5, 4, 1, 1, 3, 5]
    human_b = [5, 3, 2, 1, 3, 4]
    for i in range(6):
        lines += [f"s{i},alice,{human_a[i]}", f"s{i},bob,{human_b[i]}"]
    lines.append("ghost,alice,3")                                        # labelled, but not in the run
    labels.write_text("\n".join(lines) + "\n", encoding="utf-8")

    report = agreement_for_rubric(store, "tone", labels_file=labels, n_boot=100)

    consensus = [min(a, b) for a, b in zip(human_a, human_b)]           # lower median of two
    assert report.kappa_quadratic.value == pytest.approx(
        agreement_report(judge, consensus, n_boot=0).kappa_quadratic.value)
    assert report.source == "labels" and "labels.csv" in report.source_detail
    assert report.experts is not None and report.experts.fleiss_kappa is not None   # 2 ratings everywhere
    assert "ghost" in report.notes[0]
    with TrustStore(store) as trust:
        assert [r.source for r in trust.agreement_results("tone")] == ["labels"]


def test_labels_file_errors_name_the_line(tmp_path):
    bad = tmp_path / "labels.jsonl"
    bad.write_text(json.dumps({"sample_id": "s1", "score": 4}) + "\n"
                   + json.dumps({"sample_id": "s2", "score": 4.5}) + "\n", encoding="utf-8")
    with pytest.raises(DatasetError, match="whole number") as info:
        read_label_file(bad)
    assert info.value.line == 2
    twice = tmp_path / "twice.jsonl"
    twice.write_text(json.dumps({"id": "s1", "score": 4}) + "\n" + json.dumps({"id": "s1", "score": 3}) + "\n",
                     encoding="utf-8")
    with pytest.raises(DatasetError, match="second score"):
        read_label_file(twice)
    no_score = tmp_path / "no_score.jsonl"
    no_score.write_text(json.dumps({"id": "s1", "grade": 4}) + "\n", encoding="utf-8")
    with pytest.raises(DatasetError, match="needs a sample id and a score"):
        read_label_file(no_score)


def test_a_rubric_no_run_used_is_an_error(tmp_path):
    store = tmp_path / "runs.sqlite"
    make_audited_store(store, tone_rubric(), [Row(sample(0), 3, {"alice": 3})])
    with pytest.raises(RubricEvalError, match="no run in this store used rubric 'other'"):
        agreement_for_rubric(store, "other")
