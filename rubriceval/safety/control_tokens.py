"""Chat-template control-token look-alikes in untrusted text, found on the folded view and defused in place.

llama.cpp's server (the embedded judge) and several self-hosted servers tokenize message text with special-token
parsing, so an answer containing `<|im_end|>\n<|im_start|>system` would open a real system turn. Special tokens
are matched as exact strings, so changing one bracket character of every look-alike is enough: `<|im_start|>`
becomes `‹|im_start|›`, `[INST]` becomes `⟦INST⟧`. The replacement characters are ordinary punctuation that NFKC
leaves alone and that no chat template uses, so no tokenizer (with or without NFKC normalisation) turns them back
into a special token, and the judge still reads what the answer said. tests/safety/test_safety_tokenizer.py proves it
with the embedded judge's own tokenizer.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from rubriceval.safety.folding import fold, replace_chars_in_spans

# One bracket character of each look-alike is swapped for one of these (keys are folded characters).
SAFE_BRACKETS = {"<": "‹", ">": "›", "[": "⟦", "]": "⟧"}

# Families of control tokens (matched on the folded, lower-case view). `role` marks tokens that open or close a
# chat turn or a system block; the manipulation detector treats those as judge-directed, the rest (e.g. `<s>`
# strikethrough, `<think>`) are only defused.
_FAMILIES: list[tuple[str, bool, str]] = [
    # ChatML (<|im_start|>), Llama 3 (<|eot_id|>), Phi (<|user|>), DeepSeek (<｜User｜> folds to <|user|>), …
    ("pipe_token", True, r"<\|[^\s<>|]{1,48}\|>"),
    # Llama 2 system block
    ("llama_sys", True, r"<</?sys>>"),
    # Llama 2 / Mistral instruction and tool markers, GLM masks
    ("bracket_token", True, r"\[/?(?:inst|system_prompt|tool_calls|available_tools|tool_results|tool_content"
                            r"|img|img_break|img_end|prefix|middle|suffix|think|gmask|smask)\]"),
    # Gemma turns
    ("gemma_turn", True, r"</?(?:start_of_turn|end_of_turn)>"),
    # Sentence / padding tokens of SentencePiece vocabularies, GLM, Baichuan
    ("sentence_token", False, r"</?(?:s|bos|eos|unk|pad|sop|eop|mask|sep|cls)>|<reserved_\d{1,4}>"),
    # Qwen / Hermes tool tags and reasoning tags
    ("tool_tag", False, r"</?(?:tool_call|tool_response|tools|think|function_call|tool_code)>"),
]
_PATTERN = re.compile("|".join(f"(?P<{name}>{regex})" for name, _role, regex in _FAMILIES))
_ROLE = {name: role for name, role, _regex in _FAMILIES}


@dataclass(frozen=True)
class ControlToken:
    family: str
    start: int          # offsets in the original text
    end: int
    text: str           # as written in the original
    role_boundary: bool  # opens/closes a chat turn or system block


def find_control_tokens(text: str) -> list[ControlToken]:
    view = fold(text)
    found = []
    for match in _PATTERN.finditer(view.text):
        start, end = view.span(*match.span())
        family = match.lastgroup or ""
        found.append(ControlToken(family=family, start=start, end=end, text=text[start:end],
                                  role_boundary=_ROLE[family]))
    return found


def neutralise_control_tokens(text: str) -> str:
    """The text with every control-token look-alike's brackets swapped for safe look-alikes (idempotent)."""
    tokens = find_control_tokens(text)
    return replace_chars_in_spans(text, [(t.start, t.end) for t in tokens], SAFE_BRACKETS)
