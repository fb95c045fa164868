"""Checklist scoring with a scripted judge: p(yes) from logprobs (and the label fallback), each judge mode, the
prefix-sharing prompt layout, the call options and their cache key, the --judge-mode override."""
import math

import pytest
import yaml

from rubriceval import JudgeConfig, Rubric, Sample, compile_rubric, load_rubric
from rubriceval.judge.cache import judge_call_key
from rubriceval.judge.client import JudgeResponse
from rubriceval.judge.options import CallOptions, TokenLogprob, cached_prompt_tokens, read_logprobs
from rubriceval.scoring.checklist import p_yes_from_logprobs, read_yes_no
from rubriceval.scoring.judge_mode import with_judge_mode
from rubriceval.scoring.rubric_scorer import score_rubric
from rubriceval.testing.scripted_judge import ScriptedJudge, yes_no_reply

RUBRIC = yaml.safe_load("""
id: t
name: 情绪安抚
criterion: 先安抚，再给出物流状态和预计送达时间。
score_descriptions: {1: 没有安抚, 2: 只有安抚, 3: 安抚加一项信息, 4: 安抚加两项信息, 5: 安抚加全部信息}
judge_sees: [question, answer, contexts]
judge_mode: checklist
items:
  - {id: judge, type: judge}
  - id: checklist
    type: checklist
    questions:
      - {id: soothe, ask: 回答是否先安抚了用户情绪？}
      - {id: status, ask: 回答是否给出了物流状态？}
      - {id: eta, ask: 回答是否给出了预计送达时间？}
    levels:
      5: all
      4: soothe and status
      3: soothe and (status or eta)
      2: any
  - {id: apology, type: must_mention, phrases: [抱歉], must: true}
combine: {rule: judge_capped, cap_score: 2}
""")
SAMPLE = Sample(id="s1", question="订单延迟了", answer="抱歉让您久等，包裹在杭州转运中心。", contexts=["杭州转运中心，预计周五送达"])


def rubric(**update) -> Rubric:
    return Rubric.model_validate({**RUBRIC, **update})


def scripted(*p_yes):
    replies = iter(p_yes)
    return ScriptedJudge(lambda request: yes_no_reply(next(replies)))


def test_p_yes_is_normalised_over_yes_and_no_spellings():
    tokens = [TokenLogprob(token="yes", logprob=math.log(0.5),
                           top={"yes": math.log(0.5), " Yes": math.log(0.1), "no": math.log(0.2), "是": math.log(0.1),
                                "maybe": math.log(0.1)})]
    assert p_yes_from_logprobs(tokens) == pytest.approx(0.7 / 0.9)
    assert p_yes_from_logprobs([TokenLogprob(token="{", logprob=0.0), *tokens]) == pytest.approx(0.7 / 0.9)
    assert p_yes_from_logprobs(None) is None
    assert p_yes_from_logprobs([TokenLogprob(token="{", logprob=0.0, top={"[": -1.0})]) is None


def test_reader_falls_back_to_the_label_without_logprobs():
    reading = read_yes_no(JudgeResponse(text="no"))
    assert reading.ok and reading.value.p_yes == 0.0 and reading.value.source == "label"
    json_reply = read_yes_no(JudgeResponse(text='{"answer": "yes"}', data={"answer": "yes"}))
    assert json_reply.value.p_yes == 1.0
    bad = read_yes_no(JudgeResponse(text="maybe"))
    assert not bad.ok and bad.kind == "parse_error"


async def test_checklist_mode_scores_by_the_level_rule_and_keeps_p_yes():
    judge = scripted(0.9, 0.8, 0.3)
    verdict = await score_rubric(rubric(), SAMPLE, judge)
    assert verdict.score == 4                                            # soothe and status, no eta
    questions = verdict.details["checklist"]["checklist"]["questions"]
    assert questions["eta"]["label"] is False and questions["eta"]["p_yes"] == pytest.approx(0.3, abs=0.01)
    assert questions["soothe"]["source"] == "logprobs"
    assert len(judge.requests) == 3 and verdict.usage.calls == 3         # the holistic judge item is not asked
    assert "p(yes)=0.90" in verdict.feedback and "level 4" in verdict.feedback


