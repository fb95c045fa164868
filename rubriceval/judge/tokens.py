"""Rough token counts for planning (dry-run), before any call is paid. Real counts come from the provider's usage."""
from __future__ import annotations

import re

_CJK = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]")
_ALNUM = re.compile(r"[A-Za-z0-9_]+")
_SYMBOL = re.compile(r"[^\sA-Za-z0-9_]")

# Qwen/GPT BPE vocabularies: about 0.7 tokens per CJK character, 1.3 per English word, 1 per symbol.
CJK_TOKENS_PER_CHAR = 0.7
TOKENS_PER_WORD = 1.3


def estimate_tokens(text: str) -> int:
    other, cjk = _CJK.subn("", text)     # subn counts without building a list (10 MB answers happen)
    alpha = sum(1 for _ in _ALNUM.finditer(other))
    symbols = sum(1 for _ in _SYMBOL.finditer(other))
    return int(round(cjk * CJK_TOKENS_PER_CHAR + alpha * TOKENS_PER_WORD + symbols))


def estimate_messages_tokens(messages: list[dict]) -> int:
    # ~4 tokens of chat-template overhead per message.
    return sum(estimate_tokens(m.get("content", "")) + 4 for m in messages)
