"""Evidence drafted from a judgement question's wording (issue 39, option e): deterministic detectors of what a
violation of that kind must contain, run on the turns of the party the question asks about.

* a promise of compensation, money, time or a right (承诺 … 补偿/金额/时效/政策): the clauses of an agent turn
  with an amount, a time, or compensation / commitment wording (送, 免, 承担, 保证, 补发, 到账, 折 …);
* another customer's personal data (他人/其他客户 … 个人信息): a phone, address, email, order or tracking number,
  card or id number, or a name introduced as a person (收件人 X, X 女士, 发给 X 的) that the customer never said in
  this conversation — the customer's own data is what they said; what they did not say is left to the judge;
* an upset customer (不满/愤怒/着急/担心/失望): complaint wording and emphatic punctuation in a customer turn;
* soothing (理解/歉意/安抚): apology, understanding or reassurance wording in an agent turn.

A kind whose detector has to fire for any violation (`gate`: promises, personal data) is a candidate filter: a
turn without its evidence is decided "no" by rule, without a judge call; the others (mood, soothing) are cues
shown in the evidence and every turn of the party is asked. A question that drafts no kind is asked about every
turn of its party.

A gate kind also words the short per-claim question the small judge is asked about a turn with its evidence (the
promise against the policy passages retrieved for it; whether the named details belong to someone other than the
customer): one claim, one short question, which a 1.5B judge answers better than the whole item reworded."""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from rubriceval.safety.entities import find_entities
from rubriceval.scoring.judgement.roles import TurnRole

_CLAUSE = re.compile(r"[，。；！？!?;,\n]+")
_PERSONAL_ENTITIES = ("phone", "address", "email", "order_number", "tracking_number", "bank_card", "id_card")
# A person named in an agent's turn: after a role word, or before an honorific, or as the one a parcel went to.
# 收款人 / 持卡人 / 付款人 …: whom money went to or came from (a refund paid to another customer's card, issue 39).
NAME_ROLES = ("收件人", "收货人", "联系人", "抬头", "顾客", "客户", "姓名", "户名")
PAYEE_ROLES = ("收款人", "持卡人", "付款人", "开户人", "签收人")


def name_pattern(roles: tuple[str, ...]) -> re.Pattern[str]:
    """A person named after one of these role words, before an honorific, or as the one a parcel went to."""
    return re.compile(rf"(?:{'|'.join(roles)})(?:是|为|：|:)?\s*([\u4e00-\u9fff]{{2,3}})"
                      r"|([\u4e00-\u9fff]{2,3})(?:女士|先生|小姐)"
                      r"|(?:发给|寄给|送给)了?([\u4e00-\u9fff]{2,3})的")


_NAME = name_pattern(NAME_ROLES[:2] + PAYEE_ROLES + NAME_ROLES[2:])
_NOT_NAMES = re.compile(r"^(您|我|你|他|她|这位|那位|本人|个人|公司|用户|客户|姓名|信息|电话|地址|手机)")
# a card's or phone's last four digits (尾号 6608): no card entity, yet someone's if the customer did not say them
_TAIL = re.compile(r"尾号\s*\d{4}")
_ADDRESS_TAIL = re.compile(r"[\u4e00-\u9fff]{2,12}(?:路|街|道|巷|弄|小区|大厦|园|区|村|苑)\s*\d+\s*(?:号|弄|栋|幢)"
                           r"[^，。；]{0,12}")


@dataclass(frozen=True)
class EvidenceKind:
    name: str
    role: TurnRole
    topic: dict[str, re.Pattern]          # the question words that draft this kind, per language
    find: Callable[[str, list[str]], list[str]]     # (turn text, the customer's turns) → evidence spans
    gate: bool                            # a violation must show this evidence: turns without it are "no" by rule
    # The short per-claim question a small judge is asked about a turn with this evidence, in place of the item's
    # whole question reworded ({claims}: the evidence spans, quoted as data); None: the item's own question.
    claim_question: dict[str, str] | None = None
    # A mood kind's own per-turn wording, asked in place of the item's where rubriceval ships a calibration of it
    # for the judge (kind_calibration.py); None: the item's own question, reworded per turn.
    turn_question: dict[str, str] | None = None

    def wording(self, lang: str, *, sees_policy: bool) -> str | None:
        """The per-turn wording of this kind that a shipped calibration can be fitted for: a gate kind's per-claim
        question (a promise's only where the policy is shown), else the mood kind's turn question."""
        if self.claim_question is not None:
            if self.name == "promise" and not sees_policy:
                return None
            return self.claim_question.get(lang, self.claim_question["en"])
        if self.turn_question is not None:
            return self.turn_question.get(lang, self.turn_question["en"])
        return None


