"""Checks' evidence: names the words found (not the synonym group), is said in the sample's language and again in
either language from its stored message; context conditions (unless_context / only_if_context) name the context."""
import pytest
from pydantic import TypeAdapter

from rubriceval import Conversation, Evidence, Sample, Verdict, load_rubric
from rubriceval.checks import run_check
from rubriceval.data.conversation_io import conversation_sample
from rubriceval.i18n import evidence_text, render
from rubriceval.rubric.schema import Item

ITEM = TypeAdapter(Item)


def item(**kw):
    return ITEM.validate_python({"id": "x", **kw})


def sample(answer, contexts=(), question="能包邮吗？"):
    return Sample(id="s", question=question, answer=answer, contexts=list(contexts))


def test_evidence_names_the_synonym_found_not_the_group():
    forbidden = item(type="must_not_mention", phrases=["私下转账|加我微信|个人微信"])
    ev = run_check(forbidden, sample("您可以加我微信，我私下处理"))
    assert "“加我微信”" in ev.detail and "私下转账" not in ev.detail and "个人微信" not in ev.detail
    required = item(type="must_mention", phrases=["退款|补偿|投诉"], mode="any")
    ev = run_check(required, sample("可以为您申请补偿"))
    assert "“补偿”" in evidence_text(ev, "en") and "退款" not in evidence_text(ev, "en")
    missing = run_check(item(type="must_mention", phrases=["退款|补偿", "物流"]), sample("正在处理"))
    assert evidence_text(missing, "en") == "mentions 0 of 2 required phrase(s); missing: “退款 / 补偿”, “物流”"


def test_detail_is_in_the_samples_language_and_the_message_says_it_in_either():
    check = item(type="must_mention", phrases=["refund"], mode="any")
    zh = run_check(check, sample("请耐心等待"))
    en = run_check(check, Sample(id="e", question="Where is my order?", answer="Please wait."))
    assert zh.detail == "一项都没有提到：“refund”" and en.detail == "mentions none of: “refund”"
    assert evidence_text(zh, "en") == en.detail and evidence_text(en, "zh") == zh.detail


def test_message_survives_the_store_round_trip_and_old_evidence_shows_its_detail():
    ev = run_check(item(type="max_length", max_chars=3), sample("太长的回答"))
    back = Verdict.model_validate_json(Verdict(sample_id="s", scorer="r", score=1, evidence=[ev]).model_dump_json())
    assert evidence_text(back.evidence[0], "en") == "5 characters (max 3)"
    assert evidence_text(back.evidence[0], "zh") == "5 个字符（上限 3）"
    assert evidence_text(Evidence(item="old", detail="written before messages"), "zh") == "written before messages"


FREE_SHIPPING = dict(type="must_not_mention", phrases=["包邮|免运费"], unless_context=["包邮|免运费|免邮"])


def test_unless_context_allows_what_a_context_grants_and_names_that_context():
    check = item(**FREE_SHIPPING)
    granted = run_check(check, sample("会员订单可以包邮", ["退货需在 7 天内申请。", "会员订单满 99 元免运费。"]))
    assert granted.passed is True and granted.span == "包邮"
    text = evidence_text(granted, "en")
    assert "context 2" in text and "“免运费”" in text and "满 99 元免运费" in text
    assert "参考资料第 2 条" in granted.detail
    refused = run_check(check, sample("可以包邮", ["退货需在 7 天内申请。"]))
    assert refused.passed is False and "no context mentions" in evidence_text(refused, "en")
    silent = run_check(check, sample("运费按实际计算", []))
    assert silent.passed is True and evidence_text(silent, "en") == "no forbidden phrase"


def test_only_if_context_requires_the_check_only_when_a_context_mentions_it():
    check = item(type="must_mention", phrases=["运费"], only_if_context=["运费|邮费"])
    skipped = run_check(check, sample("好的", ["退货需在 7 天内申请。"]))
    assert skipped.passed is True and evidence_text(skipped, "en") == "not required: no context mentions “运费 / 邮费”"
    required = run_check(check, sample("好的", ["偏远地区邮费 20 元。"]))
    assert required.passed is False and required.missing == ["运费"]
    assert evidence_text(required, "en").startswith("required because context 1 mentions “邮费”")
    met = run_check(check, sample("偏远地区需要运费 20 元", ["偏远地区邮费 20 元。"]))
    assert met.passed is True


def test_context_condition_per_turn_reads_that_turns_contexts():
    convo = conversation_sample(Conversation.model_validate({"id": "c", "turns": [
        {"role": "user", "content": "能包邮吗"},
        {"role": "assistant", "content": "会员可以包邮", "contexts": ["会员包邮。"]},
        {"role": "user", "content": "非会员呢"},
        {"role": "assistant", "content": "也包邮", "contexts": ["非会员运费 10 元。"]}]}))
    ev = run_check(item(**FREE_SHIPPING, turns="assistant"), convo)
    assert ev.passed is False and ev.turn == 4 and evidence_text(ev, "en").startswith("turn 4: forbidden")


def test_context_conditions_keep_old_rubric_hashes_and_show_in_the_shipped_rubric():
    rubric = load_rubric("rubrics/policy_compliance.yaml")
    conditioned = [i for i in rubric.check_items if i.unless_context]
    assert conditioned, "policy_compliance shows a context-conditional rule"
    plain = item(type="must_not_mention", phrases=["a"])
    assert "unless_context" not in plain.model_dump(exclude_defaults=True)
    from rubriceval.rubric.schema import _hashed_fields
    dumped = {"items": [plain.model_dump(mode="json")]}
    assert _hashed_fields(dumped)["items"][0] == {k: v for k, v in plain.model_dump(mode="json").items()
                                                  if k not in ("turns", "unless_context", "only_if_context", "match")}


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_every_evidence_key_renders_in_both_languages(lang):
    from rubriceval.i18n.evidence_text import EVIDENCE_TEXT
    for key, texts in EVIDENCE_TEXT.items():
        assert set(texts) == {"zh", "en"}, key
        names = {part.split("}")[0] for part in texts[lang].split("{")[1:]}
        render({"key": key, "params": {n: "x" for n in names}}, lang)


def test_report_says_a_missing_link_once_in_the_report_language():
    from rubriceval.i18n import t
    from rubriceval.report.html_env import template_env

    link = item(type="required_link", url="https://help.example.com/invoice")
    ev = run_check(link, sample("请去官网开票"))
    page = template_env().from_string('{% import "_parts.j2" as parts with context %}{{ parts.evidence_list(ev, t) }}')
    for lang, word in (("en", "missing"), ("zh", "缺少")):
        html = page.render(ev=[ev], t=lambda key, lang=lang, **kw: t(key, lang, **kw),
                           say=lambda e, lang=lang: evidence_text(e, lang))
        assert html.count("https://help.example.com/invoice") == 1 and word in html
