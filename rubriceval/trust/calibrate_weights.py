"""`rubriceval calibrate --fit-weights --rubric ID`: fit a checklist's question weights to the experts' audits, and
propose them as a new rubric version only when they beat the declared level rule on held-out audited items.

1. Every audited item of the rubric version is judged in checklist mode (its questions, p(yes) each; cached
   answers cost nothing) — this also gives the declared rule's score.
2. The items are split like `calibrate` splits them (stratified by the experts' score, seeded): a training part
   and a held-out part.
3. An ordinal logistic model on p(yes) (`rubriceval.trust.fit_weights`) is fitted on the training part only.
4. On the held-out part, the fitted rubric (judge_mode checklist_fitted; the same cached answers) and the declared
   rule are both compared with the experts (quadratic κ). The fit is REFUSED — nothing written, nothing
   recorded as proposed — unless its κ is higher than the rule's.
5. Otherwise the fitted rubric is written as the next version (YAML in `proposed_rubrics/` beside the store file, or
   under out/ for a PostgreSQL store) and recorded as "proposed", like a few-shot calibration; `calibrate --accept
   VERSION` puts it in use.
"""
from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from rubriceval.core.verdict import Verdict
from rubriceval.judge.client import JudgeClient
from rubriceval.judge.config import JudgeConfig
from rubriceval.rubric.schema import Rubric
from rubriceval.stats.agreement import AgreementReport, agreement_from_verdicts
from rubriceval.store.location import folder_beside_store, store_target
from rubriceval.trust.calibrate import CalibrationError, next_version, rubric_yaml, score_audited_items, split_holdout
from rubriceval.trust.fit_weights import fit_ordinal
from rubriceval.trust.human_scores import SCALE, audited_items
from rubriceval.trust.store import RubricVersionRecord, TrustStore

MIN_TRAIN = 5
MIN_HELDOUT = 3


class FitWeightsResult(BaseModel):
    rubric_id: str
    base_version_tag: str
    accepted: bool                        # False: refused (did not beat the declared rule on held-out items)
    reason: str
    proposed_version: str | None = None
    proposed_version_tag: str | None = None
    yaml_path: str | None = None
    weights: dict[str, float] = Field(default_factory=dict)
    cutpoints: list[float] = Field(default_factory=list)
    n_train: int
    n_heldout: int
    rule: AgreementReport                 # the declared level rule on the held-out items
    fitted: AgreementReport               # the fitted weights on the same items
    judge_model: str

    def summary(self) -> str:
        verdict = "proposed v" + str(self.proposed_version) if self.accepted else "REFUSED"
        return (f"{self.rubric_id}: fitted weights on {self.n_train} audited items, evaluated on {self.n_heldout} "
                f"held-out: declared rule κ {self.rule.kappa_quadratic.format()}, fitted κ "
                f"{self.fitted.kappa_quadratic.format()} → {verdict} ({self.reason})")


def _features(verdict: Verdict) -> dict[str, float] | None:
    items = (verdict.details or {}).get("checklist") or {}
    values = {qid: a["p_yes"] for item in items.values() for qid, a in item.get("questions", {}).items()
              if a.get("p_yes") is not None}
    return values or None


def _mode(rubric: Rubric, mode: str, **update: Any) -> Rubric:
    return Rubric.model_validate({**rubric.model_dump(), "judge_mode": mode, **update})


def decide(rule: AgreementReport, fitted: AgreementReport) -> tuple[bool, str]:
    """Accept only a fit whose held-out κ is defined and higher than the declared rule's."""
    fit_kappa, rule_kappa = fitted.kappa_quadratic.value, rule.kappa_quadratic.value
    if fit_kappa is None:
        return False, "the fitted κ is undefined on the held-out items"
    if rule_kappa is not None and fit_kappa <= rule_kappa:
        return False, f"fitted κ {fit_kappa:.2f} does not beat the declared rule's {rule_kappa:.2f}"
    return True, f"fitted κ {fit_kappa:.2f} > declared rule {'undefined' if rule_kappa is None else f'{rule_kappa:.2f}'}"


