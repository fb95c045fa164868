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
