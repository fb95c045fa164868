"""Whose turns a whole-conversation judgement question is about, read from its wording (客服/agent → the agent's
turns, 用户/customer → the customer's), and the question as it is asked about one of those turns.

A small judge answers one short question about one turn far better than one about a whole transcript (issue 39:
every whole-transcript p(yes) of the embedded judge sat under 0.5), so a question that names the party it asks
about is decomposed over that party's turns (decide.py). The party is the one the question asks about: in
"用户表达不满时，客服是否表达了理解？" the word before 是否 (客服), not the first one named."""
from __future__ import annotations

import re
from typing import Literal

TurnRole = Literal["user", "assistant"]

_PARTIES = {
    "zh": {"assistant": ("人工客服", "客服", "坐席", "机器人", "商家", "店家", "回答", "回复"),
           "user": ("用户", "客户", "顾客", "买家", "消费者")},
    "en": {"assistant": ("agent", "assistant", "bot", "representative", "rep", "staff", "answer", "response",
                         "reply"),
           "user": ("customer", "user", "caller", "buyer", "client")},
}
# the verb that opens the yes/no question: the party named last before it is the one asked about
_ASKS = {"zh": re.compile(r"是否|有没有|有无|是不是"), "en": re.compile(r"\b(?:did|does|do|has|have|was|were|is)\b",
                                                                      re.IGNORECASE)}


def _party_words(lang: str) -> list[tuple[str, TurnRole]]:
    words = _PARTIES.get(lang, _PARTIES["zh"])
    return sorted(((w, role) for role, ws in words.items() for w in ws), key=lambda p: -len(p[0]))   # type: ignore


def _mentions(text: str, lang: str) -> list[tuple[int, TurnRole]]:
    """(position, role) of every party word, longest first so 人工客服 is not read as 客服 twice."""
    found: list[tuple[int, TurnRole]] = []
    taken: set[int] = set()
    for word, role in _party_words(lang):
        pattern = re.escape(word) if lang == "zh" else rf"\b{re.escape(word)}s?\b"
        for m in re.finditer(pattern, text, flags=0 if lang == "zh" else re.IGNORECASE):
            if not taken.intersection(range(m.start(), m.end())):
                found.append((m.start(), role))
                taken.update(range(m.start(), m.end()))
    return sorted(found)


def question_role(question: str, lang: str = "zh") -> TurnRole | None:
    """The party the question asks about, or None when it names none (then it stays a whole-conversation question).
    zh: the party named last before 是否 (else the first named); en: the party named right after did/does/has …"""
    mentions = _mentions(question, lang)
    if not mentions:
        return None
    asks = _ASKS.get(lang, _ASKS["zh"]).search(question)
    if asks is None:
        return mentions[0][1]
    if lang == "zh":
        before = [role for pos, role in mentions if pos < asks.start()]
        return before[-1] if before else mentions[0][1]
    after = [role for pos, role in mentions if pos >= asks.end()]
    return after[0] if after else mentions[0][1]


def turn_question(question: str, lang: str = "zh") -> str:
    """The whole-conversation question asked about one turn (the template names the turn)."""
    return f"在这一轮发言中，{question}" if lang == "zh" else f"In this turn: {question}"


# A question about how turns relate (repeated, escalated, across turns) cannot be asked of one turn: kept whole.
_ACROSS = {"zh": re.compile(r"反复|多轮|多次|连续|重复|升级|前后|之后|最终|最后|整个|整体|全程"),
           "en": re.compile(r"repeat|again|escalat|across|throughout|overall|in the end|eventually|whole", re.I)}
# "in every turn": the item holds only when every turn of the party says yes (the lowest p(yes) decides)
_EVERY = {"zh": re.compile(r"每一轮|每轮|每次|每一次|始终|一直都|全部回复"),
          "en": re.compile(r"\bevery (?:turn|reply|response|message)|\beach (?:turn|reply|response)|\balways\b", re.I)}


def per_turn_question(question: str, lang: str = "zh") -> bool:
    """Whether the question can be asked of single turns (not about how turns relate)."""
    return not _ACROSS.get(lang, _ACROSS["zh"]).search(question)


def every_turn(question: str, lang: str = "zh") -> bool:
    """The question asks whether every turn of the party does it (else: whether any turn does)."""
    return bool(_EVERY.get(lang, _EVERY["zh"]).search(question))
