"""Deterministic Chinese customer-service RAG samples for the benchmarks.

    from benchmarks.pipeline.dataset import generate_samples
    rows = generate_samples(200)        # list[dict]: id, question, answer, contexts (5), ground_truth, …

Standard library only: the Ragas side (another venv) reads the same rows from a JSONL file the parent writes, and
the bench stub's responder regenerates nothing — it parses prompts. Same `n` and `seed` → byte-identical rows.

Each row: a question about one of eight topics (退货, 退款, 订单延迟, 发票, 会员积分, 换货, 优惠券, 报销) with a
slot-filled order number / amount / date, an answer of varying quality (complete, partial, off-policy), an expert
ground truth, 5 retrieved contexts (2 from the topic's knowledge base, 3 distractors, shuffled) and the 2 relevant
passages as `reference_contexts` (what the non-LLM context metrics compare against).
"""
from __future__ import annotations

import argparse
import json
import random
import sys
from dataclasses import dataclass
from pathlib import Path

CONTEXTS_PER_SAMPLE = 5
RELEVANT_PER_SAMPLE = 2


@dataclass(frozen=True)
class Topic:
    tag: str
    intent: str
    questions: tuple[str, ...]
    answers: tuple[str, ...]          # good, partial, off-policy — chosen with weights 5:3:2; each names {order}
    ground_truth: str
    passages: tuple[str, ...]         # the topic's knowledge base; 2 are retrieved for a sample


