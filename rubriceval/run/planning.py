"""--dry-run: how many judge calls, tokens and dollars a run will take, and how many calls are already cached.

Counts come from the exact compiled prompts, so the planned call count equals what a run makes when every reply
parses (re-asks after unparseable replies are the only extra calls, at most one per judge item).

`planned_judge_calls` yields each of those calls (sample, scorer, item, the call's own settings, the exact request);
the dry run counts them and the Batch API mode (`rubriceval/batch/`) writes them into request files.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from rubriceval.data.sample import Sample
from rubriceval.judge.cache import CallCache, judge_call_key
from rubriceval.judge.config import JudgeConfig, default_cache_dir
from rubriceval.judge.options import CallOptions
from rubriceval.judge.pricing import JudgePrices, SideBySide, side_by_side
from rubriceval.judge.tokens import estimate_messages_tokens
from rubriceval.prompt.rubric_prompts import compile_rubric
from rubriceval.rubric.applies import applies
from rubriceval.rubric.schema import Rubric
from rubriceval.safety.manipulation_policy import MASKED_KINDS, decides_without_judge, scan_sample, screened_texts
from rubriceval.safety.masking import masked_sample
from rubriceval.safety.redaction import judge_view
from rubriceval.scoring.rubric_scorer import missing_fields
from rubriceval.scoring.score_probs import holistic_options
from rubriceval.scoring.turn_questions import idle_question_checks, plan_turn_questions, rubric_knowledge
from rubriceval.standard_metrics.scope import metrics_for

# Typical reply size: feedback of a few sentences plus the score. A constrained answer (a checklist question's
# yes/no) is sized from its choices instead (`expected_completion_tokens`).
EXPECTED_COMPLETION_TOKENS = 120


class ScorerPlan(BaseModel):
    scorer: str
    kind: str
    samples: int = 0
    calls: int = 0
    cached: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0      # expected, of the calls still to pay
    shared: int = 0       # of calls: also used by other requested metrics (charged here once, as the run does)


class PlannedJudgeCall(BaseModel):
    """One judge call a run makes: for which sample, scorer and item, with which settings, and the exact request."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    sample_id: str
    scorer: str
    kind: str                           # rubric | metric
    item: str                           # the rubric's judge item, or the metric call's kind
    config: JudgeConfig                 # this call's settings (self-consistency: its seed; a panel: its judge's)
    messages: list[dict[str, str]]
    json_schema: dict | None = None
    schema_name: str = "verdict"
    cache_tag: str = ""
    options: CallOptions | None = None
    exact: bool = True                  # False: rendered before the first step's answer is known (stand-ins)
    users: int = 1                      # requested metrics sharing this call

    def key(self) -> str:
        """The judge-cache key of this call (the key the online call has)."""
        return judge_call_key(self.config, self.messages, self.json_schema, self.cache_tag, self.options)

    def expected_completion_tokens(self) -> int:
        """A constrained answer's size from its choices (a checklist yes/no: ~2 tokens), else a typical verdict."""
        if self.options is not None and self.options.choices:
            from rubriceval.prompt.checklist import choice_answer_tokens

            return choice_answer_tokens(self.options, self.config.choice_constraint)
        return EXPECTED_COMPLETION_TOKENS


class JudgeTokens(BaseModel):
    """One judge's calls and the tokens still to pay (of the calls not cached), priced at its own prices."""

    judge: str                          # a panel judge's name; "" for the run's judge (a panel run: the metrics)
    model: str
    prices: JudgePrices
    calls: int = 0
    prompt_tokens: int = 0              # of the calls not cached
    completion_tokens: int = 0          # expected, of the calls not cached