async def test_a_failed_must_check_still_caps_a_checklist_score():
    no_apology = SAMPLE.model_copy(update={"answer": "包裹在杭州转运中心，预计周五送达。"})
    verdict = await score_rubric(rubric(), no_apology, scripted(0.9, 0.9, 0.9))
    assert verdict.score == 2 and "capped" in verdict.details["combine"]


async def test_points_table_uses_the_soft_share():
    points = {**RUBRIC["items"][1], "levels": None, "points": {5: 0.9, 4: 0.7, 3: 0.5, 2: 0.2}}
    r = rubric(items=[RUBRIC["items"][0], points])
    assert (await score_rubric(r, SAMPLE, scripted(0.9, 0.8, 0.45))).score == 4      # mean p(yes) 0.72 ≥ 0.7
    assert (await score_rubric(r, SAMPLE, scripted(0.9, 0.8, 0.2))).score == 3       # 0.63
    assert (await score_rubric(r, SAMPLE, scripted(0.95, 0.95, 0.95))).score == 5


async def test_fallback_without_logprobs_scores_from_labels():
    judge = ScriptedJudge(["yes", "no", "yes"])
    verdict = await score_rubric(rubric(), SAMPLE, judge)
    assert verdict.score == 3
    assert {q["source"] for q in verdict.details["checklist"]["checklist"]["questions"].values()} == {"label"}


async def test_unreadable_answer_is_reasked_once_then_unscored():
    judge = ScriptedJudge(["yes", "perhaps", "still unsure", "yes"])
    verdict = await score_rubric(rubric(), SAMPLE, judge)
    assert verdict.score is None and verdict.unscored_kind == "parse_error"
    assert "status" in verdict.unscored_reason and len(judge.requests) == 4


async def test_holistic_mode_ignores_the_checklist():
    judge = ScriptedJudge(['{"feedback": "好", "score": 5}'])
    verdict = await score_rubric(rubric(judge_mode="holistic"), SAMPLE, judge)
    assert verdict.score == 5 and len(judge.requests) == 1 and "checklist" not in verdict.details


async def test_fitted_mode_uses_the_fitted_weights():
    fitted = {"weights": {"soothe": 0.0, "status": 0.0, "eta": 4.0}, "cutpoints": [0.5, 1.5, 2.5, 3.5],
              "n_train": 20}
    item = {**RUBRIC["items"][1], "fitted": fitted}
    r = rubric(judge_mode="checklist_fitted", items=[RUBRIC["items"][0], item, RUBRIC["items"][2]])
    verdict = await score_rubric(r, SAMPLE, scripted(0.9, 0.9, 0.5))       # z = 2.0 → 1 + 2 cutpoints below
    assert verdict.score == 3 and "fitted" in verdict.details["checklist"]["checklist"]["how"]


def test_questions_of_one_sample_share_the_whole_prompt_but_the_question():
    prompts = compile_rubric(rubric(), SAMPLE)
    assert len(prompts) == 3
    systems = {p.messages[0]["content"] for p in prompts}
    users = [p.messages[1]["content"] for p in prompts]
    assert len(systems) == 1 and [len(p.messages) for p in prompts] == [2, 2, 2]
    head = users[0][:users[0].index("回答是否先安抚")]
    assert head.endswith("# 问题\n") and SAMPLE.answer in head
    assert all(u.startswith(head) for u in users)                       # identical prefix, question last
    assert all(u[len(head):].startswith("回答是否") for u in users)
    other = compile_rubric(rubric(), SAMPLE.model_copy(update={"id": "s2", "answer": "请耐心等待。"}))
    assert other[0].messages[0] == prompts[0].messages[0]               # the system prompt is shared across samples


