"""Human scores for a rubric — from expert audits in the run store, or from an external labels file — paired with
the judge's verdicts, and the agreement between them stored per rubric version.

An audit response's score is the expert's score: an override carries its own, an "agree" equals the judge's
score by construction. Several experts on one item are combined by the lower median (an integer on the scale,
the same consensus rule as the SummEval loader) and, when at least two experts rated some items, their agreement
with each other is reported too (Krippendorff's ordinal alpha; Fleiss' kappa when every item has as many ratings).

Audits of the same input in several runs of the same rubric version are one item (keyed by the input's content
without its id), so re-running a dataset does not count its audits twice.
"""
from __future__ import annotations

import hashlib
import json
import math
import statistics
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from rubriceval.audit.team import TeamStore
from rubriceval.audit.team_adjudication import final_labels, review_modes
from rubriceval.common.errors import DatasetError, RubricEvalError
from rubriceval.core.verdict import Verdict
from rubriceval.data.io import read_records
from rubriceval.data.sample import Sample
from rubriceval.stats.agreement import (
    AgreementReport,
    Estimate,
    agreement_from_verdicts,
    fleiss_kappa_from_counts,
    krippendorff_alpha,
)
from rubriceval.store.audit import AuditStore
from rubriceval.store.location import store_target
from rubriceval.store.runs import RunInfo
from rubriceval.trust.store import TrustStore

SCALE = (1, 5)
_ID_COLUMNS = ("sample_id", "id")
_SCORE_COLUMNS = ("score", "human_score")
_EXPERT_COLUMNS = ("expert", "annotator", "rater")


class ExpertAgreement(BaseModel):
    """How far the experts agree with each other, on the items at least two of them rated."""

    n_experts: int
    n_items: int                           # items rated by ≥ 2 experts
    alpha_ordinal: Estimate                # Krippendorff's alpha, ordinal, missing ratings allowed
    fleiss_kappa: Estimate | None = None   # nominal; only when every such item has the same number of ratings
    ratings_per_expert: dict[str, int]

    def summary(self) -> str:
        alpha = self.alpha_ordinal.format() if self.alpha_ordinal.value is not None else \
            f"undefined ({self.alpha_ordinal.note})"
        return f"between {self.n_experts} experts on {self.n_items} shared items: α = {alpha}"


class RubricAgreementReport(AgreementReport):
    """An AgreementReport that knows which rubric version, which human scores and which judge it measured."""

    rubric_id: str
    version_tag: str
    source: Literal["audit", "labels"]
    source_detail: str = ""
    judge_model: str = ""
    experts: ExpertAgreement | None = None
    stored_result_id: int | None = None
    # How the human labels were given: items whose expert scores were all blind (the judge's verdict hidden until
    # saved) or not, and how many a lead adjudicated. Empty for a labels file.
    review: dict[str, int] = Field(default_factory=dict)

    def summary(self) -> str:
        text = super().summary()
        if self.review:
            text += f"; {review_text(self.review)}"
        if self.experts is not None:
            text += f"; {self.experts.summary()}"
        return text


def review_text(review: dict[str, int]) -> str:
    """'blind review: 30 of 35 items, 5 open; 4 adjudicated'."""
    blind, total = review.get("blind", 0), review.get("blind", 0) + review.get("open", 0)
    text = f"blind review: {blind} of {total} items" + (f", {total - blind} open" if total - blind else "")
    return text + (f"; {review['adjudicated']} adjudicated by a lead" if review.get("adjudicated") else "")


class AuditedItem(BaseModel):
    """One audited (sample, rubric) pair: what the judge said and what the experts said."""

    key: str                               # unique in its set: the sample id, or id@run-name on a clash
    content_key: str                       # what the judge reads, without the id
    run_id: str
    run_name: str
    sample: Sample                         # with the experts' ground-truth corrections applied
    verdict: Verdict
    expert_scores: dict[str, int]
    reasons: dict[str, str] = Field(default_factory=dict)   # expert → why they overrode the judge
    adjudicated: int | None = None         # a lead's final label (team audits), which overrides the consensus
    blind: bool = False                    # every expert score was given with the judge's verdict hidden

    @property
    def human_score(self) -> int:
        """The one human label of the item: the lead's adjudicated label, else the experts' consensus."""
        if self.adjudicated is not None:
            return self.adjudicated
        return consensus_score(self.expert_scores.values())

    @property
    def gap(self) -> float | None:
        """|judge − human|, None when the judge left the item unscored."""
        return None if self.verdict.score is None else abs(self.verdict.score - self.human_score)


