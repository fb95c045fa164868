"""--dry-run: how many judge calls, tokens and dollars a run will take, and how many calls are already cached.

Counts come from the exact compiled prompts, so the planned call count equals what a run makes when every reply
parses (re-asks after unparseable replies are the only extra calls, at most one per judge item).
"""
from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from rubriceval.data.sample import Sample
from rubriceval.judge.cache import CallCache, judge_call_key
from rubriceval.judge.config import JudgeConfig, default_cache_dir
from rubriceval.judge.tokens import estimate_messages_tokens
from rubriceval.prompt.compile import compile_rubric
from rubriceval.rubric.applies import applies
from rubriceval.rubric.schema import Rubric
from rubriceval.scoring.rubric_scorer import missing_fields

# Typical reply size: feedback of a few sentences plus the score.
EXPECTED_COMPLETION_TOKENS = 120


class ScorerPlan(BaseModel):
    scorer: str
    kind: str
    samples: int = 0
    calls: int = 0
    cached: int = 0
    prompt_tokens: int = 0
    shared: int = 0       # of calls: also used by other requested metrics (charged here once, as the run does)


class CostPlan(BaseModel):
    judge: str
    scorers: list[ScorerPlan] = Field(default_factory=list)
    price_in: float = 0.0
    price_out: float = 0.0

    @property
    def calls(self) -> int:
        return sum(s.calls for s in self.scorers)

    @property
    def cached(self) -> int:
        return sum(s.cached for s in self.scorers)

    @property
    def prompt_tokens(self) -> int:
        return sum(s.prompt_tokens for s in self.scorers)

    @property
    def cost_usd(self) -> float:
        uncached = max(self.calls - self.cached, 0)
        share = uncached / self.calls if self.calls else 0.0
        return (self.prompt_tokens * share * self.price_in + uncached * EXPECTED_COMPLETION_TOKENS * self.price_out) / 1e6

    def format(self) -> str:
        lines = [f"dry run — judge: {self.judge}", f"{'scorer':<28} {'kind':<8}{'samples':>8}{'calls':>8}"
                 f"{'cached':>8}{'prompt tok':>12}"]
        for s in self.scorers:
            shared = f"  ({s.shared} shared)" if s.shared else ""
            lines.append(f"{s.scorer:<28} {s.kind:<8}{s.samples:>8}{s.calls:>8}{s.cached:>8}{s.prompt_tokens:>12}"
                         f"{shared}")
        lines.append(f"total: {self.calls} judge call(s), {self.cached} already cached, {self.calls - self.cached} to "
                     f"pay; ~{self.prompt_tokens} prompt tokens + ~{(self.calls - self.cached) * EXPECTED_COMPLETION_TOKENS}"
                     f" completion tokens; ~${self.cost_usd:.4f}"
                     + ("" if self.price_in or self.price_out else " (no price known for this model: set "
                        "price_in_per_mtok/price_out_per_mtok in the config)"))
        if any(s.shared for s in self.scorers):
            lines.append("shared: a call several requested metrics use is made once and charged to the first of them "
                         "in --metrics order, here and in the run's report")
        return "\n".join(lines)


def plan_cost(samples: list[Sample], rubrics: list[Rubric], metrics: list[str], config: JudgeConfig,
              cache: CallCache | None = None, panel: Any = None) -> CostPlan:
    """panel: a `rubriceval.scoring.panel.PanelConfig` judging the rubrics (one call per judge and judge item)."""
    from rubriceval.backends import effective_config

    config = effective_config(config)
    if cache is None and config.cache:
        cache = CallCache(config.cache_path or default_cache_dir() / "judge_cache.sqlite")
    structured = config.structured == "json_schema"
    price_in, price_out = config.prices()
    plan = CostPlan(judge=config.short_name(), price_in=price_in, price_out=price_out)

    def key(messages, schema, tag):
        return judge_call_key(config, messages, schema, tag)

    # The rubric calls as the runner makes them: once, or n times with self-consistency's seeds and temperature.
    rubric_configs = [config]
    if panel is not None:
        rubric_configs = [effective_config(judge.config) for judge in panel.judges]
    elif config.self_consistency > 1:
        from rubriceval.trust.self_consistency import sampling_config, sampling_seeds

        rubric_configs = [sampling_config(config, config.self_consistency_temperature, seed)
                          for seed in sampling_seeds(config.seed, config.self_consistency)]

    for rubric in rubrics:
        sp = ScorerPlan(scorer=rubric.id, kind="rubric")
        for sample in samples:
            if not applies(rubric, sample):
                continue
            sp.samples += 1
            if missing_fields(rubric, sample):
                continue
            for prompt in compile_rubric(rubric, sample, structured=structured,
                                         feedback_max_chars=config.feedback_max_chars):
                tokens = estimate_messages_tokens(prompt.messages)
                for call_config in rubric_configs:
                    sp.calls += 1
                    sp.prompt_tokens += tokens
                    if cache is not None and judge_call_key(call_config, prompt.messages, prompt.json_schema,
                                                            prompt.cache_tag, prompt.options) in cache:
                        sp.cached += 1
        plan.scorers.append(sp)
    if metrics:
        from standard_metrics import registry

        by_name = {}
        for name in metrics:
            by_name[name] = ScorerPlan(scorer=name, kind="metric", samples=len(samples))
            plan.scorers.append(by_name[name])

        def lookup(request):
            return cache.get(key(request.messages, request.json_schema, request.cache_tag)) if cache else None

        for sample in samples:
            for call in registry.planned_requests(sample, metrics, lookup=lookup):
                # A shared call is charged to the first requested metric that uses it, as at run time.
                users = [c for c in metrics if c in call.consumers]
                sp = by_name[users[0] if users else metrics[0]]
                sp.calls += 1
                sp.shared += len(users) > 1
                sp.prompt_tokens += estimate_messages_tokens(call.messages)
                if cache is not None and key(call.messages, call.json_schema, call.cache_tag) in cache:
                    sp.cached += 1
    return plan
