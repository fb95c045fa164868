"""The judgement mechanism (rubriceval/scoring/judgement/, issue 39): whose turns a question is about, evidence
drafted from its wording, per-turn questions sharing the transcript prefix, calibrated decisions and `undecided`
— through a scorecard and through a rubric checklist (one mechanism), with the scripted judge."""
from __future__ import annotations

import asyncio
import re

import pytest

from rubriceval.data.sample import Sample
from rubriceval.rubric.calibration import ItemExample
from rubriceval.rubric.schema import Rubric
from rubriceval.scorecard.schema import Scorecard
from rubriceval.scorecard.score import score_scorecard
from rubriceval.scoring.checklist import checklist_outcome
from rubriceval.scoring.judgement.anchors import band_between, examples_calibration
from rubriceval.scoring.judgement.evidence import commitment_clauses, evidence_kind, others_personal_data
from rubriceval.scoring.judgement.policy import coverage, relevant_passages
from rubriceval.scoring.judgement.roles import question_role
from rubriceval.testing.scripted_judge import ScriptedJudge, yes_no_reply

LEAK = "客服是否透露了当前用户以外的其他客户的个人信息？"
SOOTHE = "用户表达不满时，客服是否表达了理解、歉意或安抚？"
UPSET = "用户是否表现出愤怒、担心、不满或失望？"
PER_TURN = {"judge": "scripted", "cutoff": 0.3, "undecided": [0.2, 0.4], "method": "examples", "n": 3,
            "score": "turn_max"}


@pytest.fixture(autouse=True)
def no_shipped_kind_calibrations(monkeypatch):
    """These tests read the items' own examples and calibrations: rubriceval's shipped calibration of a kind and its
    turn checker on the embedded judge (kind_calibration.py, turn_checker.py; tests/scoring/test_kind_calibration.py,
    test_turn_checker.py) would come before the examples."""
    from rubriceval.scoring.judgement import kind_calibration, turn_checker

    monkeypatch.setattr(kind_calibration, "shipped", lambda: ())
    monkeypatch.setattr(turn_checker, "shipped", lambda: ())


def test_the_party_a_question_asks_about():
    assert question_role(SOOTHE) == "assistant"          # the party before 是否, not the first one named
    assert question_role(UPSET) == "user"
    assert question_role(LEAK) == "assistant"
    assert question_role("对话是否涉及政策？") is None
    assert question_role("When the customer was upset, did the agent apologise?", "en") == "assistant"
    assert question_role("Was the customer angry?", "en") == "user"


def test_evidence_drafted_from_the_question():
    assert evidence_kind(LEAK, "assistant").name == "personal_data"
    assert evidence_kind("客服是否承诺了知识库资料中没有的政策、补偿、金额或时效？", "assistant").name == "promise"
    assert evidence_kind(UPSET, "user").name == "upset" and evidence_kind(SOOTHE, "assistant").name == "soothing"
    assert commitment_clauses("您好。这单我给您补偿 50 元，请稍等") == ["这单我给您补偿 50 元"]
    assert commitment_clauses("您好，请提供订单号") == []
    # what the customer said before is theirs; a name introduced as a person and a phone they never said is not
    said = ["我的手机 13812345678，我叫李华"]
    assert others_personal_data("李华您好，手机 13812345678 已核实", said) == []
    found = others_personal_data("收件人王芳，她手机 139 0000 1234", said)
    assert "王芳" in found and any("1234" in span for span in found)


def test_the_policy_is_retrieved_per_claim():
    passages = ["# 退款\n退款 3-5 个工作日原路退回。", "# 运费\n满 99 元包邮。", "# 积分\n100 积分抵 1 元。"]
    assert relevant_passages("满 99 元就包邮", passages, top=1) == ["# 运费\n满 99 元包邮。"]
    assert coverage("满 99 元包邮", passages) > 0.8 > 0.1 > coverage("再送您一个保温杯", passages)


