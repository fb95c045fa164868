"""What evaluate() returns, as Ragas/DeepEval users expect it (issue 32.2–32.4): it prints as a dict of means,
result["metric"] is per-sample values in dataset order, to_pandas(wide=True) is one row per sample, metric
verdicts carry `passed` against their threshold (settable), and assert_case gives one test per sample with a
failure message holding the feedback and the evidence."""
from __future__ import annotations

from pathlib import Path

import pytest

from rubriceval import ConfigError, evaluate
from rubriceval.testing import assert_case

ROWS = [
    {"question": "退款多久到账？", "answer": "退款三到五个工作日到账", "ground_truth": "退款三到五个工作日到账"},
    {"question": "怎么申请退货？", "answer": "请联系客服", "ground_truth": "在 https://example.com/returns 提交申请",
     "contexts": ["退货入口：https://example.com/returns"]},
    {"question": "发票怎么开？", "answer": "在订单页点击开具发票", "ground_truth": "在订单页开具发票"},
]


@pytest.fixture(scope="module")
def result(tmp_path_factory: pytest.TempPathFactory):
    store = tmp_path_factory.mktemp("api") / "runs.sqlite"
    return evaluate(ROWS, rubrics="rubrics/required_link.yaml", metrics="rouge_l,exact_match", store=store,
                    progress=False, thresholds={"rouge_l": 0.6})


def test_the_result_prints_as_a_dict_of_means(result):
    rouge = result["rouge_l"]
    assert result.scores["rouge_l"] == pytest.approx(round(sum(rouge) / 3, 4))
    assert repr(result) == repr(result.scores) == str(result)
    assert set(result.keys()) == {"required_link", "rouge_l", "exact_match"}


def test_indexing_gives_per_sample_values_in_dataset_order(result):
    assert result["exact_match"] == [1.0, 0.0, 0.0]
    assert result["rouge_l"][0] == 1.0 and len(result["rouge_l"]) == 3
    link = result["required_link"]                     # applies only to the question asking how to apply
    assert link[0] is None and link[2] is None and link[1] is not None
    with pytest.raises(KeyError, match="it has exact_match, rouge_l, required_link"):
        result["faithfulness"]


def test_wide_frame_has_one_row_per_sample(result):
    wide = result.to_pandas(wide=True)
    assert list(wide["id"]) == result.sample_ids and len(wide) == 3
    assert {"question", "answer", "contexts", "ground_truth", "rouge_l", "exact_match", "required_link",
            "unscored"} <= set(wide.columns)
    assert wide["exact_match"].tolist() == [1.0, 0.0, 0.0]
    assert wide["required_link"].isna().tolist() == [True, False, True]     # not applicable: NA, not 0
    assert wide["rouge_l"].mean() == pytest.approx(sum(result["rouge_l"]) / 3)
    long = result.to_pandas()
    assert len(long) == len(result.verdicts)


def test_metric_verdicts_pass_against_their_threshold(result):
    passed = {(v.sample_id, v.scorer): v.passed for v in result.verdicts if v.kind == "metric"}
    first, second, _ = result.sample_ids
    rouge = dict(zip(result.sample_ids, result["rouge_l"]))
    assert passed[(first, "rouge_l")] is True and passed[(first, "exact_match")] is True
    assert passed[(second, "exact_match")] is False                       # default threshold 0.5
    assert all(passed[(sid, "rouge_l")] == (rouge[sid] >= 0.6) for sid in result.sample_ids)   # set: 0.6
    frame = result.to_pandas()
    assert frame.loc[frame.scorer == "exact_match", "passed"].tolist() == [True, False, False]
    summary = {s.scorer: s for s in result.summary().scorers}
    assert summary["rouge_l"].threshold == 0.6 and summary["exact_match"].threshold == 0.5


def test_a_threshold_names_a_metric_of_the_run(tmp_path: Path):
    with pytest.raises(ConfigError, match="not a metric of this run"):
        evaluate(ROWS, metrics="rouge_l", store=tmp_path / "r.sqlite", progress=False, thresholds={"faithfulnes": 1})


def test_assert_case_one_test_per_sample(result):
    cases = result.cases()
    assert [str(c) for c in cases] == result.sample_ids
    assert_case(cases[0])                                                # all pass
    with pytest.raises(AssertionError) as failed:
        assert_case(cases[1])
    message = str(failed.value)
    assert "required_link: 1 < threshold 4" in message and "exact_match: 0 < threshold 0.5" in message
    assert "official_link" in message and "✗" in message                 # the evidence of each check
    assert "question: 怎么申请退货？" in message and "answer: 请联系客服" in message


def test_assert_case_judges_one_sample_itself(tmp_path: Path):
    store = tmp_path / "one.sqlite"
    case = assert_case({"user_input": "退款多久到账？", "response": "退款三到五个工作日到账",
                        "reference": "退款三到五个工作日到账"}, metrics="exact_match", store=store)
    assert case.passed and case.verdicts[0].score == 1.0
    with pytest.raises(AssertionError, match="exact_match: 0 < threshold 0.5"):
        assert_case({"question": "q", "answer": "a", "ground_truth": "b"}, metrics="exact_match", store=store)
    with pytest.raises(TypeError, match="rubrics= and/or metrics="):
        assert_case({"question": "q"})