class CostPlan(BaseModel):
    judge: str
    scorers: list[ScorerPlan] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)      # rubrics run in another judge mode than asked, and why
    # The run's judge, or each panel judge and the run's judge (for the metrics): priced each at its own prices.
    judges: list[JudgeTokens] = Field(default_factory=list)

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
    def completion_tokens(self) -> int:
        return sum(s.completion_tokens for s in self.scorers)

    @property
    def priced(self) -> SideBySide | None:
        """The tokens still to pay, online and through the Batch API (judge/pricing.py); None when unpriced."""
        return side_by_side((j.prices, j) for j in self.judges)

    @property
    def cost_usd(self) -> float:
        return (self.priced or SideBySide()).online_usd

    @property
    def batch_cost_usd(self) -> float:
        return (self.priced or SideBySide()).batch_usd

    def format(self) -> str:
        lines = [f"dry run — judge: {self.judge}", f"{'scorer':<28} {'kind':<8}{'samples':>8}{'calls':>8}"
                 f"{'cached':>8}{'prompt tok':>12}"]
        for s in self.scorers:
            shared = f"  ({s.shared} shared)" if s.shared else ""
            lines.append(f"{s.scorer:<28} {s.kind:<8}{s.samples:>8}{s.calls:>8}{s.cached:>8}{s.prompt_tokens:>12}"
                         f"{shared}")
        priced = self.priced
        lines.append(f"total: {self.calls} judge call(s), {self.cached} already cached, {self.calls - self.cached} to "
                     f"pay; ~{self.prompt_tokens} prompt tokens + ~{self.completion_tokens}"
                     f" completion tokens; ~${self.cost_usd:.4f}"
                     + ("" if priced is not None else " (no price known for this model: set "
                        "price_in_per_mtok/price_out_per_mtok in the config)"))
        if priced is not None:
            lines.append(f"cost: online ~${priced.online_usd:.4f} | batch API (--batch) ~${priced.batch_usd:.4f}")
        if len(self.judges) > 1:                # a panel: each judge's share at its own prices
            for j in (j for j in self.judges if j.calls):
                own = side_by_side([(j.prices, j)]) or SideBySide()
                lines.append(f"  judge {j.judge or '(judge:, for the metrics)'} ({j.model}): {j.calls} call(s), "
                             f"~{j.prompt_tokens} + ~{j.completion_tokens} tokens to pay; online "
                             f"~${own.online_usd:.4f} | batch ~${own.batch_usd:.4f}")
        if any(s.shared for s in self.scorers):
            lines.append("shared: a call several requested metrics use is made once and charged to the first of them "
                         "in --metrics order, here and in the run's report")
        return "\n".join(lines + self.notes)


def plan_cost(samples: list[Sample], rubrics: list[Rubric], metrics: list[str], config: JudgeConfig,
              cache: CallCache | None = None, panel: Any = None, metric_options: Any = None,
              scorecards: Any = ()) -> CostPlan:
    """panel: a `rubriceval.scoring.panel.PanelConfig` judging the rubrics (one call per judge and judge item);
    metric_options: the run's `MetricOptions` (None: defaults); scorecards: the run's scorecards (their questions,
    asked by the run's judge)."""
    from rubriceval.local.backends import effective_config

    config = effective_config(config)
    if cache is None and config.cache:
        cache = CallCache(config.cache_path or default_cache_dir() / "judge_cache.sqlite")
    plan = CostPlan(judge=config.short_name())

    rubric_configs = _rubric_configs(config, panel)
    by_config = _judge_tokens(plan, config, rubric_configs, panel)

    def count(sp: ScorerPlan, call: PlannedJudgeCall) -> None:
        sp.calls += 1
        sp.shared += call.users > 1
        tokens = estimate_messages_tokens(call.messages)
        sp.prompt_tokens += tokens
        judge = by_config[id(call.config)]
        judge.calls += 1
        if cache is not None and call.key() in cache:
            sp.cached += 1
        else:
            sp.completion_tokens += call.expected_completion_tokens()
            judge.prompt_tokens += tokens
            judge.completion_tokens += call.expected_completion_tokens()

    rubrics, plan.notes = _in_run_modes(rubrics, config, rubric_configs)
    for rubric in rubrics:
        sp = ScorerPlan(scorer=rubric.id, kind="rubric")
        for sample in samples:
            if applies(rubric, sample):
                sp.samples += 1
                for call in _rubric_calls(rubric, sample, config, rubric_configs):
                    count(sp, call)
        plan.scorers.append(sp)
    for card in scorecards:
        sp = ScorerPlan(scorer=card.scorer, kind="scorecard")
        for call in _scorecard_calls(card, samples, config, sp):
            count(sp, call)
        plan.scorers.append(sp)
    if metrics:
        by_name = {}
        for name in metrics:
            by_name[name] = ScorerPlan(scorer=name, kind="metric",
                                       samples=sum(1 for s in samples if metrics_for(s, [name])))
            plan.scorers.append(by_name[name])
        lookup = _cache_lookup(config, cache)
        for sample in samples:
            for call in _metric_calls(sample, metrics, config, lookup, metric_options):
                count(by_name[call.scorer], call)
    return plan