class AuditedSet(BaseModel):
    rubric_id: str
    version_tag: str
    rubric_definition: dict[str, Any]      # the audited version as the run stored it
    items: list[AuditedItem]
    run_ids: list[str]
    judge_models: list[str]
    run_models: dict[str, str] = Field(default_factory=dict)   # run id → judge model of that run
    notes: list[str] = Field(default_factory=list)

    @property
    def judge_model(self) -> str:
        return ",".join(self.judge_models)

    def human_scores(self) -> dict[str, int]:
        return {item.key: item.human_score for item in self.items}

    def review_counts(self) -> dict[str, int]:
        blind = sum(1 for item in self.items if item.blind)
        return {"blind": blind, "open": len(self.items) - blind,
                "adjudicated": sum(1 for item in self.items if item.adjudicated is not None)}

    def keyed_verdicts(self) -> list[Verdict]:
        """The verdicts with sample_id replaced by the item key, so they pair with human_scores()."""
        return [item.verdict.model_copy(update={"sample_id": item.key}) for item in self.items]


# --------------------------------------------------------------------------------------------------------------
# Small pure helpers
# --------------------------------------------------------------------------------------------------------------

def consensus_score(scores: Iterable[int]) -> int:
    """The experts' consensus: the lower median, so it is always a score on the scale."""
    values = sorted(int(s) for s in scores)
    if not values:
        raise ValueError("no expert scores to combine")
    return int(statistics.median_low(values))


def content_key(sample: Sample) -> str:
    """Hash of what a judge reads, without the id: the same input under another id or run is the same item."""
    payload = sample.model_dump(exclude={"id", "metadata"})
    return hashlib.sha256(json.dumps(payload, ensure_ascii=False, sort_keys=True).encode()).hexdigest()[:16]


def expert_agreement(ratings: Iterable[Mapping[str, int]], *, n_boot: int = 1000, seed: int = 0
                     ) -> ExpertAgreement | None:
    """Between-expert agreement over items (expert → score); None when no item has two experts."""
    rows = [dict(r) for r in ratings]
    shared = [r for r in rows if len(r) >= 2]
    if not shared:
        return None
    experts = sorted({name for r in rows for name in r})
    matrix = [[float(r[e]) if e in r else math.nan for e in experts] for r in shared]
    alpha = krippendorff_alpha(matrix, level="ordinal", n_boot=n_boot, seed=seed)
    fleiss = None
    if len({len(r) for r in shared}) == 1:
        low, high = SCALE
        counts = [[sum(1 for s in r.values() if s == level) for level in range(low, high + 1)] for r in shared]
        fleiss = fleiss_kappa_from_counts(counts, n_boot=n_boot, seed=seed)
    per_expert = {e: sum(1 for r in rows if e in r) for e in experts}
    return ExpertAgreement(n_experts=len(experts), n_items=len(shared), alpha_ordinal=alpha, fleiss_kappa=fleiss,
                           ratings_per_expert=per_expert)


def _whole_score(value: Any, *, file: str, line: int, field: str) -> int:
    """An integer 1..5 from 4, 4.0 or "4"; anything else is an error, never rounded or clamped."""
    number: float | None = None
    if isinstance(value, bool):
        number = None
    elif isinstance(value, (int, float)):
        number = float(value)
    elif isinstance(value, str) and value.strip():
        try:
            number = float(value.strip())
        except ValueError:
            number = None
    low, high = SCALE
    if number is None or not math.isfinite(number) or number != int(number) or not low <= number <= high:
        raise DatasetError(f"score must be a whole number {low}–{high}, got {value!r}", file=file, line=line,
                           field=field, hint="leave unlabelled items out of the file")
    return int(number)