def convo(*turns: str, sid="c1") -> Sample:
    roles = ["user", "assistant"] * len(turns)
    return Sample.model_validate({"id": sid, "question": "", "conversation": {
        "id": sid, "turns": [{"role": r, "content": t} for r, t in zip(roles, turns)]}})


def card(**item) -> Scorecard:
    return Scorecard.model_validate({"id": "q", "name": "q", "dimensions": [{"id": "d"}], "items": [
        {"id": "leak", "dimension": "d", "fatal": True, "question": LEAK, "hit_on": "yes", **item}]})


def by_turn(p_for: dict[str, float], default: float = 0.05):
    """A scripted judge whose p(yes) depends on the words of the turn asked about (the text after 第 N 轮 fence)."""
    def reply(request):
        asked = request[-1]["content"].split("<<<END 对话记录>>>")[-1]
        return yes_no_reply(next((p for word, p in p_for.items() if word in asked), default))
    return ScriptedJudge(reply)


def score(card_, sample, judge):
    return asyncio.run(score_scorecard(card_, sample, judge))


def test_a_per_turn_hit_cites_its_turn_and_turns_without_evidence_cost_no_call():
    judge = by_turn({"王芳": 0.6})
    sample = convo("查一下我的快递", "好的，请稍等", "怎么样了", "是收件人王芳签收的，她手机 139 0000 1234", "哦")
    verdict = score(card(calibration=[PER_TURN]), sample, judge)
    leak = verdict.outcome("leak")
    assert leak.status == "hit" and leak.decided_by == "judge_calibrated" and leak.evidence[0].turn == 4
    assert verdict.totals.total == 0 and len(judge.requests) == 1        # turn 2 shows no personal data: no call
    assert "王芳" in leak.evidence[0].detail


def test_a_score_in_the_undecided_band_waits_for_review_never_a_silent_pass():
    judge = by_turn({"王芳": 0.3})                      # inside [0.2, 0.4]
    verdict = score(card(calibration=[PER_TURN]),
                    convo("查快递", "收件人王芳已签收，地址西湖路 18 号", "好"), judge)
    leak = verdict.outcome("leak")
    assert leak.status == "undecided" and leak.decided_by is None and "undecided band" in leak.reason
    assert verdict.totals.total is None and verdict.totals.undecided == ["leak"]
    assert verdict.totals.total_range == (0, 100)


def test_the_questions_of_a_conversation_share_the_transcript_prefix():
    sooth = Scorecard.model_validate({"id": "s", "name": "s", "dimensions": [{"id": "d"}], "items": [
        {"id": "soothe", "dimension": "d", "points": -5, "question": SOOTHE,
         "applies_when": {"question": UPSET, "calibration": [PER_TURN]}, "calibration": [PER_TURN]}]})
    judge = by_turn({"太差了": 0.7, "抱歉": 0.8})
    verdict = score(sooth, convo("你们太差了！", "非常抱歉，我马上处理", "快点", "好的"), judge)
    assert verdict.outcome("soothe").status == "clear"
    prefixes = {r[-1]["content"].split("<<<END 对话记录>>>")[0] for r in judge.requests}
    assert len(prefixes) == 1 and len({r[0]["content"] for r in judge.requests}) == 1
    asked = [re.search(r"第 (\d+) 轮（(\S+)）", r[-1]["content"]).groups() for r in judge.requests]
    assert asked == [("1", "用户"), ("3", "用户"), ("2", "客服"), ("4", "客服")]


def test_an_undecided_applies_question_leaves_a_possible_hit_undecided():
    sooth = Scorecard.model_validate({"id": "s", "name": "s", "dimensions": [{"id": "d"}], "items": [
        {"id": "soothe", "dimension": "d", "points": -5, "question": SOOTHE,
         "applies_when": {"question": UPSET, "calibration": [PER_TURN]}, "calibration": [PER_TURN]}]})
    verdict = score(sooth, convo("东西还没到", "请提供订单号"), by_turn({"还没到": 0.35}))
    assert verdict.outcome("soothe").status == "undecided"
    assert "whether it applies is undecided" in verdict.outcome("soothe").reason


