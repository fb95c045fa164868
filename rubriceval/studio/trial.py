"""Trying a draft rubric on N samples with a judge, marking its verdicts, and seeing how far to trust it.

A trial is an ordinary run in the run store (named `studio-<rubric id>-…`, its version tag in the run's config), so
its verdicts, costs and the lead's marks live where every other verdict and audit lives. The cost is planned first
(the dry run's plan_cost); verdicts are judged one sample at a time through the run's one path
(run/runner.judge_rubric) and yielded as they arrive. A 👍 is an audit that agrees with the judge, a 👎 an override
with the right score and a reason — recorded against the draft's version tag, so a new version starts fresh and the
agreement of each version with the lead's marks is measured separately.
"""
from __future__ import annotations

import time
from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel

from rubriceval.common.errors import RubricEvalError
from rubriceval.data.sample import Sample
from rubriceval.judge.config import JudgeConfig
from rubriceval.local.backends import make_judge
from rubriceval.rubric.schema import Rubric
from rubriceval.run.evaluate import start_run
from rubriceval.run.planning import CostPlan, plan_cost
from rubriceval.run.runner import judge_rubric
from rubriceval.store.audit import AuditStore
from rubriceval.store.runs import RunStore

if TYPE_CHECKING:
    from rubriceval.i18n import Lang

TRIAL_PREFIX = "studio-"


class TrialRow(BaseModel):
    run_id: str
    sample_id: str
    score: float | None
    unscored_reason: str | None = None
    feedback: str = ""
    evidence: list[str] = []
    calls: int = 0
    prompt_tokens: int = 0
    cost_usd: float = 0.0


def quoting(detail: str, span: str | None) -> str:
    """A check's evidence with what it matched quoted, when its wording does not quote it already (a regex's
    wording names the pattern, not the text it found)."""
    if not span or any(f"{a}{span}{b}" in detail for a, b in ("“”", "「」", '""', "''")):
        return detail
    return f"{detail}：「{span}」" if detail else f"「{span}」"


def plan_text(plan: CostPlan, samples: int, lang: Lang) -> str:
    """The cost of a trial, said in the page's language (the dry run's table is the CLI's, in English)."""
    from rubriceval.i18n import t

    cost = f"~${plan.cost_usd:.4f}" if plan.priced is not None else t("studio_plan_unpriced", lang)
    return t("studio_plan_text", lang, judge=plan.judge, samples=samples, calls=plan.calls, cached=plan.cached,
             to_pay=plan.calls - plan.cached, prompt=plan.prompt_tokens, completion=plan.completion_tokens, cost=cost)


def plan_trial(rubric: Rubric, samples: Sequence[Sample], judge: JudgeConfig) -> CostPlan:
    """What trying the draft will cost, before anything is asked (judge calls, tokens, cached, price)."""
    return plan_cost(list(samples), [rubric], [], judge)


async def run_trial(store: RunStore, rubric: Rubric, samples: Sequence[Sample], judge_config: JudgeConfig
                    ) -> AsyncIterator[TrialRow]:
    """Judge the draft on the samples, one at a time; each verdict is stored, then yielded."""
    if not samples:
        raise RubricEvalError("no sample to try the draft on", field="samples")
    name = f"{TRIAL_PREFIX}{rubric.id}-{rubric.version_tag.replace('@', '-')}-{time.strftime('%Y%m%d-%H%M%S')}"
    run_id, rubrics = start_run(list(samples), [rubric], [], store=store, judge_config=judge_config, name=name)
    if not rubrics:
        raise RubricEvalError(f"rubric '{rubric.id}' applies to none of the picked samples", field="samples")
    judge = make_judge(judge_config, announce=False)
    scored = unscored = 0
    try:
        for sample in samples:
            verdict = await judge_rubric(rubrics[0], sample, judge)
            store.save_verdict(run_id, verdict, sample.input_hash())
            scored += verdict.score is not None
            unscored += verdict.score is None
            yield TrialRow(run_id=run_id, sample_id=sample.id, score=verdict.score,
                           unscored_reason=verdict.unscored_reason, feedback=verdict.feedback or "",
                           evidence=[f"{'✔' if e.passed else '✘'} {e.item}: {quoting(e.detail or '', e.span)}"
                                     for e in verdict.evidence],
                           calls=verdict.usage.calls, prompt_tokens=verdict.usage.prompt_tokens,
                           cost_usd=verdict.usage.cost_usd or 0.0)
    finally:
        await judge.close()
        store.set_status(run_id, "complete", {"scored": scored, "unscored": unscored})