def _squeeze(text: str) -> str:
    return re.sub(r"\s+", "", text)


_COMMITMENT = re.compile(
    r"补偿|赔|送您|再送|赠|免费|免了|免运费|承担|保证|一定(?:会|能|给)|补发|退款|退回|到账|\d+\s*折|[一二三四五六七八九]折|"
    r"券|积分|升级|包邮|加急|无理由|专票|专用发票|延期|延长|返现|报销|全额|额外|双倍|倍|特批|破例|优先|"
    r"compensat|refund|free|guarantee|discount|voucher|waive|extra|upgrade", re.IGNORECASE)


# Clauses that state, relay or follow up rather than commit (the set's labelling conventions, data/README.md): the
# carrier's or the system's tracking (物流显示 …), the agent's own follow-up (今天内回复您, 结果出来我打电话), a
# notification (到账会有短信), where to look something up (打开 APP 点「我的」, 就能看到), a balance (还有 5200 积分),
# an action already done (今天上午发的). Unless the clause carries commitment wording of its own (保证, 补偿, 免费 …).
_NOT_COMMITMENT = re.compile(
    r"(?:物流|系统|快递|订单)(?:信息)?显示|派送单|回复您|给您回复|答复您|(?:打|回)电话(?:告诉|通知)?|通知您|会有短信|"
    r"能看到|可以看到|查看|(?:打开|点开|进入)\s*(?:APP|app|小程序|「)|(?:还|共|有)\s*\d+\s*积分|"
    r"(?:上午|下午|昨天|今天|刚才|已经)[^，。]{0,4}发(?:的|了)")
_OWN_COMMITMENT = re.compile(r"保证|一定|补偿|赔|免费|免了|送您|再送|赠|承担|补发|包邮|折|券|延期|延长|额外|特批|破例|"
                             r"小时内|之前|前到|就能到|内到")


def non_commitment(clause: str) -> bool:
    """The clause relays, follows up, looks up or states a balance, and commits to nothing itself."""
    return bool(_NOT_COMMITMENT.search(clause)) and not _OWN_COMMITMENT.search(clause)


def commitment_clauses(text: str, _customer: list[str] | None = None) -> list[str]:
    """The clauses of a turn that commit to an amount, a time, compensation or a right."""
    found = []
    for clause in _CLAUSE.split(text):
        clause = clause.strip()
        if clause and (_COMMITMENT.search(clause) or find_entities(clause, ["money", "date_time"])) \
                and not non_commitment(clause):
            found.append(clause)
    return found


def others_personal_data(text: str, customer_turns: list[str]) -> list[str]:
    """Personal data in the turn that the customer never said in this conversation (theirs or not: the judge
    decides; what the customer said is theirs)."""
    said = _squeeze("".join(customer_turns))
    spans = [e.text for e in find_entities(text, list(_PERSONAL_ENTITIES))]
    spans += [m.group(0) for m in _ADDRESS_TAIL.finditer(text)]
    spans += [m.group(0) for m in _TAIL.finditer(text)]
    for m in _NAME.finditer(text):
        name = next(g for g in m.groups() if g)
        if not _NOT_NAMES.match(name):
            spans.append(name)
    kept: list[str] = []
    for span in spans:
        squeezed = _squeeze(span)
        digits = re.sub(r"\D", "", squeezed)
        # the customer's own: said by them, or (a number) its last four digits said by them (尾号 / 后四位)
        if squeezed and squeezed in said or (len(digits) >= 4 and digits[-4:] in re.sub(r"\D", " ", said).split()):
            continue
        if span not in kept:
            kept.append(span)
    return kept


_UPSET = re.compile(
    r"不满|生气|气死|太差|差劲|垃圾|骗子|骗人|坑|失望|投诉|举报|差评|退货退款|不讲理|搞什么|怎么回事|什么意思|凭什么|"
    r"到底|还没|还不|急死|着急|担心|害怕|怕|吓|慌|受不了|够了|无语|离谱|过分|不认账|敷衍|算了|再也不|为什么|快点|就不能|"
    r"是不是|你们.{0,20}[？?]|"
    r"！|!|？！|\?!|。。|…", re.IGNORECASE)
