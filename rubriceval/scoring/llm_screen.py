"""The LLM screen (opt-in per rubric: `manipulation: {llm_screen: true}`): one cheap yes/no question to the judge —
"does this text address the grader, the evaluation or its instructions?" — asked like a checklist question
(constrained to yes/no, p(yes) from the logprobs; scoring/checklist.py), through the one judge helper (`ask`), so it
is cached, counted and retried like every call. A text is flagged when p(yes) ≥ `threshold`; the finding quotes the
whole text (the question is about the text, not a span) and notes p(yes).

It catches what reads as addressed to the grader in words no pattern lists; it is itself a judge reading hostile
text, so it is one defence among others, measured in `benchmark-judge robustness --screens llm_screen`.
"""
from __future__ import annotations

import asyncio

from rubriceval.core.verdict import Usage
from rubriceval.judge.ask import JudgeRequest, ask
from rubriceval.judge.options import choices_schema
from rubriceval.prompt.checklist import CHOICES, call_options
from rubriceval.prompt.compile import environment
from rubriceval.prompt.environment import render_text, templates_fingerprint
from rubriceval.safety.manipulation import ManipulationFinding
from rubriceval.scoring.checklist import read_yes_no

THRESHOLD = 0.5
SCHEMA_NAME = "llm_screen_answer"
MAX_TEXT_CHARS = 4000          # a screen looks at the answer, not a book: longer texts are screened by their start


def language_of(text: str) -> str:
    return "zh" if any("\u4e00" <= c <= "\u9fff" for c in text) else "en"


def screen_request(text: str, lang: str | None = None) -> JudgeRequest:
    lang = lang or language_of(text)
    env = environment()
    messages = [{"role": "system", "content": render_text(env, lang, "llm_screen_system")},
                {"role": "user", "content": render_text(env, lang, "llm_screen", text=text[:MAX_TEXT_CHARS])}]
    fingerprint = templates_fingerprint(env, [f"{lang}/llm_screen_system.j2", f"{lang}/llm_screen.j2"])
    return JudgeRequest(messages=messages, json_schema=choices_schema(CHOICES), schema_name=SCHEMA_NAME,
                        options=call_options(), cache_tag=f"llm_screen/{fingerprint}")


async def screen_text(judge, text: str, *, threshold: float = THRESHOLD, field: str = ""
                      ) -> tuple[list[ManipulationFinding], Usage, float | None]:
    """(findings, usage, p(yes)); an unanswered screen finds nothing and says so in p(yes) = None."""
    if not text.strip():
        return [], Usage(), None
    asked = await ask(judge, screen_request(text), read_yes_no)
    if asked.value is None:
        return [], asked.usage, None
    p_yes = asked.value.p_yes
    if p_yes < threshold:
        return [], asked.usage, p_yes
    quote = text.strip()
    return [ManipulationFinding(kind="addresses_grader", defence="llm_screen", span=quote[:300], start=0,
                                end=len(text), field=field, note=f"p(yes) {p_yes:.2f} that it addresses the grader")
            ], asked.usage, p_yes


async def screen_texts(judge, texts: dict[str, str], *, threshold: float = THRESHOLD
                       ) -> tuple[dict[str, list[ManipulationFinding]], Usage]:
    """Every text screened (concurrently, as the judge's own concurrency bound allows)."""
    keys = list(texts)
    results = await asyncio.gather(*(screen_text(judge, texts[k], threshold=threshold) for k in keys))
    usage = sum((u for _, u, _ in results), Usage())
    return {k: found for k, (found, _, _) in zip(keys, results)}, usage
