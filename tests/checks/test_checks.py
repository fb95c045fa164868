"""Deterministic checks: pass/fail plus the evidence (quoted span or the missing thing)."""
from rubriceval import Sample
from rubriceval.checks import run_check
from rubriceval.i18n import evidence_text
from rubriceval.rubric.schema import MaxLength, MustMention, MustNotMention, RegexCheck, RequiredLink, StepsInOrder


def en(evidence) -> str:
    """The evidence as an English reader sees it (details are written in the sample's language)."""
    return evidence_text(evidence, "en")


CTX = ["报销单链接 https://oa.example.com/expense/form ，二级主管审批。"]


def s(answer, contexts=CTX):
    return Sample(id="x", question="怎么报销？", answer=answer, contexts=contexts)


def test_must_mention_all_reports_missing_and_span():
    item = MustMention(id="m", type="must_mention", phrases=["二级主管|二级经理", "发票"])
    ev = run_check(item, s("请找二级经理审批。"))
    assert ev.passed is False and ev.missing == ["发票"] and ev.span == "二级经理" and ev.start == 2
    assert run_check(item, s("上传发票后由二级主管审批")).passed


def test_must_mention_any_and_fullwidth_normalisation():
    item = MustMention(id="m", type="must_mention", phrases=["OA系统", "费用系统"], mode="any")
    assert run_check(item, s("请登录ＯＡ系统提交")).passed        # full-width letters fold to ASCII
    assert not run_check(item, s("请找财务")).passed


def test_must_not_mention_quotes_the_offending_phrase():
    item = MustNotMention(id="n", type="must_not_mention", phrases=["加我微信|私下转账"])
    ev = run_check(item, s("可以加我微信处理"))
    assert ev.passed is False and ev.span == "加我微信"


def test_regex_should_match_and_should_not():
    item = RegexCheck(id="r", type="regex", pattern=r"\d+ ?个工作日")
    ev = run_check(item, s("5 个工作日内到账"))
    assert ev.passed and ev.span == "5 个工作日"
    neg = RegexCheck(id="r", type="regex", pattern="保证", should_match=False)
    assert not run_check(neg, s("我们保证退款")).passed


def test_required_link_found_in_context():
    item = RequiredLink(id="l", type="required_link", url_pattern=r"https://oa\.example\.com/expense/.*",
                        allowed_domains=["oa.example.com"])
    ev = run_check(item, s("报销单：https://oa.example.com/expense/form。由二级主管审批"))
    assert ev.passed and ev.span == "https://oa.example.com/expense/form" and "invented" not in en(ev)


def test_required_link_missing_and_off_domain_and_invented():
    item = RequiredLink(id="l", type="required_link", url_pattern=r"https://oa\.example\.com/expense/.*",
                        allowed_domains=["oa.example.com"], fail_on_invented=True)
    ev = run_check(item, s("请访问 http://expense-help.cn/form 填写"))
    assert not ev.passed and ev.missing and "outside the allowed domains" in en(ev)
    assert "possibly invented" in en(ev) and "expense-help.cn" in en(ev)


def test_required_link_flags_invented_link_on_right_domain():
    item = RequiredLink(id="l", type="required_link", allowed_domains=["example.com"], fail_on_invented=True)
    ev = run_check(item, s("点击 https://help.example.com/invoice/reissue-now 重开"))
    assert not ev.passed and "possibly invented" in en(ev)


def test_steps_in_order():
    item = StepsInOrder(id="o", type="steps_in_order", steps=["抱歉|理解", "物流|派送", "退款|投诉"])
    good = run_check(item, s("非常抱歉！物流显示明天送达，如需退款请联系我们"))
    assert good.passed
    wrong = run_check(item, s("物流显示明天送达，非常抱歉，如需退款请联系我们"))
    assert not wrong.passed and "comes before" in en(wrong)
    missing = run_check(item, s("非常抱歉，物流显示明天送达"))
    assert not missing.passed and missing.missing == ["退款|投诉"]


def test_max_length_counts_characters():
    item = MaxLength(id="len", type="max_length", max_chars=5)
    assert run_check(item, s("一二三四五")).passed
    ev = run_check(item, s("一二三四五六"))
    assert not ev.passed and "6 characters" in en(ev)