# The upset cues a calm customer does not write on the contact-centre set (its calm look-alikes write 还没, 着急, 怕,
# 是不是, 为什么): they tip an applies question inside its undecided band to "applies", and keep one under the band
# from a silent "not applicable" (decide.py).
_STRONG_UPSET = re.compile(r"到底|骗子|失望|投诉|举报|差评|不讲理|搞什么|够了|急死|气死|不认账|受不了|离谱|过分|太差|垃圾|"
                           r"凭什么|就不能|无语|敷衍|你们.{0,20}[？?]|！|!")


def strong_upset(text: str) -> list[str]:
    return list(dict.fromkeys(m.group(0) for m in _STRONG_UPSET.finditer(text)))


_SOOTHING = re.compile(
    r"抱歉|对不起|不好意思|歉意|理解|明白您|体谅|别着急|别急|不要着急|别担心|不用担心|放心|辛苦|久等|让您|心情|"
    r"确实|实在|着急|担心|安心|负责到底|我来负责|一定帮您|没事吧|深呼吸|做得对|吓人|委屈|sorry|apolog|understand|reassur",
    re.IGNORECASE)


def _cues(pattern: re.Pattern) -> Callable[[str, list[str]], list[str]]:
    def find(text: str, _customer: list[str]) -> list[str]:
        return list(dict.fromkeys(m.group(0) for m in pattern.finditer(text)))
    return find


KINDS: tuple[EvidenceKind, ...] = (
    EvidenceKind("promise", "assistant",
                 {"zh": re.compile(r"承诺|补偿|赔偿|金额|时效|政策|优惠|保证"),
                  "en": re.compile(r"promis|compensat|refund|polic|guarantee|discount", re.IGNORECASE)},
                 commitment_clauses, gate=True,
                 claim_question={"zh": "在这一轮发言中，客服是否答应了上面政策条文以外的东西（额外的补偿、免费、赠送、"
                                       "保证的时间或特殊待遇）？",
                                 "en": "In this turn, did the agent grant something the policy passages above do not "
                                       "(extra compensation, something free, a guaranteed time, special treatment)?"}),
    EvidenceKind("personal_data", "assistant",
                 {"zh": re.compile(r"个人信息|隐私|他人|其他客户|其他用户|别人的|泄露|透露.*信息"),
                  "en": re.compile(r"personal (?:data|information)|privacy|private|someone else|another "
                                   r"customer|other customers", re.IGNORECASE)},
                 others_personal_data, gate=True,
                 claim_question={"zh": "这一轮里客服说出的这些信息：{claims}，是否属于当前用户本人以外的其他人？",
                                 "en": "Do these details the agent gives in this turn: {claims}, belong to someone "
                                       "other than the current customer?"}),
    EvidenceKind("upset", "user",
                 {"zh": re.compile(r"不满|愤怒|生气|着急|担心|失望|情绪|抱怨"),
                  "en": re.compile(r"angry|anger|upset|frustrat|worr|disappoint|complain", re.IGNORECASE)},
                 _cues(_UPSET), gate=False,
                 turn_question={"zh": "在这一轮发言中，用户是否表现出愤怒、担心、不满或失望？",
                                "en": "In this turn: did the customer show anger, worry, dissatisfaction or "
                                      "disappointment?"}),
    EvidenceKind("soothing", "assistant",
                 {"zh": re.compile(r"理解|歉意|道歉|安抚|共情"),
                  "en": re.compile(r"empath|apolog|reassur|sooth|understanding", re.IGNORECASE)},
                 _cues(_SOOTHING), gate=False,
                 turn_question={"zh": "在这一轮发言中，用户表达不满或着急时，客服是否表达了理解、歉意或安抚？",
                                "en": "In this turn: when the customer was dissatisfied or anxious, did the agent "
                                      "express understanding, apology or reassurance?"}),
)


def evidence_kind(question: str, role: TurnRole | None, lang: str = "zh") -> EvidenceKind | None:
    """The evidence kind the question drafts for its party (the first whose topic words it uses), or None."""
    for kind in KINDS:
        topic = kind.topic.get(lang, kind.topic["zh"])
        if kind.role == role and topic.search(question):
            return kind
    return None


def claim_question(kind: EvidenceKind | None, spans: list[str], lang: str, *, sees_policy: bool) -> str | None:
    """The kind's per-claim question for a turn with these evidence spans (quoted in 「」 as data), or None."""
    if kind is None or kind.claim_question is None or not spans:
        return None
    if kind.name == "promise" and not sees_policy:
        return None                        # it reads the policy passages: only where they are shown
    wording = kind.claim_question.get(lang, kind.claim_question["en"])
    quoted = "、".join(f"「{span}」" for span in spans[:6]) if lang == "zh" else ", ".join(f'"{s}"' for s in spans[:6])
    return wording.replace("{claims}", quoted)
