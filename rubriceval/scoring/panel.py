"""A panel of judges: every rubric judged once by each configured judge — different model families or endpoints,
or the same model with different seeds — and the verdicts combined by the consensus rules self-consistency uses
(`rubriceval/scoring/consensus.py`): median score, majority pass/fail, a disagreement flag (spread ≥ 2 or a
pass/fail split) that puts the item first in the audit queue. Each judge's score, vote, feedback or unscored
reason is kept in `Verdict.details['panel']['judges']`; inter-judge agreement is in the report
(`rubriceval/trust/panel_agreement.py`).

Configuration, in the config YAML beside the single `judge:` (which still judges the standard metrics, and whose
settings every panel judge starts from), or in a file of its own given with `--panel FILE`:

    judges:
      - {name: qwen, base_url: https://dashscope.aliyuncs.com/compatible-mode/v1, model: qwen-max,
         api_key_env: DASHSCOPE_API_KEY}
      - {name: deepseek, base_url: https://api.deepseek.com/v1, model: deepseek-chat, api_key_env: DEEPSEEK_API_KEY}
      - {name: local-7, seed: 7}                 # the judge: settings with another seed
    panel: {min_scored: 2}                       # optional; default a majority of the judges

Unscored judges are counted. The panel verdict is scored from the judges that scored when at least `min_scored`
did; otherwise it is unscored, naming how many scored and the first failure.
"""
from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rubriceval.common.errors import ConfigError, RubricEvalError
from rubriceval.core.verdict import Verdict
from rubriceval.data.sample import Sample
from rubriceval.judge.ask import Judge
from rubriceval.judge.config import JudgeConfig, load_judge_config
from rubriceval.rubric.schema import Rubric
from rubriceval.rubric.yaml_lines import line_for, load_yaml_with_lines
from rubriceval.scoring.consensus import Consensus, consensus_verdict, default_min_scored
from rubriceval.scoring.panel_votes import DETAILS_KEY, PanelVote
from rubriceval.scoring.rubric_scorer import score_rubric

MEMBER_KEYS = ("name", "api_key_env")       # panel-only keys of a `judges:` entry; the rest are JudgeConfig fields