async def fit_weights_async(store_path: str | Path, rubric_id: str, judge: JudgeClient | JudgeConfig, *,
                            holdout_fraction: float = 0.5, seed: int = 0, rubric: Rubric | None = None,
                            version_tag: str | None = None, proposal_dir: str | Path | None = None,
                            n_boot: int = 1000) -> FitWeightsResult:
    store_path = store_target(store_path)
    audited = audited_items(store_path, rubric_id, version_tag=version_tag)
    base = rubric if rubric is not None else Rubric.model_validate(audited.rubric_definition)
    if len(base.checklist_items) != 1:
        raise CalibrationError(f"rubric '{rubric_id}' needs exactly one checklist item to fit weights "
                               f"(it has {len(base.checklist_items)})", field="items",
                               hint="add a `type: checklist` item with questions and levels")
    item = base.checklist_items[0]
    client: JudgeClient
    if isinstance(judge, JudgeConfig):
        from rubriceval.local.backends import make_judge

        client = make_judge(judge)
    else:
        client = judge
    try:
        rule_rubric = _mode(base, "checklist")
        verdicts = await score_audited_items(rule_rubric, audited.items, client)
        usable = [(i, v, f) for i, v in zip(audited.items, verdicts) if (f := _features(v)) is not None]
        train, heldout = split_holdout([i for i, _, _ in usable], holdout_fraction, seed)
        if len(train) < MIN_TRAIN or len(heldout) < MIN_HELDOUT:
            raise CalibrationError(f"{len(usable)} audited item(s) with checklist answers: need at least "
                                   f"{MIN_TRAIN} to fit and {MIN_HELDOUT} held out", hint="audit more items")
        features = {i.key: f for i, _, f in usable}
        rule_verdict = {i.key: v for i, v, _ in usable}
        model = fit_ordinal([features[i.key] for i in train], [i.human_score for i in train],
                            [q.id for q in item.questions], judge_model=client.config.model)
        fitted_item = item.model_copy(update={"fitted": model})
        fitted_rubric = _mode(base, "checklist_fitted",
                              items=[fitted_item if it is item else it for it in base.items])
        fitted_verdicts = await score_audited_items(fitted_rubric, heldout, client)      # the same, cached, answers
    finally:
        if client is not judge:
            await client.close()
    human = {i.key: i.human_score for i in heldout}
    rule = agreement_from_verdicts([rule_verdict[i.key].model_copy(update={"sample_id": i.key}) for i in heldout],
                                   human, scale=SCALE, name=f"{rubric_id} declared rule", n_boot=n_boot, seed=seed)
    fitted = agreement_from_verdicts(fitted_verdicts, human, scale=SCALE, name=f"{rubric_id} fitted",
                                     n_boot=n_boot, seed=seed)
    accepted, reason = decide(rule, fitted)
    proposed = None                 # a refused fit writes and records nothing
    if accepted:
        proposed = _propose(store_path, base, fitted_rubric, item.id, model.model_copy(update={
            "n_heldout": len(heldout), "kappa_heldout": fitted.kappa_quadratic.value,
            "kappa_rule_heldout": rule.kappa_quadratic.value}), rule, fitted, proposal_dir,
            eval_keys=[i.key for i in heldout])
    return FitWeightsResult(rubric_id=rubric_id, base_version_tag=base.version_tag, accepted=accepted, reason=reason,
                            weights=model.weights, cutpoints=model.cutpoints, n_train=len(train),
                            n_heldout=len(heldout), rule=rule, fitted=fitted, judge_model=client.config.model,
                            proposed_version=str(proposed.version) if proposed is not None else None,
                            proposed_version_tag=proposed.version_tag if proposed is not None else None,
                            yaml_path=proposed.yaml_path if proposed is not None else None)


def _propose(store_path: str | Path, base: Rubric, fitted_rubric: Rubric, item_id: str, model, rule: AgreementReport,
             fitted: AgreementReport, proposal_dir: str | Path | None, eval_keys: list[str]) -> RubricVersionRecord:
    """Write and record the fitted rubric as the next version, status "proposed"."""
    with TrustStore(store_path) as trust:
        taken = [v.version for v in trust.versions(base.id)]
    items = [it.model_copy(update={"fitted": model}) if it.id == item_id else it for it in fitted_rubric.items]
    proposed = Rubric.model_validate({**fitted_rubric.model_dump(), "items": [i.model_dump() for i in items],
                                      "version": next_version(base.version, taken)})
    header = (f"Proposed by `rubriceval calibrate --fit-weights` ({model.n_train} audited items to fit, "
              f"{model.n_heldout} held out).\nHeld-out quadratic κ: declared rule {rule.kappa_quadratic.format()}, "
              f"fitted {fitted.kappa_quadratic.format()}. Not in use until accepted.")
    folder = Path(proposal_dir) if proposal_dir is not None else folder_beside_store(store_path) / "proposed_rubrics"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{base.id}.v{proposed.version}.proposed.yaml"
    path.write_text(rubric_yaml(proposed, header), encoding="utf-8")
    record = RubricVersionRecord(
        rubric_id=base.id, version=str(proposed.version), version_tag=proposed.version_tag,
        parent_version_tag=base.version_tag, status="proposed", rubric=proposed.model_dump(),
        yaml_text=rubric_yaml(proposed), yaml_path=str(path), judge_model=model.judge_model, n_eval=model.n_heldout,
        kappa_before=rule.kappa_quadratic.value, kappa_after=fitted.kappa_quadratic.value,
        agreement_before=rule.model_dump(), agreement_after=fitted.model_dump(), eval_keys=eval_keys,
        created_at=time.time(), note="fitted checklist weights")
    with TrustStore(store_path) as trust:
        trust.add_version(record)
    return record


def fit_weights(store_path: str | Path, rubric_id: str, judge: JudgeClient | JudgeConfig, **options: Any
                ) -> FitWeightsResult:
    return asyncio.run(fit_weights_async(store_path, rubric_id, judge, **options))