TOPICS: tuple[Topic, ...] = (
    Topic(
        tag="退货", intent="return",
        questions=("我在{date}买的{product}（订单号{order}）不想要了，还能退货吗？",
                   "订单{order}的{product}收到后不合适，怎么申请退货？",
                   "{product}拆封了还能七天无理由退货吗？订单号是{order}。"),
        answers=("您好，订单{order}的{product}在签收后7天内支持无理由退货。请在“我的订单”中点击“申请退货”，"
                 "选择退货原因并上传商品照片。审核通过后请在3天内寄回，退回运费由我们承担。",
                 "您好，订单{order}的{product}可以退货，请在App里提交退货申请。",
                 "亲，订单{order}的{product}拆封了就一律不能退货哦，建议您转卖给朋友。"),
        ground_truth="签收后7天内可无理由退货，商品需保持完好、配件齐全。在“我的订单”中申请退货并上传照片，"
                     "审核通过后3天内寄回，质量问题的退货运费由商家承担。",
        passages=("【退货政策】自签收之日起7天内，商品保持完好、配件齐全即可申请无理由退货；定制类、生鲜类商品除外。"
                  "拆封不影响二次销售的商品同样适用。",
                  "【退货流程】在App“我的订单”页面点击“申请退货”，选择原因并上传商品照片，客服将在24小时内审核。"
                  "审核通过后请在3天内寄回商品，逾期申请将自动关闭。",
                  "【退货运费】因质量问题产生的退货，运费由商家承担；非质量问题的无理由退货，运费由用户承担，"
                  "购买了运费险的订单可获得相应理赔。")),
    Topic(
        tag="退款", intent="refund",
        questions=("订单{order}退款申请{days}天了还没到账，怎么回事？",
                   "我退了{product}，{amount}元什么时候退回来？",
                   "退款显示成功了但是银行卡没收到{amount}元，订单号{order}。"),
        answers=("您好，订单{order}的退款{amount}元已于审核通过后原路退回。支付宝和微信一般1-3个工作日到账，"
                 "银行卡需要3-7个工作日。如超过7个工作日仍未到账，请提供银行流水，我们为您加急核查。",
                 "订单{order}的退款会原路返回，请耐心等待。",
                 "订单{order}的退款已经打到您的账户了，没收到可能是银行的问题，请您自己联系银行。"),
        ground_truth="退款审核通过后原路退回：支付宝、微信1-3个工作日到账，银行卡3-7个工作日到账。"
                     "超过7个工作日未到账，可提供银行流水由客服加急核查。",
        passages=("【退款时效】退款审核通过后将原路退回支付账户。支付宝、微信支付通常1-3个工作日到账；"
                  "银行卡支付需3-7个工作日，节假日顺延。",
                  "【退款异常】退款超过7个工作日仍未到账的，用户可提供银行流水截图，客服将提交财务加急核查，"
                  "核查结果在2个工作日内反馈。",
                  "【部分退款】订单中部分商品退货时，按实际支付金额比例退款，已使用的优惠券不予退还。")),
    Topic(
        tag="订单延迟", intent="delivery_delay",
        questions=("我的订单{order}已经延迟{days}天了还没到，怎么回事？",
                   "{product}说好{date}送到的，现在还没收到，太慢了吧！",
                   "订单{order}物流一直不更新，是不是丢件了？"),
        answers=("非常抱歉让您久等了！订单{order}目前在转运中心，因近期暴雨运输受阻，预计2天内送达。"
                 "如果3天后仍未送达，您可以申请全额退款，或拨打400-800-1234投诉，我们会给您补偿。",
                 "您的订单{order}正在派送中，请耐心等待。",
                 "订单{order}物流慢是快递公司的问题，我们也没有办法，您再等等吧。"),
        ground_truth="先向用户致歉；订单在转运中心，因天气原因延误，预计2天内送达。"
                     "超过承诺时效3天未送达可申请全额退款或拨打400-800-1234投诉，并可获得补偿券。",
        passages=("【物流延误】因天气、交通管制等不可抗力导致的延误，客服应先致歉并告知当前物流状态和预计送达时间。"
                  "物流信息超过48小时未更新的，可发起催件。",
                  "【延误补偿】超过承诺送达时间3天仍未送达的订单，用户可申请全额退款，或获得10元无门槛补偿券。"
                  "投诉电话400-800-1234。",
                  "【丢件处理】物流信息超过7天未更新且快递公司确认丢件的，按商品实付金额全额赔付。")),
    Topic(
        tag="发票", intent="invoice",
        questions=("订单{order}可以开增值税专用发票吗？",
                   "买{product}的发票抬头写错了，能重开吗？",
                   "电子发票在哪里下载？订单号{order}。"),
        answers=("您好，订单{order}支持开具增值税专用发票。请在订单详情页点击“申请发票”，填写公司全称、税号、"
                 "开户行及账号，1-3个工作日内开具。电子发票可在“我的发票”中下载。",
                 "订单{order}可以开发票，您在订单里申请一下。",
                 "订单{order}的发票只能在下单时开，现在已经不能开了。"),
        ground_truth="支持开具增值税专用发票：在订单详情页申请并填写公司全称、税号、开户行及账号，"
                     "1-3个工作日内开具；抬头错误可在180天内申请重开；电子发票在“我的发票”中下载。",
        passages=("【发票开具】订单完成后180天内可在订单详情页申请发票。增值税专用发票需填写公司全称、税号、"
                  "开户行及账号，1-3个工作日内开具。",
                  "【发票重开】发票抬头或税号填写错误的，可在开票后180天内申请作废重开，每个订单限重开一次。",
                  "【电子发票】电子发票与纸质发票具有同等法律效力，可在App“我的发票”中查看和下载PDF文件。")),
    Topic(
        tag="会员积分", intent="points",
        questions=("我的会员积分怎么兑换优惠券？",
                   "积分{amount}分什么时候过期？",
                   "买{product}的积分为什么没到账？订单号{order}。"),
        answers=("您好，每100积分可兑换1元无门槛券，在“会员中心-积分商城”中兑换。积分有效期为获得当年及次年的12月31日，"
                 "订单{order}的积分会在确认收货后7天到账。",
                 "订单{order}的积分可以在会员中心兑换。",
                 "订单{order}的积分是永久有效的，您随时可以兑换现金。"),
        ground_truth="在“会员中心-积分商城”中用积分兑换，100积分抵1元；积分有效期至次年12月31日；"
                     "购物积分在确认收货7天后到账，积分不能兑换现金。",
        passages=("【积分兑换】会员可在“会员中心-积分商城”中使用积分兑换优惠券或礼品，每100积分可抵扣1元，"
                  "积分不可兑换现金。",
                  "【积分有效期】积分有效期为获得当年及次年的12月31日，过期自动清零，系统会提前30天短信提醒。",
                  "【积分到账】购物积分在订单确认收货7天后发放；发生退货的订单，相应积分将被扣回。")),
    Topic(
        tag="换货", intent="exchange",
        questions=("{product}尺码不对，订单{order}可以换一个大一码的吗？",
                   "收到的{product}颜色发错了，怎么换货？",
                   "换货要多久？订单号{order}。"),
        answers=("您好，订单{order}在签收后15天内支持换货。请在“我的订单”中申请换货并选择新尺码，"
                 "寄回后仓库验收通过即为您发出新商品，整个流程约5-7天，发错货的运费由我们承担。",
                 "订单{order}可以换货，请寄回来。",
                 "订单{order}尺码问题不支持换货，您可以先退货再重新下单。"),
        ground_truth="签收后15天内可申请换货：在“我的订单”中提交换货并选择新规格，寄回验收后发出新商品，约5-7天；"
                     "商家发错货的运费由商家承担。",
        passages=("【换货政策】签收后15天内，商品不影响二次销售的，可申请更换尺码或颜色，每个订单限换货一次。",
                  "【换货流程】在“我的订单”中申请换货并选择新规格，寄回后仓库验收通过即发出新商品，"
                  "全程约5-7天。商家发错货的，来回运费由商家承担。",
                  "【缺货处理】申请更换的规格缺货时，客服将联系用户改为退货退款。")),
    Topic(
        tag="优惠券", intent="coupon",
        questions=("下单时{amount}元的优惠券为什么用不了？",
                   "优惠券过期了还能恢复吗？",
                   "订单{order}退货后优惠券会退回吗？"),
        answers=("您好，订单{order}使用的这张{amount}元优惠券需要订单实付满199元才能使用，且不能与其他满减活动叠加。"
                 "整单退货后未过期的优惠券会自动退回账户，已过期的优惠券无法恢复。",
                 "订单{order}的{amount}元优惠券有使用门槛，请查看券面说明。",
                 "订单{order}的优惠券过期了我们可以给您手动延期一个月。"),
        ground_truth="优惠券需满足使用门槛（如满199元）且不与其他满减叠加；整单退货时未过期的券自动退回，"
                     "部分退货不退券；过期优惠券不能恢复或延期。",
        passages=("【优惠券使用】优惠券需满足券面门槛（如满199元可用），同一订单只能使用一张，"
                  "且不能与店铺满减活动叠加。",
                  "【优惠券退回】整单退货时，未过期的优惠券自动退回账户；部分退货不退券。已过期的优惠券不予恢复或延期。",
                  "【优惠券领取】新会员注册即送50元新人券包，有效期7天。")),
    Topic(
        tag="报销", intent="reimbursement",
        questions=("差旅费{amount}元怎么报销？",
                   "{date}出差的住宿发票，报销在哪里提交？",
                   "招待费报销需要谁审批？"),
        answers=("您好，单号{order}的{amount}元费用请登录报销单页面 https://oa.example.com/expense/form 填写报销单，上传发票和行程单，"
                 "提交后由您的二级主管审批，审批通过后5个工作日内打款。请在出差结束后30天内提交。",
                 "单号{order}的费用，您可以在费用系统中提交报销申请。",
                 "单号{order}的报销，您可以找财务部门咨询一下。"),
        ground_truth="登录 https://oa.example.com/expense/form 填写报销单并上传发票和行程单，由二级主管审批，"
                     "审批后5个工作日内打款；出差结束后30天内提交，也可在费用系统提交。",
        passages=("【报销制度】员工差旅费、招待费报销：登录报销单页面 https://oa.example.com/expense/form 填写报销单，"
                  "上传发票和行程单，由二级主管审批；审批通过后财务在5个工作日内打款。",
                  "【报销时限】出差结束后30天内提交报销；也可以在「费用系统」中直接提交报销申请。",
                  "【发票规定】报销需提供抬头为公司全称的增值税发票，电子发票需打印并签字。")),
)

