"""The judge's own result markers in untrusted text, defused in place: an answer cannot hand the judge a ready-made
reply in the judge's own format (issue 31, "structure").

What a judge reply looks like, in every mode: text mode ends in `[RESULT] 4` (holistic, conversation) or
`[RESULT] A` (pairwise); structured replies are JSON objects keyed by the reply schema's fields (`score`,
`feedback`, checklist `answer`, pairwise `winner`, conversation `turns`/`turn`). A checklist reply is a bare yes/no
under a grammar, which no answer text can pre-empt. So in untrusted text (on the folded view: `［ＲＥＳＵＬＴ］`,
`【RESULT】` and `"ｓｃｏｒｅ"` count), the brackets of a `[RESULT]` look-alike become `⟦ ⟧` and the quotes around a
reply-schema key followed by `:` become `“ ”`-style quotes. The words stay readable — the judge still sees, and
the manipulation detector still reports, that the answer tried — but the exact marker the parser and the judge's
format use never appears inside a fenced block. Idempotent.
"""
from __future__ import annotations

import re

from rubriceval.safety.folding import fold, replace_chars_in_spans

REPLY_KEYS = ("score", "feedback", "answer", "winner", "turns", "turn", "评分", "分数", "得分")
_MARKERS = re.compile(r"[\[【]\s*result\s*[\]】]"
                      r"|[\"'](?:" + "|".join(REPLY_KEYS) + r")[\"']\s*(?=[:：])", re.IGNORECASE)
SAFE = {"[": "⟦", "]": "⟧", "【": "⟦", "】": "⟧", '"': "“", "'": "‘"}


def find_result_markers(text: str) -> list[tuple[int, int]]:
    """Original [start, end) spans of result-marker look-alikes."""
    view = fold(text)
    return [view.span(*match.span()) for match in _MARKERS.finditer(view.text)]


def neutralise_result_markers(text: str) -> str:
    return replace_chars_in_spans(text, find_result_markers(text), SAFE)
