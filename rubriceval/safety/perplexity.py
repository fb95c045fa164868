"""The perplexity screen's rule: spans of an answer whose tokens surprise the model far more than the rest of it.

Optimised adversarial suffixes (strings of odd tokens found by gradient search) carry no readable instruction, so no
pattern finds them; what gives them away is that no language model would write them: every token of the suffix is
improbable, where natural text — even a name, a URL or an order number — has one or two surprising tokens among
ordinary ones. Given each token's logprob under the embedded model (rubriceval/local/token_surprise.py), a window of
`window` consecutive tokens is odd when its mean surprise (−logprob, nats) is at least `min_surprise` and at least
`min_excess` above the text's baseline — the `baseline_quantile` quantile of all its tokens' surprise, which stays
ordinary even when the suffix is most of the text; overlapping odd windows merge into one span, quoted as evidence.
Whitespace-only tokens are left out of the windows (their surprise says little about the text). A text shorter
than a window is never flagged.

How the numbers were set (issue 31, T4): on the dev half, once, raw surprises kept — 12 odd-token suffixes
(`--split dev --families adversarial_suffix`: 31–54 tokens, the answer 5–14 of them), 12 clean answers and 44
benign texts (12 benign-set, 12 demo, 10 SummEval, 10 HaluEval). The highest 10-token window of every suffixed text
was 11.6–14.2 nats, of any clean or benign text at most 8.9 (a SummEval summary of lower-cased names); 8-token
windows left a smaller gap (11.8 vs 10.3), 6-token ones too (11.8 vs 10.0). 10.5 sits in the gap; the 10 % baseline
of the suffixed texts was 0.6–5.0 nats, so 5 above it keeps every suffix (6 would too, 7 lost one) and still
refuses a text that is odd throughout. The price of 10 tokens: a shorter suffix goes unseen. The first rule (6
tokens, 9 nats, 4 above the median of the rest, set on 4 dev texts) missed suffixes longer than their answer: the
rest was then mostly suffix. The held-out half and the benign corpora measure these numbers (docs/benchmarks.md,
robustness).
"""
from __future__ import annotations

import re

from pydantic import BaseModel

from rubriceval.safety.manipulation import ManipulationFinding


class TokenSurprise(BaseModel):
    start: int          # character offsets of the token in the text (a token holding part of a character gets it)
    end: int
    logprob: float


class PerplexityRule(BaseModel):
    window: int = 10
    min_surprise: float = 10.5      # nats: mean over the window
    min_excess: float = 5.0         # nats above the text's baseline
    baseline_quantile: float = 0.1  # the baseline: this quantile of the surprise of all the text's tokens


def baseline(surprise: list[float], quantile: float) -> float:
    """The text's ordinary surprise: a low quantile of all its tokens, which a suffix longer than the answer it
    follows does not reach (the median of the rest of the text did: the rest was then mostly suffix)."""
    ranked = sorted(surprise)
    return ranked[min(len(ranked) - 1, int(quantile * len(ranked)))]


def odd_spans(text: str, tokens: list[TokenSurprise], rule: PerplexityRule | None = None
              ) -> list[ManipulationFinding]:
    rule = rule or PerplexityRule()
    kept = [t for t in tokens if text[t.start:t.end].strip()]
    if len(kept) < rule.window:
        return []
    surprise = [-t.logprob for t in kept]
    base = baseline(surprise, rule.baseline_quantile)
    odd: list[tuple[int, int, float]] = []                  # token index range, peak window mean
    for i in range(len(kept) - rule.window + 1):
        mean = sum(surprise[i:i + rule.window]) / rule.window
        if mean >= rule.min_surprise and mean - base >= rule.min_excess:
            if odd and i <= odd[-1][1]:
                lo, _, peak = odd[-1]
                odd[-1] = (lo, i + rule.window, max(peak, mean))
            else:
                odd.append((i, i + rule.window, mean))
    findings = []
    for lo, hi, peak in odd:
        # A window reaching into the answer: the span starts and ends at a token as surprising as a window must be
        # (the baseline is low, so "above the baseline" would still take in the answer's last words).
        while lo < hi - 1 and surprise[lo] < rule.min_surprise:
            lo += 1
        while hi - 1 > lo and surprise[hi - 1] < rule.min_surprise:
            hi -= 1
        start, end = kept[lo].start, kept[hi - 1].end
        findings.append(ManipulationFinding(
            kind="odd_tokens", defence="perplexity", span=text[start:end].strip(), start=start, end=end,
            note=f"{hi - lo} tokens, window surprise up to {peak:.1f} nats against a baseline of {base:.1f}"))
    return findings