# Every answer names the row's order number, so no two rows share an answer: a judge cache then has nothing to
# reuse within a cold run and the per-sample costs of both sides compare like for like.
assert all("{order}" in answer for topic in TOPICS for answer in topic.answers)

PRODUCTS = ("蓝牙耳机", "羽绒服", "电饭煲", "运动鞋", "机械键盘", "空气炸锅", "连衣裙", "儿童水杯", "台灯", "行李箱")
ANSWER_QUALITY_WEIGHTS = (5, 3, 2)


def _slots(rng: random.Random, index: int) -> dict[str, str]:
    # The order number embeds the index so every question/answer pair is unique (the stub matches on it).
    return {"order": f"{rng.randint(10, 99)}{index:06d}",
            "days": str(rng.randint(2, 9)),
            "amount": str(rng.choice((29, 59, 99, 199, 268, 399, 1280))),
            "date": f"{rng.randint(1, 12)}月{rng.randint(1, 28)}日",
            "product": rng.choice(PRODUCTS)}


def generate_sample(index: int, seed: int = 0) -> dict:
    """Row `index` of the dataset for `seed`; independent of the other rows (so any N is a prefix of a larger N)."""
    rng = random.Random(f"rubriceval-bench:{seed}:{index}")
    topic = TOPICS[index % len(TOPICS)]
    slots = _slots(rng, index)
    question = rng.choice(topic.questions).format(**slots)
    if slots["order"] not in question:
        question = f"{question}（单号{slots['order']}）"
    answer = rng.choices(topic.answers, weights=ANSWER_QUALITY_WEIGHTS)[0].format(**slots)
    relevant = rng.sample(topic.passages, RELEVANT_PER_SAMPLE)
    others = [p for t in TOPICS if t is not topic for p in t.passages]
    contexts = relevant + rng.sample(others, CONTEXTS_PER_SAMPLE - RELEVANT_PER_SAMPLE)
    rng.shuffle(contexts)
    return {"id": f"cs-{index:06d}", "question": question, "answer": answer, "contexts": contexts,
            "ground_truth": topic.ground_truth, "reference_contexts": relevant, "tags": [topic.tag],
            "intent": topic.intent}


def generate_samples(n: int, seed: int = 0) -> list[dict]:
    return [generate_sample(i, seed) for i in range(n)]


def write_jsonl(rows: list[dict], path: str | Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    return path


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Write N deterministic Chinese customer-service samples as JSONL.")
    parser.add_argument("n", type=int)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="-", help="a .jsonl path, or - for stdout")
    args = parser.parse_args(argv)
    rows = generate_samples(args.n, args.seed)
    if args.out == "-":
        for row in rows:
            sys.stdout.write(json.dumps(row, ensure_ascii=False) + "\n")
    else:
        write_jsonl(rows, args.out)


if __name__ == "__main__":
    main()
