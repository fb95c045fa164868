"""The defences `benchmark-judge robustness` measures, each as a screen over the texts: which it flags, with the
quoted spans, and what screening cost (calls, tokens).

* `patterns` — the deterministic detector (rubriceval/safety/manipulation.py), free;
* `perplexity` — odd-token spans by the embedded model's per-token surprise (rubriceval/safety/perplexity.py);
* `llm_screen` — one yes/no question to the judge, "does this text address the grader?", p(yes)
  (rubriceval/safety/llm_screen.py).

Model screens are slow on a shared CPU: they screen every attacked and clean text, and at most `benign_per_corpus`
texts of each benign corpus (the first ones, in the corpus's order), so their false-positive rates rest on fewer
texts than the patterns'; the result says how many each screened.
"""
from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable

from pydantic import BaseModel, Field

from rubriceval.core.verdict import Usage
from rubriceval.safety.manipulation import ManipulationFinding, detect_manipulation

# texts → (findings per text; a text left out could not be screened, its reason in `failed`), usage, failed
Finder = Callable[[dict[str, str]], Awaitable[tuple[dict[str, list[ManipulationFinding]], Usage]]]


class ScreenRun(BaseModel):
    name: str
    spans: dict[str, list[str]] = Field(default_factory=dict)    # text id → quoted spans ([] = screened, clean)
    usage: Usage = Field(default_factory=Usage)
    failed: dict[str, str] = Field(default_factory=dict)         # text id → why it could not be screened

    def flagged(self, key: str) -> bool:
        return bool(self.spans.get(key))

    def screened(self, key: str) -> bool:
        return key in self.spans

    @property
    def n_screened(self) -> int:
        return len(self.spans)


class Screen(BaseModel):
    """A named defence: `find` maps the texts it is given to findings; `benign_per_corpus` bounds its benign texts."""

    model_config = {"arbitrary_types_allowed": True}

    name: str
    find: Finder
    benign_per_corpus: int | None = None        # None: every text

    def chosen(self, texts: dict[str, str]) -> dict[str, str]:
        if self.benign_per_corpus is None:
            return texts
        taken: dict[str, int] = {}
        out = {}
        for key, text in texts.items():
            if key.startswith("benign:"):
                corpus = key.split(":")[1]
                if taken.get(corpus, 0) >= self.benign_per_corpus:
                    continue
                taken[corpus] = taken.get(corpus, 0) + 1
            out[key] = text
        return out


def pattern_screen() -> Screen:
    async def find(texts: dict[str, str]) -> tuple[dict[str, list[ManipulationFinding]], Usage]:
        return {key: detect_manipulation(text) for key, text in texts.items()}, Usage()
    return Screen(name="patterns", find=find)


async def run_screens(screens: list[Screen], texts: dict[str, str], *, progress: bool) -> dict[str, ScreenRun]:
    runs = {}
    for screen in screens:
        chosen = screen.chosen(texts)
        if progress and screen.benign_per_corpus is not None:
            print(f"  screening {len(chosen)} texts with {screen.name}", file=sys.stderr)
        findings, usage = await screen.find(chosen)
        failed = {key: str(found) for key, found in findings.items() if isinstance(found, str)}
        runs[screen.name] = ScreenRun(name=screen.name, usage=usage, failed=failed,
                                      spans={key: [f.span for f in found] for key, found in findings.items()
                                             if not isinstance(found, str)})
        if failed and progress:
            print(f"  {screen.name}: {len(failed)} texts could not be screened, e.g. {next(iter(failed.values()))}",
                  file=sys.stderr)
    return runs


def perplexity_screen(benign_per_corpus: int | None = 12, rule=None, scorer=None) -> Screen:
    """Odd-token spans by the embedded model's per-token surprise (one forced generation per text, cached)."""
    import httpx

    from rubriceval.safety.perplexity import odd_spans

    async def find(texts: dict[str, str]) -> tuple[dict[str, list[ManipulationFinding]], Usage]:
        from rubriceval.local.token_surprise import embedded_scorer

        chosen = scorer or embedded_scorer()
        async with httpx.AsyncClient() as client:
            keys = list(texts)
            scored = await asyncio.gather(*(chosen.score(client, texts[k]) for k in keys))
        usage = Usage(calls=sum(not s.cached for s in scored), cache_hits=sum(s.cached for s in scored),
                      prompt_tokens=sum(s.prompt_tokens for s in scored),
                      completion_tokens=sum(s.completion_tokens for s in scored))
        return {k: s.error if s.error else odd_spans(texts[k], s.tokens, rule) for k, s in zip(keys, scored)}, usage
    return Screen(name="perplexity", find=find, benign_per_corpus=benign_per_corpus)


def llm_screen(config, benign_per_corpus: int | None = 12) -> Screen:
    """The judge's yes/no screen, "does this text address the grader?" (one cached call per text)."""
    async def find(texts: dict[str, str]) -> tuple[dict[str, list[ManipulationFinding]], Usage]:
        from rubriceval.local.backends import make_judge
        from rubriceval.scoring.llm_screen import screen_texts

        judge = make_judge(config, announce=False)
        try:
            return await screen_texts(judge, texts)
        finally:
            await judge.close()
    return Screen(name="llm_screen", find=find, benign_per_corpus=benign_per_corpus)
