"""The rubric's opt-in model screens (`manipulation: {screens: [llm_screen, perplexity]}`), asked for a sample when
the deterministic patterns find nothing: their findings join the policy like the patterns' (cap, audit), each naming
the defence that made it, and their calls count in the verdict's usage."""
from __future__ import annotations

from rubriceval.core.verdict import Usage
from rubriceval.safety.manipulation import ManipulationFinding
from rubriceval.safety.manipulation_policy import ManipulationPolicy, screened_texts


async def screen_sample(sample, policy: ManipulationPolicy, judge) -> tuple[list[ManipulationFinding], Usage]:
    texts = screened_texts(sample, policy) if policy.action != "off" else {}
    findings: list[ManipulationFinding] = []
    usage = Usage()
    if "llm_screen" in policy.screens and judge is not None:
        from rubriceval.scoring.llm_screen import screen_text

        for field, text in texts.items():
            found, used, _ = await screen_text(judge, text, threshold=policy.llm_screen_threshold, field=field)
            findings += found
            usage += used
    if "perplexity" in policy.screens:
        import httpx

        from rubriceval.local.token_surprise import embedded_scorer
        from rubriceval.safety.perplexity import odd_spans

        scorer = embedded_scorer()
        async with httpx.AsyncClient() as client:
            for field, text in texts.items():
                scored = await scorer.score(client, text)
                findings += [f.model_copy(update={"field": field}) for f in odd_spans(text, scored.tokens)]
    return findings, usage
