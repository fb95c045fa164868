"""The rubric's model screens, asked for a sample when the deterministic patterns find nothing the policy caps:
opt-in `manipulation: {screens: [llm_screen, perplexity]}`, and by default the perplexity screen for a text with a
token-salad span (`suffix_screen`, issue 45). Their findings join the policy like the patterns' (cap, audit, or —
for odd-token spans — mask), each naming the defence that made it, and their calls count in the verdict's usage.

`score_masked` is the policy's mask path (rubriceval/safety/masking.py): the sample scored with the spans cut, and
unmasked, to tell whether they would have raised the score."""
from __future__ import annotations

from collections.abc import Awaitable, Callable

from rubriceval.core.verdict import Usage, Verdict
from rubriceval.data.sample import Sample
from rubriceval.safety.manipulation import ManipulationFinding
from rubriceval.safety.manipulation_policy import ManipulationPolicy, screened_texts


async def screen_sample(sample, policy: ManipulationPolicy, judge, *, asked: bool = True
                        ) -> tuple[list[ManipulationFinding], Usage]:
    """Findings of the screens. `asked`: the rubric's opt-in screens run (False: only the default suffix screen)."""
    texts = screened_texts(sample, policy) if policy.action != "off" else {}
    findings: list[ManipulationFinding] = []
    usage = Usage()
    if asked and "llm_screen" in policy.screens and judge is not None:
        from rubriceval.scoring.llm_screen import screen_text

        for field, text in texts.items():
            found, used, _ = await screen_text(judge, text, threshold=policy.llm_screen_threshold, field=field)
            findings += found
            usage += used
    from rubriceval.safety.perplexity import salad_spans

    read_all = asked and "perplexity" in policy.screens
    perplexed = {f: t for f, t in texts.items() if read_all or (policy.suffix_screen and salad_spans(t))}
    if perplexed:
        found, used = await perplexity_findings(perplexed)
        findings += found
        usage += used
    return findings, usage


async def perplexity_findings(texts: dict[str, str], scorer=None) -> tuple[list[ManipulationFinding], Usage]:
    """Odd-token spans of each text (rubriceval/safety/perplexity.py), widened to the whole suffix; each forced
    generation counted as a call with its tokens (a cached one as a cache hit). A text the model could not score is
    said in a finding only when it has a token-salad span: that span is then masked on its form alone."""
    import httpx

    from rubriceval.safety.perplexity import odd_spans, salad_spans, widened

    if scorer is None:
        from rubriceval.local.token_surprise import embedded_scorer

        scorer = embedded_scorer()
    findings: list[ManipulationFinding] = []
    usage = Usage()
    async with httpx.AsyncClient() as client:
        for field, text in texts.items():
            scored = await scorer.score(client, text)
            if scored.error is not None:
                findings += [ManipulationFinding(kind="odd_tokens", defence="perplexity", field=field,
                                                 span=text[lo:hi].strip(), start=lo, end=hi,
                                                 note=f"not scored by the model ({scored.error[:80]}): masked on its "
                                                      "form")
                             for lo, hi in salad_spans(text)]
                continue
            usage += (Usage(cache_hits=1) if scored.cached else
                      Usage(calls=1, prompt_tokens=scored.prompt_tokens, completion_tokens=scored.completion_tokens))
            findings += [widened(f, text, scored.tokens).model_copy(update={"field": field})
                         for f in odd_spans(text, scored.tokens)]
    return findings, usage


async def score_masked(sample: Sample, findings: list[ManipulationFinding], policy: ManipulationPolicy,
                       score: Callable[[Sample], Awaitable[Verdict]], *, threshold: float | None = None) -> Verdict:
    """The sample scored (`score`) with the findings' spans cut — checks and judge both read that — and as it
    came; the verdict is the masked one, flagged when the unmasked text scored higher (safety/masking.py)."""
    from rubriceval.safety.masking import apply_masking, masked_sample

    masked = await score(masked_sample(sample, findings))
    unmasked = await score(sample)
    return apply_masking(masked, unmasked, findings, policy, threshold=threshold)