def mark(audit: AuditStore, run_id: str, sample_id: str, rubric_id: str, *, expert: str,
         thumb: Literal["up", "down"], right_score: int | None = None, reason: str = "") -> str:
    """The lead's mark on one trial verdict, stored as an audit: 👍 agrees, 👎 overrides with the right score."""
    verdict = next((v for v in audit.runs.verdicts(run_id) if v.sample_id == sample_id and v.scorer == rubric_id),
                   None)
    if verdict is None:
        raise RubricEvalError(f"no trial verdict for sample '{sample_id}'", field="sample_id")
    if thumb == "up":
        if verdict.score is None:
            raise RubricEvalError("an unscored verdict cannot be agreed with: give the right score", field="score")
        score, why = int(round(verdict.score)), reason
    else:
        if right_score is None:
            raise RubricEvalError("👎 needs the right score (1–5)", field="score",
                                  hint="say what the draft should have given this sample")
        score, why = right_score, reason.strip() or "👎 in the studio"
    expected = audit.versions(run_id, sample_id, rubric_id)
    audit.save_response(run_id, sample_id, rubric_id, expert=expert, score=score, reason=why, expected=expected)
    return "agree" if score == verdict.score else "override"


class TrialAgreement(BaseModel):
    marked: int
    agreed: int
    mean_abs_diff: float | None

    def text(self, lang: Lang = "zh") -> str:
        from rubriceval.i18n import t

        if not self.marked:
            return t("studio_nothing_marked", lang)
        share = self.agreed / self.marked
        gap = f"{self.mean_abs_diff:.2f}" if self.mean_abs_diff is not None else "–"
        return t("studio_agreement_text", lang, agreed=self.agreed, marked=self.marked, share=f"{share:.0%}",
                 gap=gap)


def agreement(audit: AuditStore, run_id: str, rubric_id: str) -> TrialAgreement:
    # a mark on an unscored verdict has no gap to measure: it is not counted
    responses = audit.responses(run_id, scorer=rubric_id)
    gaps = [abs(r.score - r.judge_score) for r in responses if r.judge_score is not None]
    return TrialAgreement(marked=len(gaps), agreed=sum(g == 0 for g in gaps),
                          mean_abs_diff=sum(gaps) / len(gaps) if gaps else None)


class ChangedVerdict(BaseModel):
    sample_id: str
    before: float | None
    after: float | None


def previous_trial(store: RunStore, rubric: Rubric, run_id: str) -> str | None:
    """The newest earlier trial of this rubric made with another version of it."""
    earlier = [r for r in store.list_runs() if r.name.startswith(f"{TRIAL_PREFIX}{rubric.id}-") and r.run_id != run_id
               and r.config.rubrics.get(rubric.id) not in (None, rubric.version_tag)]
    return max(earlier, key=lambda r: r.created_at).run_id if earlier else None


def changes_since(store: RunStore, rubric_id: str, before_run: str, after_run: str) -> list[ChangedVerdict]:
    """Samples both trials judged whose verdict changed between the two versions."""
    def scores(run: str) -> dict[str, float | None]:
        return {v.sample_id: v.score for v in store.verdicts(run) if v.scorer == rubric_id}

    old, new = scores(before_run), scores(after_run)
    return [ChangedVerdict(sample_id=s, before=old[s], after=new[s]) for s in new if s in old and old[s] != new[s]]