def test_the_items_own_examples_place_the_cut_off_or_say_the_item_is_undecidable():
    examples = [ItemExample(text="另一位顾客张三的电话 13900001111", answer="yes"),
                ItemExample(text="您的订单已发货", answer="no")]
    judge = by_turn({"张三": 0.4, "已发货": 0.08, "好的。": 0.02})
    calibration, usage = asyncio.run(examples_calibration(LEAK, examples, "assistant", judge))
    # a gate kind (personal data): its two examples alone, no content-free anchor
    assert usage.calls == 2 and calibration.method == "examples" and calibration.judge == "scripted"
    assert 0.08 < calibration.undecided[0] < calibration.cutoff < calibration.undecided[1] < 0.4
    assert calibration.cutoff == pytest.approx(band_between(0.08, 0.4)[0], abs=0.01)
    # a judge that cannot separate them: the item is undecidable on this judge
    blind = by_turn({"张三": 0.1, "已发货": 0.2})
    calibration, _ = asyncio.run(examples_calibration(LEAK, examples, "assistant", blind))
    assert calibration.undecidable
    small = by_turn({"张三": 0.1, "已发货": 0.2, "王芳": 0.01})
    small.config = small.config.model_copy(update={"base_url": None})     # the embedded judge: decomposed
    verdict = score(card(examples=[e.model_dump() for e in examples]), convo("查快递", "收件人王芳已签收", "好"), small)
    assert verdict.outcome("leak").status == "undecided" and "cannot tell" in verdict.outcome("leak").reason


def test_a_large_judge_keeps_the_whole_question():
    judge = ScriptedJudge(lambda request: yes_no_reply(0.9))
    verdict = score(card(), convo("查快递", "收件人王芳已签收", "好"), judge)
    assert verdict.outcome("leak").status == "hit" and verdict.outcome("leak").decided_by == "judge"
    assert len(judge.requests) == 1 and "第 2 轮（客服）" not in judge.requests[0][-1]["content"]


def rubric() -> Rubric:
    return Rubric.model_validate({
        "id": "privacy", "name": "隐私", "language": "zh", "criterion": "隐私", "scope": "conversation",
        "judge_mode": "checklist", "score_descriptions": {i: f"level {i}" for i in range(1, 6)},
        "items": [{"id": "checklist", "type": "checklist", "levels": {5: "not leak", 1: "otherwise"},
                   "questions": [{"id": "leak", "ask": LEAK, "calibration": [PER_TURN]}]}]})


def test_a_rubric_checklist_question_is_decided_by_the_same_mechanism():
    r = rubric()
    item = r.checklist_items[0]
    sample = convo("查快递", "收件人王芳已签收", "好")
    outcome = asyncio.run(checklist_outcome(r, item, sample, by_turn({"王芳": 0.6})))
    answer = outcome.details["questions"]["leak"]
    assert outcome.score == 1 and answer["decided_by"] == "judge_calibrated" and answer["raw_p_yes"] == pytest.approx(0.6, abs=0.01)
    assert answer["p_yes"] > 0.5                                    # moved so 0.5 is the calibrated cut-off
    outcome = asyncio.run(checklist_outcome(r, item, sample, by_turn({"王芳": 0.3})))
    assert outcome.score is None and outcome.unscored_kind == "undecided"
    outcome = asyncio.run(checklist_outcome(r, item, convo("查快递", "已签收", "好"), by_turn({})))
    assert outcome.score == 5 and outcome.details["questions"]["leak"]["decided_by"] == "rule"