def _column(record: Mapping[str, Any], names: tuple[str, ...]) -> str | None:
    return next((name for name in names if name in record), None)


def read_label_file(path: str | Path) -> dict[str, dict[str, int]]:
    """Human labels from JSONL/CSV/Excel: sample_id (or id), score, optional expert → {sample id: {expert: score}}.

    Without an expert column each sample may appear once (its single rater is called "expert").
    """
    path = Path(path)
    records = read_records(path)
    if not records:
        raise DatasetError("the labels file has no rows", file=str(path))
    labels: dict[str, dict[str, int]] = {}
    for line, record in records:
        id_col, score_col = _column(record, _ID_COLUMNS), _column(record, _SCORE_COLUMNS)
        if id_col is None or score_col is None:
            raise DatasetError("each row needs a sample id and a score", file=str(path), line=line,
                               hint=f"columns: sample_id (or id), score, optional expert; found {sorted(record)}")
        sample_id = str(record[id_col]).strip()
        if not sample_id:
            raise DatasetError("empty sample id", file=str(path), line=line, field=id_col)
        expert_col = _column(record, _EXPERT_COLUMNS)
        expert = str(record[expert_col]).strip() if expert_col else "expert"
        if not expert:
            raise DatasetError("empty expert name", file=str(path), line=line, field=expert_col)
        score = _whole_score(record[score_col], file=str(path), line=line, field=score_col)
        by_expert = labels.setdefault(sample_id, {})
        if expert in by_expert:
            hint = "add an expert column to give several experts' scores" if expert_col is None else None
            raise DatasetError(f"sample '{sample_id}' has a second score from {expert}", file=str(path), line=line,
                               field=id_col, hint=hint)
        by_expert[expert] = score
    return labels


# --------------------------------------------------------------------------------------------------------------
# Reading the run store
# --------------------------------------------------------------------------------------------------------------

def _runs_with_rubric(store: AuditStore, rubric_id: str) -> list[tuple[RunInfo, str]]:
    """(run, the rubric's version tag in it) for every run that used the rubric, oldest first."""
    out = []
    for info in store.runs.list_runs():
        version = info.config.rubrics.get(rubric_id)
        if version is None:
            version = next((s["version"] for s in store.runs.scorers(info.run_id) if s["scorer"] == rubric_id), None)
        if version is not None:
            out.append((info, version))
    return out


def stored_rubric_definition(store: AuditStore, run_id: str, rubric_id: str) -> dict[str, Any]:
    return next((s["definition"] for s in store.runs.scorers(run_id) if s["scorer"] == rubric_id), {})


def choose_runs(store: AuditStore, rubric_id: str, run: str | None, version_tag: str | None
                ) -> tuple[str, list[tuple[RunInfo, str]]]:
    """The version tag to measure and the runs that used exactly it."""
    used = _runs_with_rubric(store, rubric_id)
    if not used:
        raise RubricEvalError(f"no run in this store used rubric '{rubric_id}'", file=str(store.path),
                              hint="`rubriceval runs` lists the stored runs and their rubrics")
    if run is not None:
        run_id = store.resolve(run)
        match = [(info, version) for info, version in used if info.run_id == run_id]
        if not match:
            raise RubricEvalError(f"run '{run}' did not use rubric '{rubric_id}'", file=str(store.path))
        if version_tag is not None and match[0][1] != version_tag:
            raise RubricEvalError(f"run '{run}' used {rubric_id} {match[0][1]}, not {version_tag}",
                                  file=str(store.path))
        return match[0][1], match
    if version_tag is None:
        audited = {info.run_id for info, _ in used if store.responses(info.run_id, scorer=rubric_id)}
        # The newest version that has audits; with none anywhere, the newest version used at all.
        candidates = [(info, version) for info, version in used if info.run_id in audited] or used
        version_tag = candidates[-1][1]
    chosen = [(info, version) for info, version in used if version == version_tag]
    if not chosen:
        known = sorted({version for _, version in used})
        raise RubricEvalError(f"no run used {rubric_id} {version_tag}", file=str(store.path),
                              hint=f"versions in this store: {', '.join(known)}")
    return version_tag, chosen


