"""The conformance cases of the agent metrics, and the scripted judgments both sides get for the judged ones.

Tool-call cases are scored by formula alone. Goal and topic cases carry `judgment`: what a judge decided about
the conversation (goal, end state, verdicts; topics with refused / in-reference). `ragas_answer` writes it as
Ragas's prompts expect it (one topic per refusal prompt, "0"/"1" verdicts …), `our_answers` as our calls'
schemas do, so both sides compute their formulas from the same decisions.

`differences` declares, per metric, where our value deliberately differs from Ragas's (see
standard_metrics/README.md); the key `tool_call_accuracy_any_order` is tool_call_accuracy with strict_order off.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

TOPIC_MODES = ("precision", "recall", "f1")


@dataclass(frozen=True)
class Case:
    id: str
    note: str
    turns: list[dict]
    reference_tool_calls: list[dict] = field(default_factory=list)
    reference_outcome: str = ""
    reference_topics: list[str] = field(default_factory=list)
    judgment: dict = field(default_factory=dict)
    differences: dict[str, str] = field(default_factory=dict)

    @property
    def judged(self) -> bool:
        return bool(self.judgment)

    @property
    def markers(self) -> list[str]:
        """Texts that identify this case inside a prompt: its first user message, its end state, its topics."""
        first = next(t["content"] for t in self.turns if t["role"] == "user")
        topics = [t["topic"] for t in self.judgment.get("topics", [])]
        return [first, *([self.judgment["end_state"]] if "end_state" in self.judgment else []), *topics]

    def matches(self, text: str) -> bool:
        return any(marker in text for marker in self.markers)

    def record(self) -> dict[str, Any]:
        """The conversation in our JSONL shape."""
        return {"id": self.id, "turns": self.turns, "reference_tool_calls": self.reference_tool_calls,
                "reference_outcome": self.reference_outcome, "reference_topics": self.reference_topics}


def user(text: str) -> dict:
    return {"role": "user", "content": text}


def bot(text: str, *calls: tuple[str, dict]) -> dict:
    return {"role": "assistant", "content": text, "tool_calls": [{"name": n, "arguments": a} for n, a in calls]}


def tool(text: str) -> dict:
    return {"role": "tool", "content": text}


def call(name: str, **arguments: Any) -> dict:
    return {"name": name, "arguments": arguments}


_ORDER = ("query_order", {"order_id": "A1001"})
_LOGISTICS = ("query_logistics", {"tracking_no": "SF123"})
_REFUND = ("create_refund", {"order_id": "A1001", "amount": 59.9, "reason": "质量问题"})

TOOL_CASES: list[Case] = [
    Case("tc_single_exact", "one call, same name and arguments",
         [user("查一下订单 A1001"), bot("", _ORDER), tool("已发货"), bot("您的订单已发货。")],
         [call("query_order", order_id="A1001")]),
    Case("tc_two_in_order", "two calls in the reference's order",
         [user("A1001 到哪了"), bot("", _ORDER), tool("SF123"), bot("", _LOGISTICS), tool("派送中"),
          bot("正在派送。")],
         [call("query_order", order_id="A1001"), call("query_logistics", tracking_no="SF123")]),
    Case("tc_two_swapped", "the same two calls in the opposite order",
         [user("SF123 和 A1001 的情况"), bot("", _LOGISTICS, _ORDER), tool("派送中"), tool("已发货"),
          bot("都在路上。")],
         [call("query_order", order_id="A1001"), call("query_logistics", tracking_no="SF123")]),
    Case("tc_wrong_value", "right tool, one of three argument values wrong",
         [user("退 59.9 元"), bot("", ("create_refund", {"order_id": "A1001", "amount": 59.9, "reason": "不想要了"})),
          tool("已受理"), bot("退款已受理。")],
         [call("create_refund", order_id="A1001", amount=59.9, reason="质量问题")]),
    Case("tc_missing_argument", "an argument of the reference is not passed",
         [user("申请退款"), bot("", ("create_refund", {"order_id": "A1001", "amount": 59.9})), tool("已受理"),
          bot("已为您申请。")],
         [call("create_refund", order_id="A1001", amount=59.9, reason="质量问题")]),
    Case("tc_extra_argument", "an extra argument the reference does not list",
         [user("查订单A1001"), bot("", ("query_order", {"order_id": "A1001", "verbose": True})), tool("已发货"),
          bot("已发货。")],
         [call("query_order", order_id="A1001")]),
    Case("tc_string_vs_int", "argument 123 (int) vs \"123\" (str): equal as text, different as values",
         [user("查订单 123"), bot("", ("query_order", {"order_id": 123})), tool("已发货"), bot("已发货。")],
         [call("query_order", order_id="123")]),
    Case("tc_float_vs_int", "amount 60.0 vs 60: different as text, equal as values",
         [user("退 60 元"), bot("", ("create_refund", {"order_id": "A1001", "amount": 60.0})), tool("已受理"),
          bot("已受理。")],
         [call("create_refund", order_id="A1001", amount=60)]),
    Case("tc_extra_call", "one call more than the reference",
         [user("A1001 的物流"), bot("", _ORDER, _LOGISTICS), tool("SF123"), tool("派送中"), bot("派送中。")],
         [call("query_order", order_id="A1001")]),
    Case("tc_fewer_calls", "one call fewer than the reference",
         [user("帮我查 A1001 的物流"), bot("", _ORDER), tool("SF123"), bot("已发货，单号 SF123。")],
         [call("query_order", order_id="A1001"), call("query_logistics", tracking_no="SF123")]),
    Case("tc_no_call", "the assistant calls no tool",
         [user("订单 A1001 怎么样了"), bot("请稍等，我帮您看看。")],
         [call("query_order", order_id="A1001")]),
    Case("tc_wrong_tool", "a different tool with the same arguments",
         [user("A1001 能退吗"), bot("", ("query_refund_policy", {"order_id": "A1001"})), tool("可退"),
          bot("可以退。")],
         [call("query_order", order_id="A1001")]),
    Case("tc_nested_equal", "nested object argument, same key order",
         [user("改地址"), bot("", ("update_address", {"order_id": "A1001",
                                                    "address": {"city": "杭州", "street": "文一路 1 号"}})),
          tool("已修改"), bot("地址已修改。")],
         [call("update_address", order_id="A1001", address={"city": "杭州", "street": "文一路 1 号"})]),
    Case("tc_nested_reordered", "nested object argument, keys in another order",
         [user("把地址改一下"), bot("", ("update_address", {"order_id": "A1001",
                                                       "address": {"street": "文一路 1 号", "city": "杭州"}})),
          tool("已修改"), bot("已为您修改。")],
         [call("update_address", order_id="A1001", address={"city": "杭州", "street": "文一路 1 号"})],
         differences={"tool_call_accuracy": "nested arguments compared as sorted-key JSON, not Python reprs "
                                            "(Ragas: str({'street':…,'city':…}) ≠ str({'city':…,'street':…}) → 0.5)",
                      "tool_call_accuracy_any_order": "as tool_call_accuracy"}),
    Case("tc_duplicate_call", "the same call made twice (a set counts it once)",
         [user("查 A1001"), bot("", _ORDER), tool("已发货"), bot("", _ORDER), tool("已发货"), bot("已发货。")],
         [call("query_order", order_id="A1001")]),
    Case("tc_across_turns", "calls spread over two assistant turns, in order",
         [user("我的订单 A1001"), bot("", _ORDER), tool("已发货 SF123"), bot("已发货，要查物流吗？"),
          user("要"), bot("", _LOGISTICS), tool("派送中"), bot("正在派送。")],
         [call("query_order", order_id="A1001"), call("query_logistics", tracking_no="SF123")]),
    Case("tc_case_differs", "argument differs only in letter case",
         [user("Weather in beijing?"), bot("", ("get_weather", {"city": "beijing"})), tool("Sunny"),
          bot("Sunny.")],
         [call("get_weather", city="Beijing")]),
    Case("tc_no_arguments", "a call without arguments on both sides",
         [user("What time is it?"), bot("", ("get_time", {})), tool("10:00"), bot("It is 10:00.")],
         [call("get_time")]),
    Case("tc_three_partial", "three calls, names in order, arguments 1, 1/2 and 0 right",
         [user("Book a flight and a hotel"),
          bot("", ("search_flights", {"from": "PEK", "to": "SHA"}),
              ("book_flight", {"flight": "MU5101", "seat": "12C"}),
              ("book_hotel", {"city": "Hangzhou"})),
          tool("ok"), tool("ok"), tool("ok"), bot("Done.")],
         [call("search_flights", **{"from": "PEK", "to": "SHA"}), call("book_flight", flight="MU5101", seat="12A"),
          call("book_hotel", city="Shanghai")]),
    Case("tc_no_reference_no_call", "no reference calls and none made",
         [user("你好"), bot("您好，请问有什么可以帮您？")], [],
         differences={m: "no reference_tool_calls → unscored missing_field: an empty list cannot be told apart from "
                         "a dataset without the column (Ragas: accuracy 1.0, F1 0.0)"
                      for m in ("tool_call_accuracy", "tool_call_accuracy_any_order", "tool_call_f1")}),
    Case("tc_no_reference_with_call", "no reference calls, one made",
         [user("在吗"), bot("", _ORDER), tool("已发货"), bot("在的。")], [],
         differences={m: "no reference_tool_calls → unscored missing_field (Ragas: 0.0)"
                      for m in ("tool_call_accuracy", "tool_call_accuracy_any_order", "tool_call_f1")}),
]


GOAL_CASES: list[Case] = [
    Case("goal_zh_refund_done", "refund issued as the reference expects",
         [user("我买的杯子碎了，订单 A2001，想退款"), bot("", ("create_refund", {"order_id": "A2001"})),
          tool("退款已提交，3 个工作日到账"), bot("已为您提交退款，3 个工作日内原路退回。"), user("好的谢谢")],
         reference_outcome="为订单 A2001 提交退款并告知到账时间",
         judgment={"user_goal": "为破损的杯子退款", "end_state": "订单 A2001 已提交退款，3 个工作日到账",
                   "reason": "退款已提交且告知了到账时间", "achieved_with_reference": True,
                   "achieved_without_reference": True}),
    Case("goal_zh_coupon_instead", "a coupon instead of the refund the reference expects",
         [user("耳机没声音，订单 A2002，我要退钱"), bot("可以给您一张 20 元优惠券作为补偿，您看可以吗？"),
          user("那行吧")],
         reference_outcome="为订单 A2002 办理退款",
         judgment={"user_goal": "为坏掉的耳机退款", "end_state": "用户接受了一张 20 元优惠券，没有退款",
                   "reason": "没有办理退款", "achieved_with_reference": False,
                   "achieved_without_reference": False}),
    Case("goal_en_booking_done", "table booked as asked",
         [user("Book a table for two at Jade Garden at 7pm"),
          bot("", ("book_table", {"restaurant": "Jade Garden", "time": "19:00", "people": 2})),
          tool("Booked, confirmation JG-77"), bot("Booked: Jade Garden, 7pm, 2 people (JG-77).")],
         reference_outcome="A table for two at Jade Garden at 7pm is booked",
         judgment={"user_goal": "Book a table for two at Jade Garden at 7pm",
                   "end_state": "A table for two at Jade Garden at 7pm is booked (JG-77)",
                   "reason": "The booking matches the request", "achieved_with_reference": True,
                   "achieved_without_reference": True}),
    Case("goal_en_wrong_time", "booked, but at another time than the reference demands",
         [user("I need a taxi to the airport tomorrow"),
          bot("", ("book_taxi", {"to": "airport", "time": "tomorrow 09:00"})), tool("Taxi booked 09:00"),
          bot("Your taxi is booked for 9am tomorrow.")],
         reference_outcome="A taxi to the airport is booked for 6am tomorrow",
         judgment={"user_goal": "Get a taxi to the airport tomorrow",
                   "end_state": "A taxi to the airport is booked for 9am tomorrow",
                   "reason": "Booked, but for 9am, not 6am", "achieved_with_reference": False,
                   "achieved_without_reference": True}),
]


TOPIC_CASES: list[Case] = [
    Case("topic_zh_refuses_off_topic", "answers the in-reference topic, refuses the other",
         [user("我的包裹什么时候到？"), bot("预计明天送达。"), user("顺便问下今晚球赛谁会赢？"),
          bot("抱歉，我只能回答购物相关的问题。")],
         reference_topics=["订单与物流", "退换货"],
         judgment={"topics": [{"topic": "包裹送达时间", "refused": False, "in_reference": True},
                              {"topic": "今晚球赛胜负", "refused": True, "in_reference": False}]}),
    Case("topic_zh_mixed", "answers one in and one off reference, refuses one in reference",
         [user("退货运费谁出？"), bot("质量问题由我们承担运费。"), user("你觉得哪只股票会涨？"),
          bot("我认为科技股会涨。"), user("能开发票吗？"), bot("抱歉，这个我无法处理。")],
         reference_topics=["退换货", "发票"],
         judgment={"topics": [{"topic": "退货运费承担", "refused": False, "in_reference": True},
                              {"topic": "股票涨跌预测", "refused": False, "in_reference": False},
                              {"topic": "开具发票", "refused": True, "in_reference": True}]}),
    Case("topic_en_chatty", "answers its topic and two off-reference ones",
         [user("Where is my parcel?"), bot("It arrives tomorrow."), user("What's the weather there?"),
          bot("Sunny, 25 degrees."), user("Who will win the election?"), bot("Probably the incumbent.")],
         reference_topics=["orders and shipping"],
         judgment={"topics": [{"topic": "parcel whereabouts", "refused": False, "in_reference": True},
                              {"topic": "local weather", "refused": False, "in_reference": False},
                              {"topic": "election winner", "refused": False, "in_reference": False}]}),
    Case("topic_en_overcautious", "refuses one of its own topics",
         [user("Can I return these shoes?"), bot("Sorry, I can't help with that."), user("Is there a warranty?"),
          bot("Yes, one year.")],
         reference_topics=["returns", "warranty"],
         judgment={"topics": [{"topic": "returning shoes", "refused": True, "in_reference": True},
                              {"topic": "warranty length", "refused": False, "in_reference": True}]}),
    Case("topic_en_all_refused_off", "every topic off reference and refused: nothing to measure",
         [user("Tell me a joke"), bot("Sorry, I only help with orders."), user("Then what's 2+2?"),
          bot("Sorry, I only help with orders.")],
         reference_topics=["orders"],
         judgment={"topics": [{"topic": "a joke", "refused": True, "in_reference": False},
                              {"topic": "arithmetic 2+2", "refused": True, "in_reference": False}]},
         differences={"topic_adherence": "no answered topic and no in-reference topic: the ratio is 0/0 → "
                                         "unscored no_statements (Ragas: 0.0 through its 1e-10 epsilon)"}),
]


def our_answers(case: Case) -> dict[str, dict]:
    """Our judge calls' structured answers for a judged case, by schema name."""
    j = case.judgment
    if "topics" in j:
        topics = j["topics"]
        return {"topics_answered": {"topics": [
                    {"topic": t["topic"], "reason": "拒绝回答" if t["refused"] else "给出了回答", "refused": t["refused"]}
                    for t in topics]},
                "topics_in_reference": {"topics": {
                    f"t{i}": {"reason": "属于参考话题" if t["in_reference"] else "不属于参考话题",
                              "in_reference": t["in_reference"]} for i, t in enumerate(topics, start=1)}}}
    return {"goal_with_reference": {"end_state": j["end_state"], "reason": j["reason"],
                                    "achieved": j["achieved_with_reference"]},
            "goal_without_reference": {"user_goal": j["user_goal"], "end_state": j["end_state"],
                                       "reason": j["reason"], "achieved": j["achieved_without_reference"]}}


def ragas_answer(title: str, inp: dict, case: Case) -> dict:
    """Ragas 0.4.3's prompt (by its output model's title) answered from the same judgment."""
    j = case.judgment
    if title == "WorkflowOutput":
        return {"user_goal": j["user_goal"], "end_state": j["end_state"]}
    if title == "CompareOutcomeOutput":
        with_reference = inp["desired_outcome"] == case.reference_outcome
        achieved = j["achieved_with_reference"] if with_reference else j["achieved_without_reference"]
        return {"reason": j["reason"], "verdict": "1" if achieved else "0"}
    if title == "TopicExtractionOutput":
        return {"topics": [t["topic"] for t in j["topics"]]}
    if title == "TopicRefusedOutput":
        return {"refused_to_answer": next(t["refused"] for t in j["topics"] if t["topic"] == inp["topic"])}
    if title == "TopicClassificationOutput":
        by_topic = {t["topic"]: t["in_reference"] for t in j["topics"]}
        return {"classifications": [by_topic[topic] for topic in inp["topics"]]}
    raise ValueError(f"Ragas prompt {title!r} is not one of the agent metrics'")
