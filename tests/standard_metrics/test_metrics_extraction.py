"""Extraction that cannot leak (issue 29): each text's statements come from a prompt showing that text alone, and
only statements found in their own text count; the contexts can be judged one per request; the cut is decided per
judge in call_modes.py."""
from __future__ import annotations

import pytest

from rubriceval import Sample
from rubriceval.standard_metrics.call_modes import MEASURED, CallModes, call_modes
from rubriceval.standard_metrics.grounding import ground
from rubriceval.standard_metrics.options import MetricOptions
from rubriceval.standard_metrics.registry import planned_calls, planned_requests, score_sample
from rubriceval.testing.scripted_judge import ScriptedJudge, fill_schema

QUESTION = "我入职满3年了，一年有几天年假？"
TRUTH = "入职满1年不满10年的员工每年有5天带薪年假。"
ANSWER = "入职满1年不满10年的员工每年有5天带薪年假。另外，年假还可以折算成现金发放。"
INVENTED = "年假还可以折算成现金发放"
CONTEXTS = ["年假制度：员工入职满1年不满10年的，每年享有带薪年假5天。", "请假制度：事假每年累计不超过10天。"]


def sample(**fields) -> Sample:
    return Sample(id="annual", question=QUESTION, answer=ANSWER, ground_truth=TRUTH, contexts=CONTEXTS, **fields)


def copying_judge() -> ScriptedJudge:
    """A judge that does what the 1.5B judge did: copies every sentence it was shown into both statement lists."""
    def extract(request):
        prompt = request[-1]["content"].split("现在处理：")[-1]
        shown = [s for s in (TRUTH.rstrip("。"), INVENTED) if s in prompt]
        return {"answer_statements": shown, "ground_truth_statements": shown}
    return ScriptedJudge({"extract_statements": extract, "judge_contexts": fill_schema(True)})


async def test_the_ground_truth_prompt_never_shows_the_answer():
    judge = copying_judge()
    await score_sample(sample(), ["context_recall", "faithfulness"], judge=judge)
    extractions = judge.calls("extract_statements")
    assert len(extractions) == 2
    truth_prompt = next(r for r in extractions if "ground_truth_statements" in r.json_schema["properties"])
    answer_prompt = next(r for r in extractions if "answer_statements" in r.json_schema["properties"])
    assert set(truth_prompt.json_schema["properties"]) == {"ground_truth_statements"}
    text = "\n".join(m["content"] for m in truth_prompt.messages)
    assert INVENTED not in text and ANSWER not in text and "<<<回答>>>" not in text
    assert "<<<标准答案>>>" not in "\n".join(m["content"] for m in answer_prompt.messages)


async def test_a_ground_truth_statement_copied_from_the_answer_is_never_produced():
    # merged extraction shows both texts, and the copying judge puts the invented sentence among the ground truth's
    # statements: the grounding check drops it because the ground truth does not say it
    judge = copying_judge()
    verdict = (await score_sample(sample(), ["context_recall", "faithfulness"], judge=judge,
                                  options={"extraction": "merged"}))[0]
    assert INVENTED in judge.calls("extract_statements")[0][-1]["content"]      # the prompt did show the answer
    assert verdict.details["statements"] == [TRUTH.rstrip("。")]
    assert [d["statement"] for d in verdict.details["dropped_statements"]] == [INVENTED]
    assert verdict.details["dropped_statements"][0]["reason"] == "not_in_source"
    assert any(e.item == INVENTED and e.passed is None for e in verdict.evidence)     # shown, not counted
    contexts_call = judge.calls("judge_contexts")[0]
    assert INVENTED not in contexts_call[-1]["content"].split("标准答案中的陈述")[-1]


def test_the_grounding_check_drops_a_statement_not_in_its_source():
    result = ground(["员工每年有5天带薪年假", "事假每年累计不超过10天", "年假需提前3个工作日申请"], TRUTH, QUESTION)
    assert result.kept == ["员工每年有5天带薪年假"]
    assert {d.statement: d.reason for d in result.dropped} == {"事假每年累计不超过10天": "not_in_source",
                                                               "年假需提前3个工作日申请": "not_in_source"}


def test_an_invented_number_is_not_grounded_by_a_source_with_another():
    assert ground(["员工每年有15天带薪年假"], TRUTH, QUESTION).dropped[0].reason == "not_in_source"


@pytest.mark.parametrize("statement", ["一年有几天年假？", "我入职满3年了，一年有几天年假", "年假有几天吗",
                                       "How many days of leave do I get?"])
