"""Who judges what in a batch run, and where their requests go.

A run without a panel has one judge (`judge:`), which makes every call. A panel's run has the panel's judges for
the rubrics (each with its own base_url, model, key and price) and the run's judge for the standard metrics. Each
judge is named: a panel judge by its name, the run's judge by `RUN_JUDGE` ("").

Requests go to **endpoints**: the judges that share base_url, model and API key (`api_key_env`) share one set of
request files, uploads and batches. Why share: it is one account at one provider, and OpenAI's Batch API (and
DashScope's, and `vllm run-batch`, which serves one model) takes one model per input file — so judges that differ
only in seed or temperature can share files, and judges of another model or provider never do. Each endpoint's
files are uploaded with its key, polled and downloaded there, and its replies are priced at its own batch price.
"""
from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from rubriceval.batch.files import safe_part
from rubriceval.common.errors import RubricEvalError
from rubriceval.judge.config import JudgeConfig
from rubriceval.scoring.panel import cache_identity
from rubriceval.scoring.panel_votes import RUN_JUDGE


class Endpoint(BaseModel):
    """One place requests are sent: a provider account and model; `judges` are the judge names it serves."""

    name: str                      # "" for a run without panel; else a file-name-safe label of its judges
    config: JudgeConfig            # base_url, api key, limits, prices: those of its first judge
    judges: list[str] = Field(default_factory=list)

    def label(self) -> str:
        return self.name or "judge"


class RunJudges:
    """The judges of a batch run (the run's judge and, for a panel's run, the panel's), their configs and
    endpoints. `panel`: a `rubriceval.scoring.panel.PanelConfig`, or None."""

    def __init__(self, config: JudgeConfig, panel: Any = None, *, needs_run_judge: bool = True):
        from rubriceval.local.backends import effective_config

        self.panel = panel
        self.min_scored = panel.required if panel is not None else None
        self.configs: dict[str, JudgeConfig] = {}
        groups: dict[tuple, list[str]] = {}
        members: list[tuple[str, JudgeConfig, str | None]] = []
        if panel is not None:
            members += [(judge.name, effective_config(judge.resolved_config()), judge.api_key_env)
                        for judge in panel.judges]
        if panel is None or needs_run_judge:
            members.append((RUN_JUDGE, effective_config(config), None))
        for name, judge_config, key_env in members:
            self.configs[name] = judge_config
            groups.setdefault((judge_config.base_url, judge_config.model, key_env), []).append(name)
        self.endpoints: list[Endpoint] = []
        self._endpoint_of: dict[str, str] = {}
        for names in groups.values():
            endpoint_name = "" if panel is None else "+".join(safe_part(n or "judge") for n in names)
            taken = {e.name for e in self.endpoints}
            if endpoint_name in taken:           # judges 'a+b' and 'a_b' both read a_b in a file name
                endpoint_name = next(f"{endpoint_name}-{n}" for n in range(2, len(taken) + 3)
                                     if f"{endpoint_name}-{n}" not in taken)
            self.endpoints.append(Endpoint(name=endpoint_name, config=self.configs[names[0]], judges=names))
            self._endpoint_of.update({n: endpoint_name for n in names})
        self._by_identity = {cache_identity(self.configs[judge.name]): judge.name
                             for judge in (panel.judges if panel is not None else [])}

    @property
    def is_panel(self) -> bool:
        return self.panel is not None

    def id_tag(self, judge: str) -> str:
        """What a custom_id says of a panel judge: its place in the panel and its name (`1-qwen`); "" for the run's
        judge."""
        if judge == RUN_JUDGE:
            return ""
        place = next(i for i, j in enumerate(self.panel.judges, start=1) if j.name == judge)
        return f"{place}-{safe_part(judge)}"

    def endpoint_of(self, judge: str) -> str:
        return self._endpoint_of[judge]

    def endpoint(self, name: str) -> Endpoint:
        return next(e for e in self.endpoints if e.name == name)

    def judge_of(self, kind: str, config: JudgeConfig) -> str:
        """The judge making a planned call: a panel judge for a panel's rubric call, else the run's judge."""
        if self.panel is None or kind != "rubric":
            return RUN_JUDGE
        return self._by_identity[cache_identity(config)]


def judges_of_run(config: JudgeConfig, stored_panel: dict, metrics: list[str], panel: Any = None,
                  scorecards: Any = ()) -> RunJudges:
    """A stored run's judges: `panel` as given (a new run), else the panel the run stored (its public form, the keys
    from `config` or each judge's api_key_env). The run's judge is kept when the run has standard metrics or
    scorecards that ask the judge (as online, the run's judge asks their questions)."""
    if panel is None and stored_panel:
        from rubriceval.scoring.panel import PanelConfig

        panel = PanelConfig.from_public(stored_panel, api_key=config.api_key)
    from rubriceval.run.scorecard_stage import needs_judge

    return RunJudges(config, panel, needs_run_judge=bool(metrics) or needs_judge(list(scorecards)))


def check_providers(judges: RunJudges) -> None:
    """Every endpoint must be a provider with a Batch API (the embedded local judge has none)."""
    for endpoint in judges.endpoints:
        if not endpoint.config.base_url:
            named = [n for n in endpoint.judges if n != RUN_JUDGE]
            raise RubricEvalError(
                "the Batch API needs a provider: set judge.base_url (or --judge-base-url)" if not named else
                f"panel judge '{named[0]}' has no provider for the Batch API: set its base_url",
                field="judge.base_url" if not named else "judges.base_url",
                hint="or write files for an offline runner: --batch-file DIR")
