"""The non-LLM context match of structured rows (issue 29): a table row matches only when its key fields match,
not by edit similarity over the layout every row of the table shares."""
from __future__ import annotations

from rubriceval import Sample
from rubriceval.standard_metrics.nonllm_context import (
    nonllm_context_precision,
    nonllm_context_recall,
    rows_match,
    similarity_matrix,
    table_row,
)
from rubriceval.standard_metrics.registry import score_sample

ZHANG_TEACHING = "员工信息表｜工号：E1023｜姓名：张伟｜部门：教研部｜职位：课程研发工程师｜分机：8123｜办公地点：A座5楼"
ZHANG_MARKETING = "员工信息表｜工号：E2041｜姓名：张伟｜部门：市场部｜职位：品牌经理｜分机：8311｜办公地点：B座2楼"
OTHER = "员工信息表｜工号：E1230｜姓名：王芳｜部门：技术部｜职位：后端工程师｜分机：8530｜办公地点：C座6楼"


def test_edit_similarity_alone_would_call_the_other_zhang_wei_the_same_chunk():
    from rubriceval.standard_metrics.string_metrics import string_similarity
    assert string_similarity(ZHANG_TEACHING, ZHANG_MARKETING, "levenshtein") > 0.5


def test_a_row_matches_only_when_its_key_field_matches():
    assert table_row(ZHANG_TEACHING)["工号"] == "E1023"
    assert similarity_matrix([ZHANG_MARKETING, OTHER], [ZHANG_TEACHING]) == [[0.0], [0.0]]
    assert nonllm_context_recall([ZHANG_MARKETING, OTHER], [ZHANG_TEACHING]).score == 0.0
    assert nonllm_context_recall([OTHER, ZHANG_TEACHING], [ZHANG_TEACHING]).score == 1.0
    assert nonllm_context_precision([OTHER, ZHANG_TEACHING], [ZHANG_TEACHING]).verdicts == [0, 1]
    assert nonllm_context_recall([ZHANG_MARKETING], [ZHANG_TEACHING]).row_pairs == 1


def test_named_key_fields_and_normalised_values():
    same_name = ZHANG_MARKETING.replace("E2041", "E1023")
    assert rows_match(table_row(same_name), table_row(ZHANG_TEACHING), None)
    assert not rows_match(table_row(same_name), table_row(ZHANG_TEACHING), ["工号", "部门"])
    assert rows_match(table_row(ZHANG_MARKETING), table_row(ZHANG_TEACHING), ["姓名"])       # only the name asked
    assert rows_match(table_row("工号：ｅ1023 | 姓名：张伟 | 部门：教研部"), table_row(ZHANG_TEACHING), None)
    assert not rows_match(table_row(ZHANG_TEACHING), table_row("姓名：张伟｜部门：教研部｜分机：8123"), ["工号"])


def test_prose_is_still_compared_by_edit_similarity():
    assert table_row("故宫位于北京，是明清两代的皇宫。") is None
    assert table_row("时间：2024年") is None                     # fewer than 3 fields: not a row
    assert similarity_matrix(["故宫在北京"], ["故宫位于北京"]) == [[1 - 2 / 6]]


async def test_the_metric_reads_the_key_fields_option():
    sample = Sample(id="z", question="教研部的张伟分机多少？", answer="8311", contexts=[ZHANG_MARKETING],
                    reference_contexts=[ZHANG_TEACHING])
    (default,) = await score_sample(sample, ["nonllm_context_recall"])
    (by_name,) = await score_sample(sample, ["nonllm_context_recall"], options={"nonllm_key_fields": ["姓名"]})
    assert default.score == 0.0 and by_name.score == 1.0
    assert default.details["row_pairs"] == 1
