"""A yes/no answer read from a judge reply: the label, and p(yes) from the answer token's logprobs — P(yes) / (P(yes)
+ P(no)) summed over the spellings of each answer among the top tokens at the first position offering either; a
server without logprobs gives p(yes) = 1 or 0 from the label (`source: label`). Read the same way by checklist
questions, per-turn check questions and the judgement items' per-turn questions (here, below all three)."""
from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel

from rubriceval.judge.ask import Reading
from rubriceval.judge.options import TokenLogprob

YES_SPELLINGS = {"yes", "是", "是的", "y"}
NO_SPELLINGS = {"no", "否", "不是", "n"}


class YesNo(BaseModel):
    """One question's answer: the label, p(yes), and where p(yes) came from."""

    label: bool
    p_yes: float
    source: Literal["logprobs", "label"]


def _spelling(token: str) -> str:
    return token.strip().strip('"').strip().lower()


def p_yes_from_logprobs(tokens: list[TokenLogprob] | None) -> float | None:
    """p(yes) normalised over yes/no at the first generated position that offers either; None when none does."""
    for position in tokens or []:
        options = dict(position.top)
        options.setdefault(position.token, position.logprob)
        yes = sum(math.exp(lp) for tok, lp in options.items() if _spelling(tok) in YES_SPELLINGS)
        no = sum(math.exp(lp) for tok, lp in options.items() if _spelling(tok) in NO_SPELLINGS)
        if yes + no > 0:
            return yes / (yes + no)
    return None


def _label(reply) -> str | None:
    data = getattr(reply, "data", None)
    text = data.get("answer") if isinstance(data, dict) and isinstance(data.get("answer"), str) else reply.text
    word = _spelling(text or "")
    if word.startswith("{"):                       # JSON the client did not decode (no schema was sent)
        word = _spelling(word.split(":")[-1].strip("{} "))
    if word in YES_SPELLINGS:
        return "yes"
    if word in NO_SPELLINGS:
        return "no"
    return None


def read_yes_no(reply) -> Reading[YesNo]:
    """A reader for `ask`: the yes/no label, with p(yes) from the reply's logprobs when there are any."""
    label = _label(reply)
    if label is None:
        snippet = (reply.text or "").strip().replace("\n", " ")[:40]
        return Reading(problems=[f"the reply is neither yes nor no: {snippet!r}"], kind="parse_error")
    p_yes = p_yes_from_logprobs(getattr(reply, "logprobs", None))
    if p_yes is None:
        return Reading(value=YesNo(label=label == "yes", p_yes=1.0 if label == "yes" else 0.0, source="label"))
    return Reading(value=YesNo(label=label == "yes", p_yes=p_yes, source="logprobs"))