def planned_judge_calls(samples: list[Sample], rubrics: list[Rubric], metrics: list[str], config: JudgeConfig, *,
                        cache: CallCache | None = None, panel: Any = None,
                        metric_options: Any = None, scorecards: Any = ()) -> Iterator[PlannedJudgeCall]:
    """Every judge call the run makes when every reply parses, as `plan_cost` counts them: each rubric's calls on
    the samples it applies to, each scorecard's (its questions and its checks' per-turn questions, asked by the run's
    judge), then each sample's metric calls (second steps exact only when `cache` holds the first step's answer,
    else `exact=False`)."""
    from rubriceval.local.backends import effective_config

    config = effective_config(config)
    rubric_configs = _rubric_configs(config, panel)
    rubrics, _ = _in_run_modes(rubrics, config, rubric_configs)
    for rubric in rubrics:
        for sample in samples:
            if applies(rubric, sample):
                yield from _rubric_calls(rubric, sample, config, rubric_configs)
    for card in scorecards:
        yield from _scorecard_calls(card, samples, config, ScorerPlan(scorer=card.scorer, kind="scorecard"))
    if metrics:
        lookup = _cache_lookup(config, cache)
        for sample in samples:
            yield from _metric_calls(sample, metrics, config, lookup, metric_options)


def _in_run_modes(rubrics: list[Rubric], config: JudgeConfig, rubric_configs: list[JudgeConfig]
                  ) -> tuple[list[Rubric], list[str]]:
    """The rubrics in the judge mode the run gives them with these judges (`--judge-mode`, fitted weights only for
    the judge they were fitted for), and the notes on those that fall back, as the run prints them: the one rule,
    rubriceval/scoring/judge_mode.py."""
    from rubriceval.scoring.judge_mode import with_judge_mode

    return with_judge_mode(rubrics, config.judge_mode, judge_models=[c.model for c in rubric_configs])


def _judge_tokens(plan: CostPlan, config: JudgeConfig, rubric_configs: list[JudgeConfig], panel: Any
                  ) -> dict[int, JudgeTokens]:
    """A JudgeTokens per judge in `plan.judges`, keyed by the id of each config the planned calls carry: a panel's
    judges (`rubric_configs`) and the run's judge (`config`, for the metrics) apart; without a panel, one entry for
    the run's judge (its self-consistency calls differ only by seed and temperature, not by price)."""
    run_judge = JudgeTokens(judge="", model=config.model, prices=JudgePrices.of(config))
    by_config = {id(config): run_judge}
    if panel is None:
        by_config.update({id(c): run_judge for c in rubric_configs})
        plan.judges = [run_judge]
        return by_config
    for judge, judge_config in zip(panel.judges, rubric_configs):
        by_config[id(judge_config)] = JudgeTokens(judge=judge.name, model=judge_config.model,
                                                  prices=JudgePrices.of(judge_config))
    plan.judges = [*(by_config[id(c)] for c in rubric_configs), run_judge]
    return by_config


def _rubric_configs(config: JudgeConfig, panel: Any) -> list[JudgeConfig]:
    """The rubric calls as the runner makes them: once, n times with self-consistency's seeds and temperature, or
    once per judge of a panel."""
    from rubriceval.local.backends import effective_config

    if panel is not None:
        return [effective_config(judge.config) for judge in panel.judges]
    if config.self_consistency > 1:
        from rubriceval.trust.self_consistency import sampling_config, sampling_seeds

        return [sampling_config(config, config.self_consistency_temperature, seed)
                for seed in sampling_seeds(config.seed, config.self_consistency)]
    return [config]


def _screen_calls(rubric: Rubric, sample: Sample, rubric_configs: list[JudgeConfig]) -> Iterator[PlannedJudgeCall]:
    """A rubric's opt-in LLM screen: one yes/no call per screened field text, asked when the patterns find nothing
    (scoring/manipulation_screens.py); planned as asked, though a flag may then skip the judge's own calls."""
    policy = rubric.manipulation
    if "llm_screen" not in policy.screens or policy.action == "off" or scan_sample(sample, policy):
        return
    from rubriceval.scoring.llm_screen import screen_request

    for field, text in screened_texts(sample, policy).items():
        request = screen_request(text)
        for call_config in rubric_configs:
            yield PlannedJudgeCall(sample_id=sample.id, scorer=rubric.id, kind="rubric", item=f"llm_screen.{field}",
                                   config=call_config, messages=request.messages, json_schema=request.json_schema,
                                   schema_name=request.schema_name, cache_tag=request.cache_tag,
                                   options=request.options)


