"""Look-alikes of the prompt's block delimiters (`<<<字段>>>` … `<<<END 字段>>>`) in untrusted text.

The comparison is on the folded view, so anything that NFKC-folds to `<<<` or `>>>` (full-width `＜＜＜`, small-form
`﹤﹤﹤`, mixes, runs split by zero-width characters) is a delimiter look-alike; each of its angle characters is swapped
for `‹`/`›` and the rest of the text is shown unchanged. Brackets that do not fold to `<`/`>` (`《《《`, `«««`, `〈〈〈`)
cannot form the delimiter and are left as written; an answer using them to fake a block end is still reported by the
manipulation detector (rubriceval/safety/manipulation.py).
"""
from __future__ import annotations

import re

from rubriceval.safety.folding import fold, replace_chars_in_spans

_RUN = re.compile(r"<{3,}|>{3,}")
SAFE_ANGLES = {"<": "‹", ">": "›"}


def find_delimiter_lookalikes(text: str) -> list[tuple[int, int]]:
    """Original [start, end) spans whose folded form is a run of three or more `<` or `>`."""
    view = fold(text)
    return [view.span(*match.span()) for match in _RUN.finditer(view.text)]


def neutralise_delimiters(text: str) -> str:
    return replace_chars_in_spans(text, find_delimiter_lookalikes(text), SAFE_ANGLES)
