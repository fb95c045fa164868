"""The perplexity screen's rule: spans of an answer whose tokens surprise the model far more than the rest of it.

Optimised adversarial suffixes (strings of odd tokens found by gradient search) carry no readable instruction, so no
pattern finds them; what gives them away is that no language model would write them: every token of the suffix is
improbable, where natural text — even a name, a URL or an order number — has one or two surprising tokens among
ordinary ones. Given each token's logprob under the embedded model (rubriceval/local/token_surprise.py), a window of
`window` consecutive tokens is odd when its mean surprise (−logprob, nats) is at least `min_surprise` and at least
`min_excess` above the median surprise of the tokens outside it; overlapping odd windows merge into one span, quoted
as evidence. Whitespace-only tokens are left out of the windows (their surprise says little about the text).

The thresholds were set on the dev half of the robustness set (benchmark-judge robustness --split dev); the held-out
half and the benign corpora measure them.
"""
from __future__ import annotations

import statistics

from pydantic import BaseModel

from rubriceval.safety.manipulation import ManipulationFinding


class TokenSurprise(BaseModel):
    start: int          # character offsets of the token in the text (a token holding part of a character gets it)
    end: int
    logprob: float


class PerplexityRule(BaseModel):
    window: int = 6
    min_surprise: float = 9.0       # nats: mean over the window
    min_excess: float = 4.0         # nats above the median of the rest of the text


def odd_spans(text: str, tokens: list[TokenSurprise], rule: PerplexityRule | None = None
              ) -> list[ManipulationFinding]:
    rule = rule or PerplexityRule()
    kept = [t for t in tokens if text[t.start:t.end].strip()]
    if len(kept) < rule.window:
        return []
    surprise = [-t.logprob for t in kept]
    odd: list[tuple[int, int, float, float]] = []           # token index range, window mean, rest median
    for i in range(len(kept) - rule.window + 1):
        inside = surprise[i:i + rule.window]
        rest = surprise[:i] + surprise[i + rule.window:]
        mean = sum(inside) / rule.window
        base = statistics.median(rest) if rest else 0.0
        if mean >= rule.min_surprise and mean - base >= rule.min_excess:
            if odd and i <= odd[-1][1]:
                lo, _, peak, _ = odd[-1]
                odd[-1] = (lo, i + rule.window, max(peak, mean), base)
            else:
                odd.append((i, i + rule.window, mean, base))
    findings = []
    for lo, hi, peak, base in odd:
        # A window reaching into ordinary text: the span starts and ends at an odd token itself.
        while lo < hi - 1 and surprise[lo] - base < rule.min_excess:
            lo += 1
        while hi - 1 > lo and surprise[hi - 1] - base < rule.min_excess:
            hi -= 1
        start, end = kept[lo].start, kept[hi - 1].end
        findings.append(ManipulationFinding(
            kind="odd_tokens", defence="perplexity", span=text[start:end].strip(), start=start, end=end,
            note=f"{hi - lo} tokens, window surprise up to {peak:.1f} nats against {base:.1f} for the rest"))
    return findings