def _rubric_calls(rubric: Rubric, sample: Sample, config: JudgeConfig, rubric_configs: list[JudgeConfig]
                  ) -> Iterator[PlannedJudgeCall]:
    if missing_fields(rubric, sample) or decides_without_judge(sample, rubric.manipulation):
        return
    yield from _screen_calls(rubric, sample, rubric_configs)
    # Self-praise is masked for the judge, and the unmasked text judged too (safety/masking.py): both planned
    policy = rubric.manipulation
    masked = ([f for f in scan_sample(sample, policy) if f.kind in MASKED_KINDS]
              if policy.action != "off" and not rubric.is_conversation else [])
    for one in ([masked_sample(sample, masked)] if masked else []) + [sample]:
        one = judge_view(one, config.redact)[0]       # what the judge reads, as the scorer sends it
        for prompt in compile_rubric(rubric, one, structured=config.structured == "json_schema",
                                     feedback_max_chars=config.feedback_max_chars):
            for call_config in rubric_configs:
                yield PlannedJudgeCall(sample_id=sample.id, scorer=rubric.id, kind="rubric", item=prompt.item_id,
                                       config=call_config, messages=prompt.messages,
                                       json_schema=prompt.json_schema, schema_name=prompt.schema_name,
                                       cache_tag=prompt.cache_tag,
                                       options=prompt.options or holistic_options(rubric, call_config))
    sample = judge_view(sample, config.redact)[0]
    # The checks' per-turn questions: every one that may be asked (an early stop only asks fewer).
    idle = idle_question_checks(rubric)
    for prompt in plan_turn_questions([i for i in rubric.check_items if i.id not in idle], sample.conversation,
                                      rubric.language, rubric_knowledge(rubric)):
        for call_config in rubric_configs:
            yield PlannedJudgeCall(sample_id=sample.id, scorer=rubric.id, kind="rubric", item=prompt.item_id,
                                   config=call_config, messages=prompt.messages, json_schema=prompt.json_schema,
                                   schema_name=prompt.schema_name, cache_tag=prompt.cache_tag, options=prompt.options)


def _scorecard_calls(card: Any, samples: list[Sample], config: JudgeConfig, sp: ScorerPlan
                     ) -> Iterator[PlannedJudgeCall]:
    """A scorecard's questions on each sample it scores (rubriceval/scorecard/plan.py); counts those samples in sp."""
    from rubriceval.scorecard.plan import planned_questions

    for sample in samples:
        prompts = planned_questions(card, sample, config.redact)
        if prompts is None:
            continue
        sp.samples += 1
        for prompt in prompts:
            yield PlannedJudgeCall(sample_id=sample.id, scorer=card.scorer, kind="scorecard", item=prompt.item_id,
                                   config=config, messages=prompt.messages, json_schema=prompt.json_schema,
                                   schema_name=prompt.schema_name, cache_tag=prompt.cache_tag, options=prompt.options)


def _cache_lookup(config: JudgeConfig, cache: CallCache | None) -> Callable[[Any], dict | None]:
    def lookup(request):
        return cache.get(judge_call_key(config, request.messages, request.json_schema, request.cache_tag)) \
            if cache else None
    return lookup


def _metric_calls(sample: Sample, metrics: list[str], config: JudgeConfig, lookup: Callable[[Any], dict | None],
                  options: Any = None) -> Iterator[PlannedJudgeCall]:
    from rubriceval.standard_metrics import registry
    from rubriceval.standard_metrics.call_modes import judge_key

    metrics = metrics_for(sample, metrics)          # the metrics that score this kind of sample
    if not metrics:
        return
    sample = judge_view(sample, config.redact)[0]
    # Cut as the run's judge client cuts them (call_modes.judge_key: the embedded judge by any model name).
    for call in registry.planned_requests(sample, metrics, options, lookup=lookup, judge_model=judge_key(config)):
        # A shared call is charged to the first requested metric that uses it, as at run time.
        users = [c for c in metrics if c in call.consumers]
        yield PlannedJudgeCall(sample_id=sample.id, scorer=users[0] if users else metrics[0], kind="metric",
                               item=call.kind, config=config, messages=call.messages, json_schema=call.json_schema,
                               schema_name=call.schema_name, cache_tag=call.cache_tag, exact=call.exact,
                               users=len(users))