def test_call_options_are_sent_and_part_of_the_cache_key():
    prompt = compile_rubric(rubric(), SAMPLE)[0]
    assert prompt.options.logprobs and prompt.options.choices == ["yes", "no"] and prompt.options.max_tokens <= 8
    config = JudgeConfig(base_url="http://127.0.0.1:9/v1")
    with_options = judge_call_key(config, prompt.messages, prompt.json_schema, prompt.cache_tag, prompt.options)
    without = judge_call_key(config, prompt.messages, prompt.json_schema, prompt.cache_tag)
    other = judge_call_key(config, prompt.messages, prompt.json_schema, prompt.cache_tag, CallOptions(max_tokens=1))
    grammar = judge_call_key(config.model_copy(update={"choice_constraint": "grammar"}), prompt.messages,
                             prompt.json_schema, prompt.cache_tag, prompt.options)
    assert len({with_options, without, other, grammar}) == 4


async def test_scripted_judge_receives_the_options():
    judge = scripted(0.9, 0.9, 0.9)
    await score_rubric(rubric(), SAMPLE, judge)
    assert all(r.options is not None and r.options.top_logprobs for r in judge.requests)


def test_reading_openai_shaped_logprobs_and_prompt_cache_counts():
    choice = {"logprobs": {"content": [{"token": "yes", "logprob": -0.2,
                                        "top_logprobs": [{"token": "yes", "logprob": -0.2},
                                                         {"token": "no", "logprob": -1.8}]}]}}
    tokens = read_logprobs(choice)
    assert tokens[0].top == {"yes": -0.2, "no": -1.8}
    assert read_logprobs({"logprobs": None}) is None
    assert cached_prompt_tokens({"usage": {"prompt_tokens": 120, "prompt_tokens_details": {"cached_tokens": 100}}}) == 100
    assert cached_prompt_tokens({"usage": {"prompt_tokens": 120}, "timings": {"prompt_n": 15}}) == 105
    assert cached_prompt_tokens({"usage": {"prompt_tokens": 120}}) == 0


def test_judge_mode_override_falls_back_and_says_so():
    fitted = load_rubric("rubrics/emotional_soothing.yaml")          # ships fitted weights
    shipped = load_rubric("rubrics/policy_compliance.yaml")          # a checklist, no fitted weights
    links = load_rubric("rubrics/required_link.yaml")
    english = load_rubric("rubrics/helpfulness_en.yaml")
    changed, notes = with_judge_mode([fitted, shipped, links, english], "checklist_fitted", judge_models=["local"])
    assert changed[0].judge_mode == "checklist_fitted"
    assert changed[1].judge_mode == "checklist"                      # falls back to its level rule
    assert changed[2] is links and changed[3].judge_mode == "holistic"
    assert len(notes) == 2 and "policy_compliance" in notes[0] and "helpfulness_en" in notes[1]
    assert changed[1].version_tag != shipped.version_tag
    # no mode asked: the mode its measured: block found best on this judge, said in a note (issue 43)
    best, said = with_judge_mode([shipped], None, judge_models=["local"])
    assert best[0].judge_mode == "checklist" and len(said) == 1 and "measured best" in said[0]


def test_every_rubrics_questions_about_one_sample_share_the_sample_prefix():
    sample = Sample(id="d", question="订单延迟三天了", tags=["订单延迟"], answer="抱歉，包裹在杭州转运中心。",
                    contexts=["杭州转运中心"])
    (soothing, policy), _ = with_judge_mode([load_rubric("rubrics/emotional_soothing.yaml"),
                                             load_rubric("rubrics/policy_compliance.yaml")], "checklist",
                                            judge_models=["local"])
    prompts = compile_rubric(soothing, sample) + compile_rubric(policy, sample)
    users = [p.messages[1]["content"] for p in prompts]
    head = users[0][:users[0].index("# 问题")]
    assert sample.answer in head and all(u.startswith(head) for u in users)
    assert soothing.criterion.strip()[:20] not in users[0]         # no rubric text before (or in) the question
