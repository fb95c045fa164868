"""LLM metrics with a scripted judge: the arithmetic of each formula, the seeds' worked examples, edge cases,
invalid output, provider errors, usage attribution, languages and replaceable templates."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from rubriceval import ConfigError, Sample
from rubriceval.judge.tokens import estimate_messages_tokens
from rubriceval.standard_metrics.catalog import RAGAS_FIVE
from rubriceval.standard_metrics.formulas import cosine_similarity
from rubriceval.standard_metrics.prompts import BUILTIN_DIR
from rubriceval.standard_metrics.registry import needs_embedder, needs_judge, score_sample
from rubriceval.standard_metrics.testing import CharBigramEmbedder
from rubriceval.testing.scripted_judge import ScriptedJudge, fill_schema, judge_error

ZHANG_QUESTION = "张伟是哪个部门的？"
ZHANG_TRUTH = "张伟是教研部的成员"


def zhang(answer: str, **fields) -> Sample:
    return Sample(id="zhang", question=ZHANG_QUESTION, answer=answer, ground_truth=ZHANG_TRUTH, **fields)


def by_name(verdicts):
    return {v.scorer: v for v in verdicts}


# --- answer_correctness ----------------------------------------------------------------------------------------

async def test_zhang_wei_correct_answer_scores_far_above_hallucinated_and_invalid():
    embedder = CharBigramEmbedder()
    cases = {
        "correct": ("张伟是教研部的", ["张伟是教研部的。"], {}),
        "hallucinated": ("张伟是人事部门的", ["张伟是人事部门的。"],
                         {"answer_statements.s1.in_ground_truth": False,
                          "ground_truth_statements.g1.in_answer": False}),
        "invalid": ("根据提供的信息，没有提到张伟所在的部门。如果您能提供更多关于张伟的信息，我可能能够帮助您找到答案。", [], {}),
    }
    scores, calls = {}, {}
    for label, (answer, statements, overrides) in cases.items():
        judge = ScriptedJudge({
            "extract_statements": {"answer_statements": statements, "ground_truth_statements": ["张伟是教研部的成员。"]},
            "classify_statements": fill_schema(True, overrides)})
        verdict = (await score_sample(zhang(answer), ["answer_correctness"], judge=judge, embedder=embedder))[0]
        similarity = cosine_similarity(embedder.vector(answer), embedder.vector(ZHANG_TRUTH))
        factual = 1.0 if label == "correct" else 0.0
        assert verdict.score == pytest.approx(0.25 * similarity + 0.75 * factual, abs=1e-12)
        scores[label], calls[label] = verdict.score, len(judge.requests)
    assert scores["correct"] > 0.9
    assert scores["correct"] - max(scores["hallucinated"], scores["invalid"]) > 0.6
    # two extraction requests (answer alone, ground truth alone) + classification; nothing to classify in a refusal
    assert calls == {"correct": 3, "hallucinated": 3, "invalid": 2}


async def test_tp_fp_fn_of_the_seed_example_and_evidence():
    # answer 张伟是教研部负责大模型课程的同事 vs truth 张伟是教研部负责大数据方向的同事 → F1 = 1 / (1 + 0.5·2)
    sample = Sample(id="tp", question="张伟是做什么的？", answer="张伟是教研部负责大模型课程的同事。",
                    ground_truth="张伟是教研部负责大数据方向的同事。")
    judge = ScriptedJudge({
        "extract_statements": {"answer_statements": ["张伟是教研部的。", "张伟负责大模型课程。"],
                               "ground_truth_statements": ["张伟是教研部的。", "张伟负责大数据方向。"]},
        "classify_statements": fill_schema(True, {"answer_statements.s2.in_ground_truth": False,
                                                  "ground_truth_statements.g2.in_answer": False}),
    })
    verdict = (await score_sample(sample, ["answer_correctness"], judge=judge,
                                  options={"semantic_weight": 0.0}))[0]
    assert verdict.score == 0.5
    assert verdict.details["classes"] == {"TP": ["张伟是教研部的。"], "FP": ["张伟负责大模型课程。"],
                                          "FN": ["张伟负责大数据方向。"]}
    assert (verdict.details["tp"], verdict.details["fp"], verdict.details["fn"]) == (1, 1, 1)
    assert [e.detail.split(":")[0] for e in verdict.evidence] == ["TP", "FP", "FN"]
    assert "semantic_similarity" not in verdict.details       # weight 0 → no embedding asked for


async def test_weights_and_beta_are_configurable():
    embedder = CharBigramEmbedder()
    sample = zhang("张伟是教研部的，负责课程研发。")
    script = {"extract_statements": {"answer_statements": ["张伟是教研部的。", "张伟负责课程研发。"],
                                     "ground_truth_statements": ["张伟是教研部的成员。"]},
              "classify_statements": fill_schema(True, {"answer_statements.s2.in_ground_truth": False})}
    similarity = cosine_similarity(embedder.vector(sample.answer), embedder.vector(ZHANG_TRUTH))
    default = (await score_sample(sample, ["answer_correctness"], judge=ScriptedJudge(script), embedder=embedder))[0]
    assert default.score == pytest.approx(0.25 * similarity + 0.75 * (1 / (1 + 0.5)), abs=1e-12)   # TP1 FP1 FN0
    custom = (await score_sample(sample, ["answer_correctness"], judge=ScriptedJudge(script), embedder=embedder,
                                 options={"semantic_weight": 1, "factual_weight": 1, "factual_beta": 2}))[0]
    f2 = 5 * 1 / (5 * 1 + 4 * 0 + 1)
    assert custom.score == pytest.approx((similarity + f2) / 2, abs=1e-12)
    pure_similarity = (await score_sample(sample, ["answer_correctness"], judge=None, embedder=embedder,
                                          options={"factual_weight": 0}))[0]
    assert pure_similarity.score == pytest.approx(similarity) and pure_similarity.usage.calls == 0
    with pytest.raises(ValueError):
        await score_sample(sample, ["answer_correctness"], options={"factual_weight": 0, "semantic_weight": 0})


# --- faithfulness, context precision / recall ----------------------------------------------------------------

EINSTEIN_CONTEXT = "阿尔伯特·爱因斯坦（生于1879年3月14日）是一位出生于德国的理论物理学家"


async def test_faithfulness_seed_example_half_supported():
    sample = Sample(id="e", question="爱因斯坦何时何地出生？", answer="爱因斯坦于1879年3月20日出生在德国。",
                    contexts=[EINSTEIN_CONTEXT])
    judge = ScriptedJudge({
        "extract_statements": {"answer_statements": ["爱因斯坦出生在德国。", "爱因斯坦生于1879年3月20日。"]},
        "judge_contexts": fill_schema(True, {"answer_statements.s2.supported": False}, reason="上下文说是14日"),
    })
    verdict = (await score_sample(sample, ["faithfulness"], judge=judge))[0]
    assert verdict.score == 0.5
    assert [e.passed for e in verdict.evidence] == [True, False]
    assert "爱因斯坦生于1879年3月20日。" in verdict.feedback
    contexts_request = judge.calls("judge_contexts")[0]
    assert set(contexts_request.json_schema["properties"]) == {"answer_statements"}   # only what is needed
    assert "标准答案" not in contexts_request.messages[1]["content"].split("现在处理")[1]


async def test_seed_context_precision_half_and_recall_one():
    # seeds: contexts [牛顿发现了万有引力, 张伟 教研部工程师…] → context_precision 0.5, context_recall 1
    sample = zhang("张伟是教研部的", contexts=["牛顿发现了万有引力", "张伟 教研部工程师，他最近在负责课程研发"])
    judge = ScriptedJudge({
        "extract_statements": {"ground_truth_statements": ["张伟是教研部的成员。"]},
        "judge_contexts": fill_schema(True, {"contexts.c1.relevant": False}),
    })
    verdicts = by_name(await score_sample(sample, ["context_precision", "context_recall"], judge=judge))
    assert verdicts["context_precision"].score == 0.5
    assert verdicts["context_precision"].details["verdicts"] == [0, 1]
    assert verdicts["context_recall"].score == 1.0
    assert len(judge.requests) == 2          # one extraction, ONE call for all contexts


async def test_context_precision_average_precision_over_five_contexts():
    sample = zhang("张伟是教研部的", contexts=[f"资料{i}" for i in range(1, 6)])
    judge = ScriptedJudge({"judge_contexts": fill_schema(True, {"contexts.c3.relevant": False,
                                                                 "contexts.c5.relevant": False})})
    verdict = (await score_sample(sample, ["context_precision"], judge=judge))[0]
    assert verdict.score == pytest.approx(11 / 12, abs=1e-12)
    assert len(judge.requests) == 1
    assert verdict.details["precision_at_k"] == pytest.approx([1, 1, 2 / 3, 3 / 4, 3 / 5])


async def test_context_utilization_judges_against_the_answer():
    sample = Sample(id="u", question="退款多久到账？", answer="3-5个工作日原路退回。",
                    contexts=["会员积分说明", "退款3-5个工作日原路退回"])
    judge = ScriptedJudge({"judge_contexts": fill_schema(True, {"contexts.c1.used": False})})
    verdict = (await score_sample(sample, ["context_utilization"], judge=judge))[0]
    assert verdict.score == 0.5
    prompt = judge.requests[0].messages[1]["content"].split("现在处理")[1]
    assert "3-5个工作日原路退回。" in prompt and "标准答案" not in prompt


async def test_context_recall_seed_example_two_of_three():
    sample = Sample(id="r", question="爱因斯坦在哪一年获得了诺贝尔奖，是因为什么发现？",
                    ground_truth="爱因斯坦在1921年获得了诺贝尔物理学奖，因为发现了光电效应定律。",
                    contexts=["爱因斯坦因光电效应的发现获得了诺贝尔奖。"])
    judge = ScriptedJudge({
        "extract_statements": {"ground_truth_statements": ["爱因斯坦在1921年获奖。", "爱因斯坦获得诺贝尔物理学奖。",
                                                           "获奖原因是发现光电效应定律。"]},
        "judge_contexts": fill_schema(True, {"ground_truth_statements.g1.attributed": False}),
    })
    verdict = (await score_sample(sample, ["context_recall"], judge=judge))[0]
    assert verdict.score == pytest.approx(2 / 3)
    assert "爱因斯坦在1921年获奖。" in verdict.feedback


# --- answer_relevancy ------------------------------------------------------------------------------------------

async def test_answer_relevancy_is_mean_cosine_of_reverse_questions():
    embedder = CharBigramEmbedder()
    questions = ["张伟是哪个部门的？", "张伟在哪个部门工作？", "教研部有哪些人？"]
    judge = ScriptedJudge({"reverse_questions": {"questions": {f"q{i + 1}": q for i, q in enumerate(questions)},
                                                 "noncommittal": False}})
    verdict = (await score_sample(zhang("张伟是教研部的"), ["answer_relevancy"], judge=judge, embedder=embedder))[0]
    expected = sum(cosine_similarity(embedder.vector(q), embedder.vector(ZHANG_QUESTION)) for q in questions) / 3
    assert verdict.score == pytest.approx(expected, abs=1e-12)
    assert verdict.details["generated_questions"] == questions
    # one embedding request; q1 repeats the question, so it is embedded once
    assert embedder.calls == [[ZHANG_QUESTION, questions[1], questions[2]]]
    # the judge must not see the original question, or it would just copy it back
    assert ZHANG_QUESTION not in judge.requests[0].messages[1]["content"].split("现在处理")[1]


async def test_noncommittal_answer_scores_zero_even_without_embeddings():
    judge = ScriptedJudge({"reverse_questions": {"questions": {"q1": "张伟是哪个部门的？", "q2": "张伟在哪？",
                                                               "q3": "张伟是谁？"}, "noncommittal": True}})
    broken = CharBigramEmbedder(fail_with="HTTP 503")
    verdict = (await score_sample(zhang("根据提供的信息，没有提到张伟所在的部门。"), ["answer_relevancy"],
                                  judge=judge, embedder=broken))[0]
    assert verdict.score == 0.0 and verdict.details["noncommittal"] is True


async def test_relevancy_question_count_follows_options():
    judge = ScriptedJudge({"reverse_questions": fill_schema(reason="张伟是哪个部门的？", default=False)})
    verdict = (await score_sample(zhang("张伟是教研部的"), ["answer_relevancy"], judge=judge,
                                  embedder=CharBigramEmbedder(), options={"relevancy_questions": 5}))[0]
    assert list(judge.requests[0].json_schema["properties"]["questions"]["properties"]) == ["q1", "q2", "q3", "q4",
                                                                                           "q5"]
    assert len(verdict.details["similarities"]) == 5 and verdict.score == pytest.approx(1.0)


async def test_embedding_failure_leaves_embedding_metrics_unscored():
    judge = ScriptedJudge({"reverse_questions": {"questions": {"q1": "a", "q2": "b", "q3": "c"},
                                                 "noncommittal": False},
                           "extract_statements": {"answer_statements": ["张伟是教研部的。"],
                                                  "ground_truth_statements": ["张伟是教研部的成员。"]},
                           "classify_statements": fill_schema(True)})
    verdicts = await score_sample(zhang("张伟是教研部的"), ["answer_relevancy", "answer_correctness"], judge=judge,
                                  embedder=CharBigramEmbedder(fail_with="HTTP 503"))
    for verdict in verdicts:
        assert verdict.score is None and verdict.unscored_kind == "provider_error"
        assert "HTTP 503" in verdict.unscored_reason


# --- the seeds' naive testers ----------------------------------------------------------------------------------

@pytest.mark.parametrize("label,score", [("有效回答", 1.0), ("无效回答", 0.0)])
async def test_answer_validity(label, score):
    judge = ScriptedJudge({"answer_validity": {"reason": "…", "verdict": label}})
    verdict = (await score_sample(zhang("张伟是教研部的"), ["answer_validity"], judge=judge))[0]
    assert verdict.score == score and verdict.details["label"] == label
    assert judge.requests[0].json_schema["properties"]["verdict"]["enum"] == ["有效回答", "无效回答"]


@pytest.mark.parametrize("label,score", [("useful contexts", 1.0), ("useless contexts", 0.0)])
async def test_context_usefulness_in_english(label, score):
    sample = Sample(id="en", question="Which department is Zhang Wei in?", answer="Teaching research.",
                    contexts=["Zhang Wei - teaching research - engineer"])
    judge = ScriptedJudge({"context_usefulness": {"reason": "…", "verdict": label}})
    verdict = (await score_sample(sample, ["context_usefulness"], judge=judge))[0]
    assert verdict.score == score
    assert judge.requests[0].messages[1]["content"].startswith("You are a tester.")


# --- edge cases: defined value or unscored with a reason, never NaN -----------------------------------------

async def test_missing_fields_are_unscored_without_calling_the_judge():
    judge = ScriptedJudge({})
    no_contexts = zhang("张伟是教研部的")
    verdicts = await score_sample(no_contexts, ["faithfulness", "context_precision", "context_recall",
                                                "context_utilization", "context_usefulness"], judge=judge)
    assert all(v.unscored_kind == "missing_field" and "contexts" in v.unscored_reason for v in verdicts)
    no_truth = Sample(id="n", question=ZHANG_QUESTION, answer="张伟是教研部的", contexts=["c"])
    verdicts = await score_sample(no_truth, ["answer_correctness", "context_precision", "context_recall"],
                                  judge=judge, embedder=CharBigramEmbedder())
    assert all(v.unscored_kind == "missing_field" and "ground_truth" in v.unscored_reason for v in verdicts)
    assert judge.requests == []


async def test_no_statements_extracted():
    sample = zhang("您好，很高兴为您服务！", contexts=["张伟 教研部工程师"])
    judge = ScriptedJudge({
        "extract_statements": {"answer_statements": [], "ground_truth_statements": []},
        "judge_contexts": fill_schema(True)})
    verdicts = by_name(await score_sample(sample, ["answer_correctness", "faithfulness", "context_recall",
                                                   "context_precision"], judge=judge, embedder=CharBigramEmbedder()))
    for name in ("answer_correctness", "faithfulness", "context_recall"):
        assert verdicts[name].score is None and verdicts[name].unscored_kind == "no_statements", name
    assert verdicts["context_precision"].score == 1.0
    # the contexts call only asked what was left to ask: per-context relevance, no statement sections
    assert set(judge.calls("judge_contexts")[0].json_schema["properties"]) == {"contexts"}
    assert judge.calls("classify_statements") == []


async def test_answer_without_statements_is_all_false_negatives():
    judge = ScriptedJudge({"extract_statements": {"answer_statements": [],
                                                  "ground_truth_statements": ["张伟是教研部的成员。"]}})
    verdict = (await score_sample(zhang("您好！"), ["answer_correctness"], judge=judge,
                                  options={"semantic_weight": 0}))[0]
    assert verdict.score == 0.0 and verdict.details["fn"] == 1 and verdict.details["tp"] == 0


# --- invalid output, re-ask, provider errors -----------------------------------------------------------------

async def test_invalid_output_is_re_asked_once_then_scored():
    judge = ScriptedJudge({"judge_contexts": [
        {"contexts": {"c1": {"reason": "ok", "relevant": True}}},                   # c2 missing
        {"contexts": {"c1": {"reason": "ok", "relevant": True}, "c2": {"reason": "no", "relevant": False}}},
    ]})
    sample = zhang("张伟是教研部的", contexts=["张伟 教研部", "牛顿"])
    verdict = (await score_sample(sample, ["context_precision"], judge=judge))[0]
    assert verdict.score == 1.0 and verdict.usage.calls == 2
    assert verdict.details["shared_calls"][0]["attempts"] == 2
    reask = judge.requests[1].messages
    assert reask[-2]["role"] == "assistant" and "$.contexts.c2: missing" in reask[-1]["content"]


@pytest.mark.parametrize("reask", [True, False])
async def test_output_still_invalid_is_unscored_invalid_output(reask):
    judge = ScriptedJudge({"answer_validity": ["有效回答", {"verdict": "也许"}]})
    verdict = (await score_sample(zhang("张伟是教研部的"), ["answer_validity"], judge=judge,
                                  options={"reask_invalid": reask}))[0]
    assert verdict.score is None and verdict.unscored_kind == "invalid_output"
    assert len(judge.requests) == (2 if reask else 1) == verdict.usage.calls
    assert "schema" in verdict.unscored_reason


async def test_booleans_as_zero_one_are_accepted():
    judge = ScriptedJudge({"judge_contexts": {"contexts": {"c1": {"reason": "x", "relevant": 0},
                                                           "c2": {"reason": "y", "relevant": 1}}}})
    verdict = (await score_sample(zhang("a", contexts=["x", "y"]), ["context_precision"], judge=judge))[0]
    assert verdict.score == 0.5 and len(judge.requests) == 1


async def test_failed_extraction_spares_metrics_that_do_not_need_it():
    sample = zhang("张伟是教研部的", contexts=["牛顿发现了万有引力", "张伟 教研部工程师"])
    judge = ScriptedJudge({"extract_statements": judge_error("HTTP 500 after 4 attempts"),
                           "judge_contexts": fill_schema(True, {"contexts.c1.relevant": False})})
    verdicts = by_name(await score_sample(sample, ["faithfulness", "context_recall", "context_precision"],
                                          judge=judge))
    for name in ("faithfulness", "context_recall"):
        assert verdicts[name].unscored_kind == "provider_error" and "HTTP 500" in verdicts[name].unscored_reason
    assert verdicts["context_precision"].score == 0.5
    assert set(judge.calls("judge_contexts")[0].json_schema["properties"]) == {"contexts"}


# --- usage attribution -----------------------------------------------------------------------------------------

async def test_usage_is_charged_once_to_the_first_consumer_and_adds_up():
    sample = zhang("张伟是教研部的", contexts=["牛顿发现了万有引力", "张伟 教研部工程师"])
    judge = ScriptedJudge({
        "extract_statements": {"answer_statements": ["张伟是教研部的。"], "ground_truth_statements": ["张伟是教研部的成员。"]},
        "reverse_questions": {"questions": {"q1": "张伟是哪个部门的？", "q2": "张伟在哪工作？", "q3": "谁在教研部？"},
                              "noncommittal": False},
        "judge_contexts": fill_schema(True), "classify_statements": fill_schema(True),
    }, cost_per_call=0.001)
    embedder = CharBigramEmbedder()
    names = ["context_recall", *RAGAS_FIVE]
    verdicts = by_name(await score_sample(sample, names, judge=judge, embedder=embedder))
    total_calls = sum(v.usage.calls for v in verdicts.values())
    assert total_calls == len(judge.requests) == 5          # the extraction is two requests (answer, ground truth)
    assert sum(v.usage.prompt_tokens for v in verdicts.values()) == sum(
        estimate_messages_tokens(r.messages) for r in judge.requests)        # what the fake judge reported
    assert sum(v.usage.cost_usd for v in verdicts.values()) == pytest.approx(0.005)
    assert sum(v.usage.embedding_calls for v in verdicts.values()) == len(embedder.calls) == 1
    # context_recall was asked first, so the extraction (both requests) and the contexts call are charged to it
    assert verdicts["context_recall"].usage.calls == 3
    assert verdicts["faithfulness"].usage.calls == 0
    note = next(n for n in verdicts["faithfulness"].details["shared_calls"] if n["call"] == "judge_contexts")
    assert note["charged_to"] == "context_recall"


# --- languages, templates, configuration -----------------------------------------------------------------------

async def test_language_follows_the_sample_or_the_options():
    english = Sample(id="en", question="Where is the Eiffel Tower?", answer="In Paris.", contexts=["Paris."])
    judge = ScriptedJudge({"judge_contexts": fill_schema(True)})
    await score_sample(english, ["context_utilization"], judge=judge)
    await score_sample(english, ["context_utilization"], judge=judge, options={"language": "zh"})
    assert judge.requests[0].messages[1]["content"].startswith("Task:")
    assert judge.requests[1].messages[1]["content"].startswith("任务：")


def _copy_builtin_examples(tmp_path: Path) -> Path:
    (tmp_path / "zh").mkdir()
    target = tmp_path / "zh" / "examples.yaml"
    shutil.copy(BUILTIN_DIR / "zh" / "examples.yaml", target)
    return target


async def test_a_team_can_replace_the_few_shot_examples(tmp_path):
    examples = _copy_builtin_examples(tmp_path)
    examples.write_text(examples.read_text("utf-8").replace("订单退款多久能到账？", "发票多久能开出来？"), "utf-8")
    sample = zhang("张伟是教研部的", contexts=["张伟 教研部"])
    builtin_judge, team_judge = (ScriptedJudge({"judge_contexts": fill_schema(True)}) for _ in range(2))
    builtin = (await score_sample(sample, ["context_precision"], judge=builtin_judge))[0]
    team = (await score_sample(sample, ["context_precision"], judge=team_judge,
                               options={"template_dir": str(tmp_path)}))[0]
    assert "发票多久能开出来？" in team_judge.requests[0].messages[1]["content"]
    assert "发票多久能开出来？" not in builtin_judge.requests[0].messages[1]["content"]
    assert team.scorer_version != builtin.scorer_version      # edited prompts never reuse old versions


async def test_a_team_can_replace_one_template_via_the_environment(tmp_path, monkeypatch):
    (tmp_path / "zh").mkdir()
    (tmp_path / "zh" / "answer_validity.j2").write_text("判断回答：{{ answer }}（问题：{{ question }}）", "utf-8")
    monkeypatch.setenv("RUBRICEVAL_METRIC_TEMPLATES", str(tmp_path))
    judge = ScriptedJudge({"answer_validity": {"reason": "r", "verdict": "有效回答"}})
    await score_sample(zhang("张伟是教研部的"), ["answer_validity"], judge=judge)
    assert judge.requests[0].messages[1]["content"] == f"判断回答：张伟是教研部的（问题：{ZHANG_QUESTION}）"


async def test_broken_examples_are_a_config_error(tmp_path):
    examples = _copy_builtin_examples(tmp_path)
    examples.write_text(examples.read_text("utf-8").replace("verdict: 无效回答", "verdict: 不知道"), "utf-8")
    with pytest.raises(ConfigError, match="answer_validity"):
        await score_sample(zhang("张伟是教研部的"), ["answer_validity"], judge=ScriptedJudge({}),
                           options={"template_dir": str(tmp_path)})
    with pytest.raises(ConfigError, match="not found"):
        await score_sample(zhang("x"), ["answer_validity"], judge=ScriptedJudge({}),
                           options={"template_dir": str(tmp_path / "nope")})


async def test_configuration_errors():
    with pytest.raises(ConfigError, match="unknown metric"):
        await score_sample(zhang("x"), ["answer_corectness"])
    with pytest.raises(ConfigError, match="judge"):
        await score_sample(zhang("x"), ["answer_validity"], judge=None)
    with pytest.raises(ConfigError, match="embedder"):
        await score_sample(zhang("x"), ["answer_relevancy"], judge=ScriptedJudge({}), embedder=None)
    assert needs_judge(["faithfulness"]) and not needs_judge(["bleu", "nonllm_context_recall"])
    assert needs_embedder(["answer_relevancy"]) and not needs_embedder(["faithfulness"])
    assert not needs_embedder(["answer_correctness"], {"semantic_weight": 0})
    assert not needs_judge(["answer_correctness"], {"factual_weight": 0})


async def test_every_verdict_is_a_metric_with_a_version():
    judge = ScriptedJudge({"answer_validity": {"reason": "r", "verdict": "有效回答"}})
    verdicts = await score_sample(zhang("张伟是教研部的"), ["answer_validity", "bleu", "answer_validity"],
                                  judge=judge)
    assert [v.scorer for v in verdicts] == ["answer_validity", "bleu"]      # one verdict per distinct name
    assert all(v.kind == "metric" and v.sample_id == "zhang" for v in verdicts)
    assert "+tpl." in verdicts[0].scorer_version and verdicts[1].scorer_version == "1"