def test_a_question_is_not_a_statement(statement):
    dropped = ground([statement], TRUTH + " You get 5 days of leave.", QUESTION).dropped
    assert [d.reason for d in dropped] == ["question"]


@pytest.mark.parametrize("statement", ["您好，很高兴为您服务", "感谢您的咨询", "Hope this helps!", "Thank you for asking."])
def test_a_greeting_is_not_a_statement(statement):
    assert [d.reason for d in ground([statement], "您好，感谢您的咨询。Hope this helps! Thank you.").dropped] \
        == ["greeting"]


async def test_the_question_restated_by_the_judge_does_not_make_faithfulness_zero():
    judge = ScriptedJudge({"extract_statements": {"answer_statements": [QUESTION, TRUTH.rstrip("。")]},
                           "judge_contexts": fill_schema(True)})
    verdict = (await score_sample(sample().model_copy(update={"answer": TRUTH}), ["faithfulness"], judge=judge))[0]
    assert verdict.score == 1.0 and verdict.details["statements"] == [TRUTH.rstrip("。")]
    assert verdict.details["dropped_statements"][0]["reason"] == "question"


async def test_everything_dropped_is_unscored_and_says_so():
    judge = ScriptedJudge({"extract_statements": {"answer_statements": ["请问您还有其他问题吗？"]}})
    verdict = (await score_sample(sample(), ["faithfulness"], judge=judge))[0]    # nothing kept: nothing added
    assert verdict.score is None and verdict.unscored_kind == "no_statements"
    assert "1" in verdict.unscored_reason and verdict.details["dropped_statements"]


async def test_per_context_requests_combine_into_the_same_verdicts():
    def contexts(request):
        shown = request[-1]["content"].split("现在处理：")[-1]
        in_c1 = "年假制度" in shown
        return fill_schema(True, {"contexts.c1.relevant": in_c1, "answer_statements.s1.supported": in_c1,
                                  "answer_statements.s2.supported": False,
                                  "ground_truth_statements.g1.attributed": in_c1})(request)
    judge = ScriptedJudge({"extract_statements": {"answer_statements": [TRUTH.rstrip("。"), INVENTED],
                                                  "ground_truth_statements": [TRUTH.rstrip("。")]},
                           "judge_contexts": contexts})
    names = ["context_precision", "context_recall", "faithfulness"]
    options = {"context_calls": "per_context"}
    verdicts = {v.scorer: v for v in await score_sample(sample(), names, judge=judge, options=options)}
    assert len(judge.calls("judge_contexts")) == 2
    assert all(len(r.json_schema["properties"]["contexts"]["properties"]) == 1 for r in judge.calls("judge_contexts"))
    assert verdicts["context_precision"].score == 1.0          # c1 relevant, c2 not
    assert verdicts["context_recall"].score == 1.0
    assert verdicts["faithfulness"].score == 0.5
    assert verdicts["context_recall"].details["reasons"][0].startswith("c1: ")
    assert verdicts["context_precision"].usage.calls == 2   # the 2 context requests, charged to the first consumer
    assert verdicts["context_recall"].usage.calls == 2      # the 2 extraction requests
    planned = planned_requests(sample(), names, options)
    assert [p.kind for p in planned] == ["extract_statements/answer", "extract_statements/ground_truth",
                                         "judge_contexts/c1", "judge_contexts/c2"]
    assert planned_calls(sample(), names, options) == len(judge.requests) == 4


async def test_merged_calls_stay_an_option():
    judge = copying_judge()
    options = {"extraction": "merged", "context_calls": "merged"}
    await score_sample(sample(), ["context_recall", "faithfulness"], judge=judge, options=options)
    assert [r.schema_name for r in judge.requests] == ["extract_statements", "judge_contexts"]
    assert planned_calls(sample(), ["context_recall", "faithfulness"], options) == 2


async def test_one_failed_half_of_a_split_extraction_spares_the_other():
    from rubriceval.testing.scripted_judge import judge_error

    def extract(request):
        if "ground_truth_statements" in request.json_schema["properties"]:
            return judge_error("HTTP 500 after 4 attempts")
        return {"answer_statements": [TRUTH.rstrip("。")]}
    judge = ScriptedJudge({"extract_statements": extract, "judge_contexts": fill_schema(True)})
    verdicts = {v.scorer: v for v in await score_sample(sample(), ["context_recall", "faithfulness"], judge=judge)}
    assert verdicts["faithfulness"].score == 1.0
    assert verdicts["context_recall"].unscored_kind == "provider_error"
    assert "HTTP 500" in verdicts["context_recall"].unscored_reason