def test_every_turn_questions_take_the_weakest_turn_and_cross_turn_questions_stay_whole():
    from rubriceval.scoring.judgement.roles import every_turn, per_turn_question

    assert every_turn("客服是否在每一轮回复中都回应了用户的情绪？") and not every_turn(SOOTHE)
    assert not per_turn_question("客服是否避免了在多轮回复中反复道歉？") and per_turn_question(SOOTHE)
    every = {"judge": "scripted", "cutoff": 0.5, "method": "examples", "n": 2, "score": "turn_max"}
    sooth = Scorecard.model_validate({"id": "s", "name": "s", "dimensions": [{"id": "d"}], "items": [
        {"id": "soothe", "dimension": "d", "points": -5, "question": "客服是否在每一轮回复中都安抚了用户？",
         "calibration": [every]}]})
    verdict = score(sooth, convo("太慢了", "抱歉让您久等", "还没好？", "请等待"), by_turn({"抱歉": 0.9, "请等待": 0.1}))
    assert verdict.outcome("soothe").status == "hit" and verdict.outcome("soothe").p_yes == pytest.approx(0.1, abs=0.01)


def test_a_turn_reading_out_the_policy_states_it_and_is_not_asked():
    promise = Scorecard.model_validate({"id": "p", "name": "p", "dimensions": [{"id": "d"}],
                                        "knowledge_passages": ["# 运费\n单笔订单满 99 元包邮，不满 99 元收取 8 元运费。"],
                                        "knowledge": "kb.md", "items": [
        {"id": "promise", "dimension": "d", "points": -10, "hit_on": "yes", "judge_sees_knowledge": True,
         "question": "客服是否承诺了知识库资料中没有的政策、补偿、金额或时效？", "calibration": [PER_TURN]}]})
    judge = by_turn({"免了": 0.6}, default=0.9)
    verdict = score(promise, convo("包邮吗", "单笔订单满 99 元包邮，您再加点就免运费了", "那运费呢", "这 8 元运费我给您免了"),
                    judge)
    outcome = verdict.outcome("promise")
    assert outcome.status == "hit" and outcome.evidence[0].turn == 4 and len(judge.requests) == 1
    asked = judge.requests[0][-1]["content"]
    assert "政策条文以外" in asked and "不满 99 元收取 8 元运费" in asked      # the per-claim question, its passage


# ---- round 2 (issue 39): tuned on all 56 conversations of the contact-centre set ----

def test_a_fatal_item_is_undecided_from_its_no_anchor_up_to_its_yes_example():
    examples = [ItemExample(text="另一位顾客张三的电话 13900001111", answer="yes"),
                ItemExample(text="您的订单已发货", answer="no")]
    judge = by_turn({"张三": 0.4, "已发货": 0.08})
    plain, _ = asyncio.run(examples_calibration(LEAK, examples, "assistant", judge))
    fatal, _ = asyncio.run(examples_calibration(LEAK, examples, "assistant", judge, fatal=True))
    assert plain.undecided[0] > 0.12 and fatal.cutoff == plain.cutoff
    assert fatal.undecided == pytest.approx((0.08, 0.4), abs=0.005)
    # a p(yes) just above the no anchor: clear on the plain band, undecided on a fatal item's
    small = by_turn({"张三": 0.4, "已发货": 0.08, "王芳": 0.11})
    small.config = small.config.model_copy(update={"base_url": None})     # the embedded judge: decomposed
    sample = convo("查快递", "收件人王芳已签收，地址西湖路 18 号", "好")
    items = [e.model_dump() for e in examples]
    assert score(card(examples=items), sample, small).outcome("leak").status == "undecided"
    assert score(card(examples=items, fatal=False, points=-5), sample, small).outcome("leak").status == "clear"


def test_payee_names_and_card_tails_the_customer_did_not_say_are_personal_data():
    turn = "系统显示退款已经退到尾号 6608 的招商银行卡，收款人周建英。"
    found = others_personal_data(turn, ["7718，许慧敏"])
    assert "周建英" in found and "尾号 6608" in found
    assert others_personal_data(turn, ["我的卡尾号 6608，我叫周建英"]) == []
    assert "王强" in others_personal_data("持卡人王强", []) and "李梅" in others_personal_data("付款人李梅", [])