def audited_items(store_path: str | Path, rubric_id: str, *, run: str | None = None,
                  version_tag: str | None = None) -> AuditedSet:
    """Every audited verdict of one rubric version (default: the newest audited one), pooled over its runs.

    Responses given on another version of the verdict (the row was re-scored after the audit) are left out and
    counted in `notes`. When the same input was audited in several runs, the newest run's verdict is kept and the
    experts' scores are merged (an expert's newer score wins). A team audit's adjudicated label is the item's
    human label (store/team_adjudication.py: final_labels); an item a lead settled without any expert score (every
    expert unsure) is audited too.
    """
    with AuditStore(store_path) as store:
        team = TeamStore(audit=store)
        version_tag, runs = choose_runs(store, rubric_id, run, version_tag)
        by_content: dict[str, AuditedItem] = {}
        blind_by_item: dict[str, dict[str, bool]] = {}
        stale = 0
        for info, _ in runs:
            responses = store.responses(info.run_id, scorer=rubric_id)
            labels = final_labels(team, info.run_id, rubric_id)
            if not responses and not labels:
                continue
            modes = review_modes(team, info.run_id, rubric_id)
            verdicts = {v.sample_id: v for v in store.runs.verdicts(info.run_id) if v.scorer == rubric_id}
            corrected = {c.id: c for _, c in store.corrected_samples(info.run_id)}
            grouped: dict[str, list] = {sample_id: [] for sample_id in labels if sample_id in verdicts}
            for response in responses:
                verdict = verdicts.get(response.sample_id)
                if verdict is None or (response.scorer_version and response.scorer_version != verdict.scorer_version):
                    stale += 1
                    continue
                grouped.setdefault(response.sample_id, []).append(response)
            for sample_id, group in grouped.items():
                sample = corrected[sample_id]
                key = content_key(sample)
                previous = by_content.get(key)
                scores = dict(previous.expert_scores) if previous else {}
                reasons = dict(previous.reasons) if previous else {}
                blind = blind_by_item.setdefault(key, {})
                for response in sorted(group, key=lambda r: r.updated_at):
                    scores[response.expert] = response.score
                    blind[response.expert] = _given_blind(modes.get((sample_id, response.expert)), response.updated_at)
                    if response.reason:
                        reasons[response.expert] = response.reason
                    else:
                        reasons.pop(response.expert, None)
                adjudicated = labels.get(sample_id, previous.adjudicated if previous else None)
                by_content[key] = AuditedItem(key=sample_id, content_key=key, run_id=info.run_id,
                                              run_name=info.name, sample=sample, verdict=verdicts[sample_id],
                                              expert_scores=scores, reasons=reasons, adjudicated=adjudicated,
                                              blind=bool(scores) and all(blind.get(e, False) for e in scores))
        items = _unique_keys(list(by_content.values()))
        used_runs = sorted({item.run_id for item in items})
        infos = {info.run_id: info for info, _ in runs}
        run_models = {r: str(infos[r].config.judge.get("model", "")) for r in used_runs}
        models = sorted(set(run_models.values()))
        definition = stored_rubric_definition(store, runs[-1][0].run_id, rubric_id)
    notes = []
    if stale:
        notes.append(f"{stale} audit response(s) were given on a different version of the verdict "
                     f"(re-scored since) and are left out")
    return AuditedSet(rubric_id=rubric_id, version_tag=version_tag, rubric_definition=definition, items=items,
                      run_ids=used_runs, judge_models=models, run_models=run_models, notes=notes)


def _given_blind(mode: tuple[bool, float] | None, response_time: float) -> bool:
    """A response is blind when the team review that wrote it was (the same save: same time); a later save in the
    open audit app, or none from a team task, is open review."""
    return mode is not None and mode[0] and abs(mode[1] - response_time) < 1e-6


def _unique_keys(items: list[AuditedItem]) -> list[AuditedItem]:
    """Item keys are sample ids unless two different inputs share an id (different datasets): then id@run."""
    counts: dict[str, int] = {}
    for item in items:
        counts[item.key] = counts.get(item.key, 0) + 1
    out = []
    for item in items:
        if counts[item.key] > 1:
            item = item.model_copy(update={"key": f"{item.key}@{item.run_name}#{item.content_key[:6]}"})
        out.append(item)
    return out