# Which answers the perplexity screen reads when the rubric has not asked for it (issue 45): a generation per answer
# is too dear for every answer, so the default policy screens only spans that look like token salad — a run of
# whitespace-separated chunks most of which carry code punctuation, a word glued inside ("similarlyNow"), or letters
# and CJK in one chunk ("五分lijah") — and the perplexity rule above decides whether they are odd. Prose, order
# numbers, a URL or a menu path ("Settings → Billing") make no such run.
_ODD_CHUNK = re.compile(r"[{}\[\]()<>$\\@*=%|^~`_]|[a-z][A-Z]|[A-Za-z][\u4e00-\u9fff]|"
                        r"[\u4e00-\u9fff][A-Za-z]|[A-Z]{2,}[a-z]{2,}|[^\w\s.,!?;:'\"\-–—→/&+#()\[\]]")
_CJK = re.compile(r"[\u4e00-\u9fff]")
SALAD_WINDOW = 6        # chunks looked at together
SALAD_MIN_ODD = 3       # of them odd


def _chunk_is_odd(chunk: str) -> bool:
    if _CJK.search(chunk) and not re.search(r"[A-Za-z{}\[\]<>$\\@*=%|^~`_]", chunk):
        return False                    # Chinese prose (its punctuation is not code)
    return bool(_ODD_CHUNK.search(chunk))


def salad_spans(text: str) -> list[tuple[int, int]]:
    """[start, end) of each run of token-salad chunks in `text` (at least SALAD_MIN_ODD odd chunks among any
    SALAD_WINDOW consecutive ones); the run spans from its first odd chunk to its last."""
    chunks = [(m.start(), m.end(), _chunk_is_odd(m.group())) for m in re.finditer(r"\S+", text)]
    hot = [False] * len(chunks)
    for i in range(len(chunks)):
        window = chunks[i:i + SALAD_WINDOW]
        if sum(odd for _, _, odd in window) >= SALAD_MIN_ODD:
            for j, (_, _, odd) in enumerate(window):
                hot[i + j] = hot[i + j] or odd
    spans: list[tuple[int, int]] = []
    last = -10
    for i, (start, end, _) in enumerate(chunks):
        if not hot[i]:
            continue
        if spans and i - last <= SALAD_WINDOW - SALAD_MIN_ODD + 1:
            spans[-1] = (spans[-1][0], end)
        else:
            spans.append((start, end))
        last = i
    return spans


EDGE_SURPRISE = 6.0     # nats: a chunk next to an odd span this surprising on average belongs to it


def widened(finding: ManipulationFinding, text: str, tokens: list[TokenSurprise]) -> ManipulationFinding:
    """An odd-token finding stretched, chunk by chunk, over neighbouring chunks that look like salad or whose
    tokens are as a rule surprising (a suffix's ordinary-looking words: "Jerusalem", "please? revert"), so the
    masked answer keeps none of it; a suffix's last one or two chunks are taken with it."""
    chunks = [(m.start(), m.end()) for m in re.finditer(r"\S+", text)]

    def belongs(lo: int, hi: int) -> bool:
        inside = [-t.logprob for t in tokens if lo <= t.start < hi and text[t.start:t.end].strip()]
        return _chunk_is_odd(text[lo:hi]) or bool(inside and sum(inside) / len(inside) >= EDGE_SURPRISE)

    first = next((i for i, (lo, hi) in enumerate(chunks) if hi > finding.start), None)
    last = next((i for i in range(len(chunks) - 1, -1, -1) if chunks[i][0] < finding.end), None)
    if first is None or last is None:
        return finding
    while first > 0 and belongs(*chunks[first - 1]):
        first -= 1
    while last < len(chunks) - 1 and belongs(*chunks[last + 1]):
        last += 1
    if len(chunks) - 1 - last <= 2:
        last = len(chunks) - 1
    start, end = min(chunks[first][0], finding.start), max(chunks[last][1], finding.end)
    return finding.model_copy(update={"start": start, "end": end, "span": text[start:end].strip()})