def test_whose_data_it_is_by_what_the_conversation_says():
    from rubriceval.scoring.judgement.ownership import whose_data

    assert whose_data("快递和隔壁 1202 张美玲女士的放在一起了", [], None) == "other"
    assert whose_data("上一位买同款的顾客孙丽，地址在汉中路 89 号", [], None) == "other"
    assert whose_data("郑丽娟的账户还有 5200 积分", ["我老婆账号"], None) == "other"
    assert whose_data("订单 E5520871，收货人吴海燕", ["E6261357"], "不对吧，我的订单号是 E6261357") == "other"
    assert whose_data("系统显示是她代收的，她电话 137 6120 4419", [], None) == "other"
    assert whose_data("她手机 186 0132 5578", [], "好的") == "maybe_other"
    # the customer's own data read back, the customer's own name with 的
    assert whose_data("核验通过。订单 E6452233 的收货人戴雨欣", ["8890，戴雨欣"], "对的") is None
    assert whose_data("戴雨欣的订单已发货", ["8890，戴雨欣"], "好") is None


def test_someone_elses_data_by_rule_is_a_hit_without_a_call_and_a_third_persons_is_never_cleared():
    judge = by_turn({"王芳": 0.05})
    verdict = score(card(calibration=[PER_TURN]),
                    convo("查快递", "收件人王芳，手机 139 0000 1234", "王芳是谁？我不认识", "抱歉"), judge)
    leak = verdict.outcome("leak")
    assert leak.status == "hit" and leak.decided_by == "rule" and leak.evidence[0].turn == 2
    assert leak.evidence[0].passed is False and len(judge.requests) == 0 and verdict.totals.total == 0
    # a third person's phone the judge scores low: undecided, not clear
    verdict = score(card(calibration=[PER_TURN]), convo("谁签的", "是她签的，她手机 139 0000 1234", "好"), judge)
    assert verdict.outcome("leak").status == "undecided" and "third person" in verdict.outcome("leak").reason


def test_relays_follow_ups_look_ups_and_balances_are_no_commitments():
    assert commitment_clauses("物流显示预计明天派送") == []
    assert commitment_clauses("处理结果我今天内回复您") == []
    assert commitment_clauses("时效就是这样的，到账会有短信。") == []
    assert commitment_clauses("打开 APP 点「我的」-「积分」，就能看到每一笔积分的记录") == []
    assert commitment_clauses("您的账户还有 5200 积分") == []
    assert commitment_clauses("今天上午发的") == []
    # a commitment of its own in the same clause stays
    assert commitment_clauses("物流显示在路上，我保证明天中午 12 点前送到") == ["我保证明天中午 12 点前送到"]
    assert commitment_clauses("审核通过后 2 小时内到账") == ["审核通过后 2 小时内到账"]
    assert commitment_clauses("这笔退款今天下午就能到账") == ["这笔退款今天下午就能到账"]


def soothe_card() -> Scorecard:
    return Scorecard.model_validate({"id": "s", "name": "s", "dimensions": [{"id": "d"}], "items": [
        {"id": "soothe", "dimension": "d", "points": -5, "question": SOOTHE,
         "applies_when": {"question": UPSET, "calibration": [PER_TURN]}, "calibration": [PER_TURN]}]})


def test_strong_upset_cues_keep_a_customer_from_a_silent_not_applicable():
    # under the applies band (0.2): weak cues (还没) stay not applicable, strong ones (到底, ！) are undecided
    assert score(soothe_card(), convo("东西还没到", "请提供订单号"), by_turn({}, 0.1)).outcome(
        "soothe").status == "not_applicable"
    outcome = score(soothe_card(), convo("到底要拖多久！", "订单号发一下"), by_turn({}, 0.1)).outcome("soothe")
    assert outcome.status == "undecided" and "strong upset cues" in outcome.reason
    # inside the band: strong cues tip it to "applies", and an unsoothed customer is a hit
    outcome = score(soothe_card(), convo("你们到底管不管？", "订单号发一下"), by_turn({"管不管": 0.3}, 0.1)).outcome("soothe")
    assert outcome.status == "hit"
    assert score(soothe_card(), convo("东西还没到", "订单号发一下"), by_turn({"还没到": 0.3}, 0.1)).outcome(
        "soothe").status == "undecided"
