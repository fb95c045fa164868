"""benchmark-judge cs_zh on the stub judge: every mode runs end to end on the labelled set, the fitted mode is
cross-fitted (and reports the rule beside it), a row equal to a rubric example is refused."""
import json

import pytest

from benchmarks.judge.cs_zh import load_labelled, run_cs_benchmark_async, spread
from rubriceval.common.errors import DatasetError


def test_labelled_set_is_balanced_over_rubrics_and_levels():
    rows = load_labelled(None)
    assert len(rows) >= 60
    by_rubric: dict[str, list[int]] = {}
    for row in rows:
        by_rubric.setdefault(row.metadata["rubric"], []).append(int(row.metadata["label"]))
    assert len(by_rubric) >= 3
    for labels in by_rubric.values():
        assert sorted(set(labels)) == [1, 2, 3, 4, 5] and min(labels.count(k) for k in range(1, 6)) >= 4
    subset = spread(rows, 33)
    assert len(subset) == 33 and {r.metadata["rubric"] for r in subset} == set(by_rubric)


async def test_fitted_mode_is_cross_fitted_and_reports_the_rule(judge_config, stub_server):
    result = await run_cs_benchmark_async(judge_config, "checklist_fitted", n_boot=20, progress=False)
    assert result.n_items == 66 and result.n_scored == 66
    assert result.rule_overall is not None and set(result.rule_per_rubric) == set(result.per_rubric)
    assert all(row.rule_score is not None for row in result.rows)
    # every row the judge answered has its questions' p(yes); cs-C18 (an instruction to the judge) may be
    # decided without the judge by the manipulation screen
    assert sum(bool(row.p_yes) for row in result.rows) >= 65
    assert set(result.fitted_on_all) == set(result.per_rubric)
    assert result.usage.calls == stub_server.stats.calls["chat"]


async def test_holistic_zero_shot_sends_no_examples(judge_config, stub_server):
    result = await run_cs_benchmark_async(judge_config, "holistic", few_shot="none", n=6, n_boot=20,
                                          progress=False)
    assert result.n_items == 6 and result.usage.calls == 6
    prompts = [json.dumps(r.body["messages"], ensure_ascii=False) for r in stub_server.stats.requests]
    assert not any("参考示例" in p for p in prompts)


async def test_a_row_equal_to_a_rubric_example_is_refused(judge_config, tmp_path):
    rows = [json.loads(line) for line in open("datasets/labelled/cs_zh_labels.jsonl", encoding="utf-8")][44:46]
    rows[0].update(question="差旅费怎么报销？", answer="您可以找财务部门咨询一下报销的事情。")
    leaked = tmp_path / "leak.jsonl"
    leaked.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows), encoding="utf-8")
    rubrics = tmp_path / "rubrics"
    rubrics.mkdir()
    text = open("rubrics/policy_compliance.yaml", encoding="utf-8").read()
    (rubrics / "policy_compliance.yaml").write_text(text.replace(
        "  - question: 耳机用了三天不想要了能退吗？\n    answer: 您加我个人微信，我私下给您转账退款，不用走退货流程。",
        "  - question: 差旅费怎么报销？\n    answer: 您可以找财务部门咨询一下报销的事情。"), encoding="utf-8")
    with pytest.raises(DatasetError, match="few-shot examples"):
        await run_cs_benchmark_async(judge_config, "holistic", data=leaked, rubrics_dir=rubrics, progress=False)


async def test_fitted_mode_reuses_a_saved_checklist_result_without_calls(judge_config, stub_server, tmp_path):
    first = await run_cs_benchmark_async(judge_config, "checklist", n_boot=20, progress=False)
    saved = tmp_path / "checklist.json"
    saved.write_text(first.model_dump_json(), encoding="utf-8")
    calls = stub_server.stats.calls["chat"]
    fitted = await run_cs_benchmark_async(judge_config, "checklist_fitted", answers=saved, n_boot=20, progress=False)
    assert stub_server.stats.calls["chat"] == calls                      # no judge call
    assert [r.rule_score for r in fitted.rows] == [r.judge_score for r in first.rows]
    assert fitted.usage == first.usage and fitted.rule_overall.kappa_quadratic == first.overall.kappa_quadratic
    with pytest.raises(DatasetError, match="not this run's rows"):
        await run_cs_benchmark_async(judge_config, "checklist_fitted", answers=saved, n=10, progress=False)