def test_the_cut_is_decided_per_judge_in_one_place(monkeypatch):
    monkeypatch.setitem(MEASURED, "tiny-judge", CallModes(extraction="split", context_calls="per_context"))
    assert call_modes(MetricOptions(), "tiny-judge").context_calls == "per_context"
    assert call_modes(MetricOptions(), "another-judge") == CallModes()
    assert call_modes(MetricOptions(context_calls="merged"), "tiny-judge").context_calls == "merged"   # options win
    assert call_modes(MetricOptions(extraction="merged"), None).extraction == "merged"


async def test_the_judge_in_use_decides_the_cut(monkeypatch):
    monkeypatch.setitem(MEASURED, "scripted", CallModes(extraction="split", context_calls="per_context"))
    judge = ScriptedJudge({"extract_statements": {"answer_statements": [TRUTH.rstrip("。")]},
                           "judge_contexts": fill_schema(True)})
    await score_sample(sample(), ["faithfulness"], judge=judge)
    assert len(judge.calls("judge_contexts")) == len(CONTEXTS)
    assert len(planned_requests(sample(), ["faithfulness"], judge_model="scripted")) == 1 + len(CONTEXTS)


async def test_a_yes_the_contexts_text_does_not_bear_out_is_overruled_with_support_judge_and_text():
    # the judge attributes the other 张伟's extension to a row that says 8123 (what the 1.5B judge did)
    row = "员工信息表｜工号：E1023｜姓名：张伟｜部门：教研部｜职位：课程研发工程师｜分机：8123"
    wrong = Sample(id="z", question="市场部的张伟分机是多少？", answer="张伟的分机是8123。",
                   ground_truth="市场部的张伟分机是8311。", contexts=[row])
    script = {"extract_statements": {"answer_statements": ["张伟的分机是8123"],
                                     "ground_truth_statements": ["市场部的张伟分机是8311"]},
              "judge_contexts": fill_schema(True, reason="资料中有分机信息")}
    names = ["context_recall", "faithfulness"]
    trusting = {v.scorer: v for v in await score_sample(wrong, names, judge=ScriptedJudge(script))}
    checked = {v.scorer: v for v in await score_sample(wrong, names, judge=ScriptedJudge(script),
                                                       options={"support": "judge_and_text"})}
    assert trusting["context_recall"].score == 1.0
    assert checked["context_recall"].score == 0.0                       # 8311 is in no context
    assert "找不到这句的依据" in checked["context_recall"].details["reasons"][0]
    assert checked["faithfulness"].score == 1.0                         # 8123 is: the judge's yes stands
    assert "stext" in checked["context_recall"].scorer_version
    assert trusting["context_recall"].scorer_version != checked["context_recall"].scorer_version


async def test_an_answer_sentence_the_judge_skipped_is_still_checked():
    # the 1.5B judge left the invented sentence out of the answer's statements: it is added from the answer itself
    judge = ScriptedJudge({"extract_statements": {"answer_statements": [TRUTH.rstrip("。")]},
                           "judge_contexts": fill_schema(True)})
    verdict = (await score_sample(sample(), ["faithfulness"], judge=judge, options={"support": "judge_and_text"}))[0]
    assert verdict.details["statements"] == [TRUTH.rstrip("。"), "另外，" + INVENTED]
    assert verdict.details["added_statements"] == ["另外，" + INVENTED]
    assert verdict.score == 0.5                                # the contexts' text does not bear the invention out
    greeting = sample().model_copy(update={"answer": TRUTH + "如有疑问，请随时联系人事部。"})
    judge = ScriptedJudge({"extract_statements": {"answer_statements": [TRUTH.rstrip("。")]},
                           "judge_contexts": fill_schema(True)})
    verdict = (await score_sample(greeting, ["faithfulness"], judge=judge))[0]
    assert "added_statements" not in verdict.details and verdict.score == 1.0


def test_the_embedded_judge_has_its_measured_cut_and_an_unnamed_endpoint_does_not():
    from rubriceval import JudgeConfig
    from rubriceval.standard_metrics.call_modes import EMBEDDED, judge_model_of

    class Client:
        def __init__(self, config):
            self.config = config
    assert judge_model_of(Client(JudgeConfig())) == EMBEDDED
    assert call_modes(MetricOptions(), EMBEDDED).support == "judge_and_text"
    assert judge_model_of(Client(JudgeConfig(base_url="http://127.0.0.1:9/v1"))) is None      # model not set
    assert judge_model_of(Client(JudgeConfig(base_url="http://127.0.0.1:9/v1", model="qwen-max"))) == "qwen-max"
    assert call_modes(MetricOptions(), "qwen-max") == CallModes()