# --------------------------------------------------------------------------------------------------------------
# Agreement for one rubric version
# --------------------------------------------------------------------------------------------------------------

def audit_agreement(audited: AuditedSet, *, n_boot: int = 1000, seed: int = 0,
                    worst_k: int = 10) -> RubricAgreementReport:
    """Judge vs expert consensus over an audited set (nothing stored); `worst_k` largest gaps listed."""
    report = agreement_from_verdicts(audited.keyed_verdicts(), audited.human_scores(), scale=SCALE,
                                     name=f"{audited.rubric_id} {audited.version_tag}", n_boot=n_boot, seed=seed,
                                     worst_k=worst_k)
    experts = expert_agreement((item.expert_scores for item in audited.items), n_boot=n_boot, seed=seed)
    return RubricAgreementReport(**{**report.model_dump(), "notes": audited.notes + report.notes},
                                 rubric_id=audited.rubric_id, version_tag=audited.version_tag, source="audit",
                                 source_detail="runs " + ",".join(audited.run_ids), judge_model=audited.judge_model,
                                 experts=experts, review=audited.review_counts())


def _labels_agreement(store_path: str | Path, rubric_id: str, run: str | None, version_tag: str | None,
                      labels_file: str | Path, *, n_boot: int, seed: int) -> RubricAgreementReport:
    labels = read_label_file(labels_file)
    with AuditStore(store_path) as store:
        version_tag, runs = choose_runs(store, rubric_id, run, version_tag)
        info = runs[-1][0]       # the newest run of that version holds the judge scores to compare
        verdicts = [v for v in store.runs.verdicts(info.run_id) if v.scorer == rubric_id]
    human = {sample_id: consensus_score(scores.values()) for sample_id, scores in labels.items()}
    report = agreement_from_verdicts(verdicts, human, scale=SCALE, name=f"{rubric_id} {version_tag}", n_boot=n_boot,
                                     seed=seed)
    judged = {v.sample_id for v in verdicts}
    orphans = sorted(set(labels) - judged)
    notes = list(report.notes)
    if orphans:
        shown = ", ".join(orphans[:5]) + ("…" if len(orphans) > 5 else "")
        notes.insert(0, f"{len(orphans)} labelled sample(s) have no {rubric_id} verdict in run {info.name}: {shown}")
    experts = expert_agreement(labels.values(), n_boot=n_boot, seed=seed)
    return RubricAgreementReport(**{**report.model_dump(), "notes": notes}, rubric_id=rubric_id,
                                 version_tag=version_tag, source="labels",
                                 source_detail=f"{Path(labels_file).name} vs run {info.name}",
                                 judge_model=str(info.config.judge.get("model", "")), experts=experts)


def agreement_for_rubric(store_path: str | Path, rubric_id: str, run: str | None = None,
                         labels_file: str | Path | None = None, *, version_tag: str | None = None,
                         n_boot: int = 1000, seed: int = 0, save: bool = True) -> RubricAgreementReport:
    """Judge-vs-human agreement for one rubric version, stored in `agreement_results` unless save=False.

    Human scores come from the expert audits (all runs of the version, or only `run`), or from `labels_file`
    (JSONL/CSV/Excel with sample_id, score, optional expert) compared with `run`'s verdicts (default: the newest
    run of the version). Version default: the newest audited version of the rubric.
    """
    store_path = store_target(store_path)
    if labels_file is not None:
        report = _labels_agreement(store_path, rubric_id, run, version_tag, labels_file, n_boot=n_boot, seed=seed)
    else:
        report = audit_agreement(audited_items(store_path, rubric_id, run=run, version_tag=version_tag),
                                 n_boot=n_boot, seed=seed)
    if save:
        with TrustStore(store_path) as trust:
            result_id = trust.record_agreement(
                rubric_id, report.version_tag, report, source=report.source, source_detail=report.source_detail,
                judge_model=report.judge_model,
                experts=report.experts.model_dump() if report.experts is not None else None)
        report = report.model_copy(update={"stored_result_id": result_id})
    return report