class PanelJudge(BaseModel):
    """One judge of the panel: its name (in verdict details and reports) and its full judge configuration."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, pattern=r"^[^\s:]+$")
    config: JudgeConfig
    api_key_env: str | None = None   # read the API key from this environment variable (keys are never stored)

    def resolved_config(self) -> JudgeConfig:
        if self.api_key_env and os.environ.get(self.api_key_env):
            return self.config.model_copy(update={"api_key": os.environ[self.api_key_env]})
        return self.config


class PanelConfig(BaseModel):
    judges: list[PanelJudge] = Field(min_length=2)
    min_scored: int | None = Field(default=None, ge=1)   # None: a majority of the judges

    @property
    def required(self) -> int:
        return self.min_scored or default_min_scored(len(self.judges))

    def public(self) -> dict[str, Any]:
        """What a run stores: everything but API keys."""
        return {"judges": [{"name": j.name, "api_key_env": j.api_key_env,
                            "config": j.config.model_dump(exclude={"api_key"})} for j in self.judges],
                "min_scored": self.min_scored}

    @classmethod
    def from_public(cls, data: dict[str, Any], api_key: str | None = None) -> PanelConfig:
        """A stored panel back, with `api_key` (or each judge's api_key_env) for the judges."""
        config = cls.model_validate(data)
        for judge in config.judges:
            judge.config = judge.config.model_copy(update={"api_key": api_key})
        return config


class PanelInfo(Consensus):
    """The consensus of the panel (median, spread, votes, disagreement) and every judge's own verdict."""

    judges: list[PanelVote] = Field(default_factory=list)
    min_scored: int


# ── configuration ───────────────────────────────────────────────────────────────────────────────────────────────

def cache_identity(config: JudgeConfig) -> tuple:
    """What tells a panel's judges apart in the judge cache: its key names the model, seed, temperature and output
    settings, not the endpoint (the Batch API's replay tells judges apart by it too: rubriceval/batch/endpoints.py)."""
    return (config.model, config.seed, config.temperature, config.max_tokens, config.structured)


def _check_distinct(judges: list[PanelJudge], where: str, lines: dict) -> None:
    """Two judges whose calls have the same cache key would share answers (`cache_identity`)."""
    seen: dict[tuple, int] = {}
    for index, judge in enumerate(judges):
        c = judge.config
        key = cache_identity(c)
        if key in seen:
            other = judges[seen[key]].name
            raise ConfigError(f"panel judge '{judge.name}' would share cached answers with '{other}' (same model, "
                              "seed, temperature and output settings)", file=where,
                              line=line_for(lines, ("judges", index)), field=f"judges[{index}]",
                              hint="give it another seed or model (the judge cache is keyed on them, not on the "
                                   "endpoint)")
        seen[key] = index
        if c.self_consistency > 1:
            raise ConfigError("a panel judge is asked once per rubric; self-consistency inside a panel is not "
                              "supported", file=where, line=line_for(lines, ("judges", index, "self_consistency")),
                              field=f"judges[{index}].self_consistency")


def load_panel_config(path: str | Path, base: JudgeConfig | None = None) -> PanelConfig | None:
    """The `judges:` list of a config YAML as a panel (None when the file has none). Every judge starts from `base`
    (default: the file's own `judge:` section with the environment) and overrides what it names."""
    where = str(path)
    try:
        data, lines = load_yaml_with_lines(path)
    except RubricEvalError as exc:
        raise ConfigError(exc.message, file=where, line=exc.line, hint=exc.hint) from None
    if not isinstance(data, dict) or data.get("judges") is None:
        return None
    entries = data["judges"]
    if not isinstance(entries, list) or len(entries) < 2:
        raise ConfigError("'judges' must be a list of at least two judge configurations", file=where,
                          line=line_for(lines, ("judges",)), field="judges")
    base = base or load_judge_config(path)
    inherited = base.model_dump(exclude={"self_consistency"})
    judges, names = [], set()
    for index, entry in enumerate(entries):
        field = f"judges[{index}]"
        if not isinstance(entry, dict):
            raise ConfigError("each panel judge is a mapping such as {name: a, model: m, base_url: …}", file=where,
                              line=line_for(lines, ("judges", index)), field=field)
        name = str(entry.get("name") or f"judge{index + 1}")
        if name in names:
            raise ConfigError(f"two panel judges are named '{name}'", file=where,
                              line=line_for(lines, ("judges", index, "name")), field=f"{field}.name")
        names.add(name)
        unknown = [k for k in entry if k not in MEMBER_KEYS and k not in JudgeConfig.model_fields]
        if unknown:
            raise ConfigError(f"unknown judge setting '{unknown[0]}'", file=where, field=f"{field}.{unknown[0]}",
                              line=line_for(lines, ("judges", index, unknown[0])),
                              hint=f"judge settings: {', '.join(JudgeConfig.model_fields)}")
        settings = {k: v for k, v in entry.items() if k not in MEMBER_KEYS}
        try:
            judges.append(PanelJudge(name=name, api_key_env=entry.get("api_key_env"),
                                     config=JudgeConfig.model_validate({**inherited, **settings})))
        except ValidationError as exc:
            err = exc.errors()[0]
            loc = tuple(p for p in err["loc"] if p != "config")
            raise ConfigError(err["msg"], file=where, line=line_for(lines, ("judges", index, *loc)),
                              field=".".join([field, *map(str, loc)])) from None
    options = data.get("panel") or {}
    if not isinstance(options, dict):
        raise ConfigError("'panel' must be a mapping such as {min_scored: 2}", file=where,
                          line=line_for(lines, ("panel",)), field="panel")
    try:
        config = PanelConfig(judges=judges, **options)
    except (ValidationError, TypeError) as exc:
        msg = exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else str(exc)
        raise ConfigError(msg, file=where, line=line_for(lines, ("panel",)), field="panel") from None
    if config.required > len(judges):
        raise ConfigError(f"min_scored is {config.required} but the panel has {len(judges)} judges", file=where,
                          line=line_for(lines, ("panel", "min_scored")), field="panel.min_scored")
    _check_distinct(judges, where, lines)
    return config


# ── the panel at work ───────────────────────────────────────────────────────────────────────────────────────────

class JudgePanel:
    """The panel's judge clients, by name; built by `make_panel`, or from any `Judge` objects in tests."""

    def __init__(self, judges: Sequence[tuple[str, Judge]], *, min_scored: int | None = None):
        if len(judges) < 2:
            raise ValueError("a panel needs at least two judges")
        self.judges = list(judges)
        self.min_scored = min_scored or default_min_scored(len(self.judges))

    @property
    def stats(self) -> Any:
        """The call counters (shared by the judges `make_panel` builds; otherwise the first judge's)."""
        # a Judge (the protocol) need not count calls; the panel's JudgeClients (and tests' doubles) do
        return self.judges[0][1].stats  # type: ignore[attr-defined]

    async def close(self) -> None:
        for _, judge in self.judges:
            await judge.close()  # type: ignore[attr-defined]  # as stats: JudgeClients and doubles close


def make_panel(config: PanelConfig, *, stats: Any = None, announce: bool = True) -> JudgePanel:
    """The clients of a configured panel, sharing one CallStats (`stats`, or a new one) so a run counts every
    judge's calls in one place."""
    from rubriceval.judge.client import CallStats
    from rubriceval.local.backends import make_judge

    shared = stats if stats is not None else CallStats()
    clients = []
    for judge in config.judges:
        client = make_judge(judge.resolved_config(), announce=announce)
        client.stats = shared
        clients.append((judge.name, client))
    return JudgePanel(clients, min_scored=config.required)


def _vote(name: str, judge: Judge, verdict: Verdict) -> PanelVote:
    return PanelVote(judge=name, model=str(getattr(getattr(judge, "config", None), "model", "")),
                     score=verdict.score, passed=verdict.passed, unscored_kind=verdict.unscored_kind,
                     reason=verdict.unscored_reason, feedback=verdict.feedback, usage=verdict.usage)


async def score_with_panel(rubric: Rubric, sample: Sample, panel: JudgePanel) -> Verdict:
    """Judge once with every panel judge and combine the verdicts (see the module docstring)."""
    # score_rubric is typed for a JudgeClient; a panel holds JudgeClients, or test doubles with their interface
    verdicts = await asyncio.gather(*(score_rubric(rubric, sample, judge)  # type: ignore[arg-type]
                                      for _, judge in panel.judges))
    info = PanelInfo(n=len(verdicts), min_scored=panel.min_scored,
                     judges=[_vote(name, judge, v) for (name, judge), v in zip(panel.judges, verdicts)])
    if all(v.unscored_kind == "missing_field" for v in verdicts):
        return verdicts[0]     # the sample lacks what the rubric needs: no judge was asked
    return consensus_verdict(verdicts, info, threshold=rubric.threshold, min_scored=panel.min_scored,
                             details_key=DETAILS_KEY, label="panel judges")
