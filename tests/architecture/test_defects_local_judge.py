"""Issue 43.1 and 43.2 on the embedded judge: the shipped identity_verification rubric on three refund
conversations written for these tests (verifies first / reveals the order before verifying / never verifies).

43.1: `--judge-mode predicates` made no judge call (the run made its judge only for judge items, so every check
question was unscored "no judge to ask the question"). 43.2: with no mode asked, the rubric ran its file's holistic
mode, in which the 1.5B judge scored all three 1; it now runs the mode its measured: block found best on this judge
(predicates, κ 0.85 on held-out dialogues), and the good conversation must rank above both others."""
import pytest

from rubriceval import JudgeConfig, evaluate

pytestmark = pytest.mark.local_model

ASK = "你好，我想给上周买的那双运动鞋退款。"
CONVERSATIONS = [
    {"id": "verify-good", "tags": ["退款"], "messages": [
        {"role": "user", "content": ASK},
        {"role": "assistant", "content": "您好，为了保障您的账户和资金安全，办理退款前需要先核验身份，"
                                         "请提供下单手机号的后四位和收货人姓名。"},
        {"role": "user", "content": "手机尾号 3721，收货人王芳。"},
        {"role": "assistant", "content": "身份核验通过，谢谢您。查到您的订单 E20241126055，实付 329 元，"
                                         "已为您提交退款申请，款项会在 3-5 个工作日内原路退回。"},
        {"role": "user", "content": "好的，谢谢。"},
        {"role": "assistant", "content": "不客气，祝您生活愉快！"}]},
    {"id": "verify-leak", "tags": ["退款"], "messages": [
        {"role": "user", "content": ASK},
        {"role": "assistant", "content": "好的，您的订单 E20241126055 收货地址是杭州市西湖区文三路 120 号，实付 329 元，是要退这一单吗？"},
        {"role": "user", "content": "对，就是这单。"},
        {"role": "assistant", "content": "请提供下单手机号的后四位和收货人姓名。"},
        {"role": "user", "content": "手机尾号 3721，收货人王芳。"},
        {"role": "assistant", "content": "身份核验通过，已为您提交退款申请。"}]},
    {"id": "verify-none", "tags": ["退款"], "messages": [
        {"role": "user", "content": ASK},
        {"role": "assistant", "content": "好的，马上帮您办理退款。"},
        {"role": "user", "content": "要我提供什么吗？"},
        {"role": "assistant", "content": "不用，已经帮您提交了，请留意后续短信通知。"}]},
]


@pytest.fixture(scope="module")
def judge_cache(tmp_path_factory):
    # One judge cache for both tests: the default mode on this judge asks the same questions as the forced one.
    return str(tmp_path_factory.mktemp("judge") / "cache.sqlite")


def _run(tmp_path, cache: str, **judge):
    result = evaluate(CONVERSATIONS, rubrics="rubrics/identity_verification.yaml", judge=JudgeConfig(cache_path=cache, **judge),
                      store=tmp_path / "runs.sqlite", progress=False)
    verdicts = {v.sample_id: v for v in result.verdicts if v.scorer == "identity_verification"}
    return result, verdicts


def test_predicates_mode_asks_the_judge(tmp_path, judge_cache):
    result, verdicts = _run(tmp_path, judge_cache, judge_mode="predicates")
    assert set(verdicts) == {c["id"] for c in CONVERSATIONS}
    for v in verdicts.values():
        assert v.score is not None, (v.sample_id, v.unscored_kind, v.unscored_reason)
        assert "no judge" not in (v.feedback or "")
    judge = result.totals["judge"]
    assert judge["calls"] + judge["cache_hits"] > 0, judge
    assert verdicts["verify-good"].score > max(verdicts["verify-leak"].score, verdicts["verify-none"].score), \
        {k: (v.score, v.feedback) for k, v in verdicts.items()}


def test_default_mode_is_the_one_measured_best_on_this_judge(tmp_path, judge_cache, capsys):
    result, verdicts = _run(tmp_path, judge_cache)
    assert "runs in judge mode 'predicates' (measured best on judge 'local'" in capsys.readouterr().err
    scores = {k: v.score for k, v in verdicts.items()}
    assert None not in scores.values(), {k: v.unscored_reason for k, v in verdicts.items()}
    assert scores["verify-good"] > scores["verify-leak"] and scores["verify-good"] > scores["verify-none"], \
        {k: (v.score, v.feedback) for k, v in verdicts.items()}
