"""How the shared metric calls are cut into judge requests, decided here for every caller and every judge.

Three choices, each a trade of calls against figures that stay right (issue 29):

- `extraction`: `split` extracts the answer's statements from a prompt that shows the answer alone and the ground
  truth's from one that shows the ground truth alone (two requests); `merged` asks for both lists in one prompt
  that shows both texts. Merged leaks on a small judge: the 1.5B embedded judge copied answer sentences into the
  ground-truth statements, so a wrong retrieval's answer made its own ground truth "recalled". Split is the
  default for every judge; the ground-truth half depends only on the question and the ground truth, so comparing
  two bot versions on one dataset extracts it once (judge cache).
- `context_calls`: `merged` judges every context (relevance, use, support, attribution) in one request;
  `per_context` asks once per context and combines the verdicts (a statement is supported / attributed when some
  context alone supports it; a claim needing two contexts together is therefore not supported — the Ragas NLI
  prompt, too, asks about one statement against the joined contexts, so this is stricter than Ragas there).
- `support`: `judge` takes the judge's supported / attributed verdicts as they are; `judge_and_text` keeps a "yes"
  only when the contexts' text bears the statement out (grounding.text_supports: its numbers occur there, half its
  words do). For a judge that says "yes" without reading the values (the 1.5B judge attributed 市场部张伟的分机是8311
  to the 教研部张伟 row): its "no" stands, its "yes" needs the text. Ragas's formulas are unchanged; what a verdict
  counts is.

`MetricOptions.extraction` / `.context_calls` / `.support` set each for a run
(`--metric-option context_calls=per_context`); left unset (None), the judge's measured default below applies, else
`DEFAULT`. Measured defaults are keyed by `judge_key` (the endpoint's model; "local" = the embedded judge, however
its model is named); the figures behind each are in docs/benchmarks.md
("RAG metrics on a small judge"), made by `python -m benchmarks.judge.rag_zh`.
"""
from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

Extraction = Literal["split", "merged"]
ContextCalls = Literal["merged", "per_context"]
Support = Literal["judge", "judge_and_text"]


class CallModes(BaseModel):
    model_config = ConfigDict(frozen=True)

    extraction: Extraction = "split"
    context_calls: ContextCalls = "merged"
    support: Support = "judge"

    @property
    def tag(self) -> str:
        """Part of an LLM metric's version: verdicts made with other cuts are never mixed under one version."""
        return f"x{self.extraction}.c{self.context_calls}" + (".stext" if self.support == "judge_and_text" else "")


DEFAULT = CallModes()
EMBEDDED = "local"      # JudgeConfig.model of the embedded judge (base_url unset)
# judge model → the cut measured best for it on benchmarks/judge/data/rag_zh.jsonl (held-out half, docs/
# benchmarks.md "RAG metrics on a small judge"). The embedded 1.5B judge: split extraction, all contexts in one
# request, its "supported" checked against the text — diagnosis 13/13 vs 8/13 for the old merged calls (13 held-out
# samples); 0.81 vs 0.76 without the text check and 0.52 merged on 21 samples before the completeness rule. One
# context per request was measured on 1 sample only and costs a request per context.
MEASURED: dict[str, CallModes] = {EMBEDDED: CallModes(extraction="split", context_calls="merged",
                                                      support="judge_and_text")}


def judge_key(config: Any) -> str | None:
    """The key of a judge's `JudgeConfig` in MEASURED, the one rule for the run and its plan (run/planning.py):
    "local" for the embedded judge (no base_url, whatever its model is named), its model for an endpoint, None
    without a config or for an endpoint whose model was left at the "local" default (not the embedded judge)."""
    if config is None:
        return None
    if getattr(config, "base_url", "") is None:
        return EMBEDDED
    model = getattr(config, "model", None)
    return None if model == EMBEDDED else model


def judge_model_of(judge: Any) -> str | None:
    """`judge_key` of a judge client (JudgeClient, ScriptedJudge, a Batch API replay judge): of its config."""
    return judge_key(getattr(judge, "config", None))


def call_modes(options: Any, judge_model: str | None = None) -> CallModes:
    """The cut a run uses: the options' explicit choices, else this judge's measured default, else DEFAULT."""
    base = MEASURED.get(judge_model or "", DEFAULT)
    return CallModes(extraction=getattr(options, "extraction", None) or base.extraction,
                     context_calls=getattr(options, "context_calls", None) or base.context_calls,
                     support=getattr(options, "support", None) or base.support)
