"""Calibrate a rubric from expert audits: propose a new version whose few-shot examples are audited items, and
measure on held-out audited items whether it agrees with the experts better than the old version.

The procedure, and why:
1. The audited items of one rubric version are split, stratified by the experts' score and seeded, into an
   example pool and a held-out evaluation set (`holdout_fraction`). The split comes first and is random, so the
   evaluation set is not biased towards the easy items left over after picking examples.
2. From the pool, `k_examples` examples are picked round-robin across the experts' scores (so the prompt shows
   the whole scale, not five 5s), within a score the biggest judge–expert disagreements first (they teach the
   judge what it got wrong; an unscored verdict counts as half a point of disagreement).
3. Both the old and the new rubric are re-run on the held-out items with the same judge, and agreement with the
   experts' consensus is reported for each. Held-out items whose question+answer text equals any example's (the
   same input under another id) are dropped from the evaluation set too: it NEVER scores what the prompt shows.
4. The proposal (version bumped) is stored in `rubric_versions` with status "proposed" and written as YAML. It
   takes effect only when someone accepts it and puts it in the rubrics folder: `accept_version(..., write_to=)`.

Why the proposal is not written next to the original rubric by default: the rubric loader reads every *.yaml
under rubrics/ and refuses two files with the same rubric id, so a `<id>.v2.proposed.yaml` beside `<id>.yaml`
would break every run. Proposals go to `<store folder>/proposed_rubrics/` unless `proposal_dir` says otherwise.
"""
from __future__ import annotations

import asyncio
import math
import re
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
import yaml
from pydantic import BaseModel, Field

from rubriceval.common.errors import RubricEvalError
from rubriceval.core.verdict import Verdict
from rubriceval.judge.client import JudgeClient
from rubriceval.judge.config import JudgeConfig
from rubriceval.rubric.schema import Example, Rubric
from rubriceval.scoring.rubric_scorer import score_rubric
from rubriceval.stats.agreement import AgreementReport, agreement_from_verdicts
from rubriceval.store.location import display_location, folder_beside_store, store_target
from rubriceval.trust.human_scores import SCALE, AuditedItem, audited_items
from rubriceval.trust.store import RubricVersionRecord, TrustStore

MIN_EVAL_ITEMS = 2
UNSCORED_PRIORITY = 0.5     # an unscored verdict ranks between a real disagreement (≥ 1) and an agreement (0)


class CalibrationError(RubricEvalError):
    """Calibration cannot run as asked (too few audited items, bad fraction)."""


FeedbackSource = Literal["expert", "judge", "score_only"]    # whose words an example's feedback is


class ChosenExample(BaseModel):
    key: str
    human_score: int
    judge_score: float | None
    feedback_from: FeedbackSource


class CalibrationResult(BaseModel):
    rubric_id: str
    base_version_tag: str
    proposed_version: str
    proposed_version_tag: str
    yaml_path: str | None
    yaml_text: str
    judge_model: str
    n_audited: int
    examples: list[ChosenExample]
    eval_keys: list[str]
    excluded_from_eval: list[str] = Field(default_factory=list)  # held out, but the same text as an example
    before: AgreementReport
    after: AgreementReport
    notes: list[str] = Field(default_factory=list)

    @property
    def kappa_delta(self) -> float | None:
        before, after = self.before.kappa_quadratic.value, self.after.kappa_quadratic.value
        return None if before is None or after is None else after - before

    def summary(self) -> str:
        delta = self.kappa_delta
        change = "" if delta is None else f" (Δκ = {delta:+.2f})"
        return (f"{self.rubric_id}: proposed v{self.proposed_version} with {len(self.examples)} audited examples; "
                f"on {len(self.eval_keys)} held-out items — before {self.before.summary()}; "
                f"after {self.after.summary()}{change}")


# --------------------------------------------------------------------------------------------------------------
# Pure steps (split, pick, bump, render) — tested directly
# --------------------------------------------------------------------------------------------------------------

def split_holdout(items: Sequence[AuditedItem], holdout_fraction: float, seed: int
                  ) -> tuple[list[AuditedItem], list[AuditedItem]]:
    """(example pool, held-out items), stratified by the experts' score and seeded.

    Items are shuffled within each score, laid end to end, and every item where the running share crosses the
    next multiple of the fraction is held out — so each score keeps about the same share in both parts.
    """
    if not 0 < holdout_fraction < 1:
        raise CalibrationError(f"holdout_fraction must be between 0 and 1 (exclusive), got {holdout_fraction}",
                               field="holdout_fraction")
    rng = np.random.default_rng(seed)
    by_level: dict[int, list[AuditedItem]] = {}
    for item in sorted(items, key=lambda i: i.key):
        by_level.setdefault(item.human_score, []).append(item)
    ordered: list[AuditedItem] = []
    for level in sorted(by_level):
        group = by_level[level]
        ordered += [group[i] for i in rng.permutation(len(group))]
    pool: list[AuditedItem] = []
    holdout: list[AuditedItem] = []
    for index, item in enumerate(ordered):
        crosses = math.floor((index + 1) * holdout_fraction) > math.floor(index * holdout_fraction)
        (holdout if crosses else pool).append(item)
    return pool, holdout


def _priority(item: AuditedItem) -> float:
    gap = item.gap
    return UNSCORED_PRIORITY if gap is None else gap


def choose_examples(pool: Sequence[AuditedItem], k: int, seed: int) -> list[AuditedItem]:
    """k items, round-robin over the experts' scores; within a score, biggest disagreement first (seeded ties)."""
    if k < 1:
        raise CalibrationError(f"k_examples must be at least 1, got {k}", field="k_examples")
    rng = np.random.default_rng(seed + 1)
    tiebreak = {item.key: float(r) for item, r in zip(pool, rng.random(len(pool)))}
    by_level: dict[int, list[AuditedItem]] = {}
    for item in pool:
        by_level.setdefault(item.human_score, []).append(item)
    for group in by_level.values():
        group.sort(key=lambda i: (-_priority(i), tiebreak[i.key]))
    # Levels whose worst disagreement is largest go first, so a small k still shows the judge its worst mistakes.
    levels = sorted(by_level, key=lambda level: (-_priority(by_level[level][0]), level))
    chosen: list[AuditedItem] = []
    depth = 0
    while len(chosen) < k and any(depth < len(by_level[level]) for level in levels):
        for level in levels:
            if depth < len(by_level[level]) and len(chosen) < k:
                chosen.append(by_level[level][depth])
        depth += 1
    return chosen


def _shown_text(question: str, answer: str) -> tuple[str, str]:
    """What a few-shot example shows the judge (question and answer), whitespace-normalised for comparison."""
    return " ".join(question.split()), " ".join(answer.split())


def example_from_item(item: AuditedItem, language: str) -> tuple[Example, FeedbackSource]:
    """A few-shot Example with the experts' score; feedback from the experts' reasons when they gave one."""
    consensus = item.human_score
    reasons = [reason for expert, reason in sorted(item.reasons.items())
               if item.expert_scores.get(expert) == consensus and reason.strip()]
    reasons = reasons or [reason for _, reason in sorted(item.reasons.items()) if reason.strip()]
    if reasons:
        source: FeedbackSource = "expert"
        feedback = " / ".join(dict.fromkeys(r.strip() for r in reasons))
    elif item.verdict.score == consensus and item.verdict.feedback.strip():
        feedback, source = item.verdict.feedback.strip(), "judge"      # the experts agreed with this feedback
    else:
        feedback = f"专家评分：{consensus}。" if language == "zh" else f"Expert score: {consensus}."
        source = "score_only"
    sample = item.sample
    return Example(question=sample.question, answer=sample.answer, contexts=list(sample.contexts),
                   ground_truth=sample.ground_truth, score=consensus, feedback=feedback), source


def next_version(current: int | str, taken: Iterable[str]) -> int | str:
    """The next free version: 3 → 4; 'v3' → 'v4'; '2024a' → '2024a.1'; skipping versions already recorded."""
    used = {str(t) for t in taken} | {str(current)}
    text = str(current)
    if isinstance(current, int) or text.isdigit():
        candidate: int | str = int(text) + 1
        while str(candidate) in used:
            candidate = int(candidate) + 1
        return candidate
    match = re.search(r"(\d+)$", text)
    prefix, number = (text[:match.start()], int(match.group(1))) if match else (text + ".", 0)
    candidate = f"{prefix}{number + 1}"
    while candidate in used:
        number += 1
        candidate = f"{prefix}{number + 1}"
    return candidate


class _RubricDumper(yaml.SafeDumper):
    """Multi-line text as YAML block scalars (|), so a criterion reads as written."""


def _represent_str(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
    style = "|" if "\n" in data else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


_RubricDumper.add_representer(str, _represent_str)


def rubric_yaml(rubric: Rubric, header: str = "") -> str:
    """The rubric as YAML that loads back to the same content hash (checked)."""
    body = yaml.dump(rubric.model_dump(exclude_none=True), Dumper=_RubricDumper, allow_unicode=True,
                     sort_keys=False, width=120)
    reloaded = Rubric.model_validate(yaml.safe_load(body))
    if reloaded.content_hash() != rubric.content_hash():
        raise RuntimeError(f"rubric '{rubric.id}' does not survive a YAML round trip; not writing it")
    comment = "".join(f"# {line}\n" for line in header.splitlines())
    return comment + body


# --------------------------------------------------------------------------------------------------------------
# The calibration run
# --------------------------------------------------------------------------------------------------------------

async def score_audited_items(rubric: Rubric, items: Sequence[AuditedItem], judge: JudgeClient) -> list[Verdict]:
    # In the mode a run with this judge gives the rubric (fitted weights only for the judge they were fitted for:
    # rubriceval/scoring/judge_mode.py); scored under the item key, unique even when two datasets reuse a sample id.
    from rubriceval.scoring.judge_mode import with_judge_mode

    (rubric,), _ = with_judge_mode([rubric], None, judge_models=[judge.config.model])
    return list(await asyncio.gather(*(score_rubric(rubric, item.sample.model_copy(update={"id": item.key}), judge)
                                       for item in items)))


def _check_no_leak(examples: Sequence[AuditedItem], evaluated: Sequence[AuditedItem],
                   all_examples: Sequence[Example]) -> None:
    """Refuse to report numbers measured on anything the prompt shows (a bug here must not pass silently)."""
    example_keys = {e.key for e in examples} | {e.content_key for e in examples}
    shown = {_shown_text(e.question, e.answer) for e in all_examples}
    for item in evaluated:
        if item.key in example_keys or item.content_key in example_keys \
                or _shown_text(item.sample.question, item.sample.answer) in shown:
            raise RuntimeError(f"calibration would evaluate on few-shot example '{item.key}'")


async def calibrate_async(store_path: str | Path, rubric_id: str, judge: JudgeClient | JudgeConfig,
                          k_examples: int = 4, holdout_fraction: float = 0.5, seed: int = 0, *,
                          rubric: Rubric | None = None, version_tag: str | None = None,
                          proposal_dir: str | Path | None = None, write_yaml: bool = True,
                          keep_existing_examples: bool = False, n_boot: int = 1000) -> CalibrationResult:
    """Propose the next version of a rubric with audited few-shot examples and measure it on held-out audits.

    `rubric`: the version to start from (default: the audited version as its run stored it). The proposal is
    recorded in the store as "proposed"; `accept_version` / `reject_version` record the decision.
    """
    store_path = store_target(store_path)
    audited = audited_items(store_path, rubric_id, version_tag=version_tag)
    base = rubric if rubric is not None else Rubric.model_validate(audited.rubric_definition)
    if base.id != rubric_id:
        raise CalibrationError(f"the rubric passed is '{base.id}', not '{rubric_id}'", field="rubric")
    if not audited.items:
        raise CalibrationError(f"no audited items for {rubric_id} {audited.version_tag}",
                               file=display_location(store_path),
                               hint="audit some verdicts in the audit app first")
    notes = list(audited.notes)
    if base.version_tag != audited.version_tag:
        notes.append(f"starting from {base.version_tag}; the audits were made on {audited.version_tag} "
                     f"(the experts' scores are still the labels)")

    pool, holdout = split_holdout(audited.items, holdout_fraction, seed)
    if not pool:
        raise CalibrationError(f"only {len(audited.items)} audited item(s): none left for examples after holding "
                               f"out {holdout_fraction:.0%}", hint="audit more items or lower holdout_fraction")
    chosen = choose_examples(pool, k_examples, seed)
    if len(chosen) < k_examples:
        notes.append(f"only {len(chosen)} audited item(s) available as examples (asked for {k_examples})")
    new_examples: list[Example] = []
    sources: list[ChosenExample] = []
    for item in chosen:
        example, source = example_from_item(item, base.language)
        new_examples.append(example)
        sources.append(ChosenExample(key=item.key, human_score=item.human_score, judge_score=item.verdict.score,
                                     feedback_from=source))
    examples = (list(base.examples) if keep_existing_examples else []) + new_examples

    # Never score what any prompt (old or new) shows as an example, even under another id.
    shown = {_shown_text(e.question, e.answer) for e in [*examples, *base.examples]}
    chosen_keys = {i.content_key for i in chosen}
    evaluated = [i for i in holdout if i.content_key not in chosen_keys
                 and _shown_text(i.sample.question, i.sample.answer) not in shown]
    evaluated_keys = {i.key for i in evaluated}
    excluded = [i.key for i in holdout if i.key not in evaluated_keys]
    if len(evaluated) < MIN_EVAL_ITEMS:
        raise CalibrationError(f"only {len(evaluated)} held-out item(s) to evaluate on (need {MIN_EVAL_ITEMS})",
                               hint="audit more items or raise holdout_fraction")
    _check_no_leak(chosen, evaluated, [*examples, *base.examples])

    with TrustStore(store_path) as trust:
        taken = [v.version for v in trust.versions(rubric_id)]
    proposed = base.model_copy(update={"version": next_version(base.version, taken), "examples": examples})
    proposed = Rubric.model_validate(proposed.model_dump())        # re-validated, as a file would be

    if isinstance(judge, JudgeConfig):
        from rubriceval.local.backends import make_judge

        client = make_judge(judge)
    else:
        client = judge
    try:
        old_verdicts, new_verdicts = await asyncio.gather(score_audited_items(base, evaluated, client),
                                                          score_audited_items(proposed, evaluated, client))
    finally:
        if client is not judge:
            await client.close()
    human = {item.key: item.human_score for item in evaluated}
    before = agreement_from_verdicts(old_verdicts, human, scale=SCALE, name=f"{rubric_id} v{base.version}",
                                     n_boot=n_boot, seed=seed)
    after = agreement_from_verdicts(new_verdicts, human, scale=SCALE, name=f"{rubric_id} v{proposed.version}",
                                    n_boot=n_boot, seed=seed)

    judge_model = client.config.model
    header = (f"Proposed by `rubriceval calibrate` from {len(audited.items)} audited items of {audited.version_tag}.\n"
              f"Held-out agreement ({len(evaluated)} items, judge {judge_model}): before "
              f"{before.kappa_quadratic.format()}, after {after.kappa_quadratic.format()} (quadratic κ).\n"
              f"Not in use until accepted.")
    yaml_text = rubric_yaml(proposed)
    yaml_path: Path | None = None
    if write_yaml:
        folder = Path(proposal_dir) if proposal_dir is not None else (
            folder_beside_store(store_path) / "proposed_rubrics")
        folder.mkdir(parents=True, exist_ok=True)
        yaml_path = folder / f"{rubric_id}.v{proposed.version}.proposed.yaml"
        yaml_path.write_text(rubric_yaml(proposed, header), encoding="utf-8")

    detail = f"calibration {rubric_id} v{proposed.version}: {len(evaluated)} held-out audited items"
    with TrustStore(store_path) as trust:
        if trust.has_version(rubric_id, base.version) and not trust.has_version_tag(rubric_id, base.version_tag):
            notes.append(f"version {base.version} of {rubric_id} is recorded with other content: the rubric was "
                         f"edited without a version bump, so the starting point is not recorded as a version")
        elif not trust.has_version_tag(rubric_id, base.version_tag):
            # The starting version is the one in use: record it so the history has both ends.
            trust.add_version(RubricVersionRecord(
                rubric_id=rubric_id, version=str(base.version), version_tag=base.version_tag, status="accepted",
                rubric=base.model_dump(), yaml_text=rubric_yaml(base), created_at=time.time(),
                decided_at=time.time(), decided_by="(in use before calibration)",
                note="the version calibration started from"))
        trust.add_version(RubricVersionRecord(
            rubric_id=rubric_id, version=str(proposed.version), version_tag=proposed.version_tag,
            parent_version_tag=base.version_tag, status="proposed", rubric=proposed.model_dump(),
            yaml_text=yaml_text, yaml_path=str(yaml_path) if yaml_path else None, judge_model=judge_model,
            n_eval=len(evaluated), kappa_before=before.kappa_quadratic.value, kappa_after=after.kappa_quadratic.value,
            agreement_before=before.model_dump(), agreement_after=after.model_dump(),
            example_keys=[c.key for c in sources], eval_keys=[i.key for i in evaluated], created_at=time.time()))
        trust.record_agreement(rubric_id, base.version_tag, before, source="calibration_before",
                               source_detail=detail, judge_model=judge_model)
        trust.record_agreement(rubric_id, proposed.version_tag, after, source="calibration_after",
                               source_detail=detail, judge_model=judge_model)

    return CalibrationResult(
        rubric_id=rubric_id, base_version_tag=base.version_tag, proposed_version=str(proposed.version),
        proposed_version_tag=proposed.version_tag, yaml_path=str(yaml_path) if yaml_path else None,
        yaml_text=yaml_text, judge_model=judge_model, n_audited=len(audited.items), examples=sources,
        eval_keys=[i.key for i in evaluated], excluded_from_eval=excluded, before=before, after=after, notes=notes)


def calibrate(store_path: str | Path, rubric_id: str, judge: JudgeClient | JudgeConfig, k_examples: int = 4,
              holdout_fraction: float = 0.5, seed: int = 0, **options: Any) -> CalibrationResult:
    """Synchronous calibrate_async (for the CLI); pass a JudgeConfig to have the judge started and closed here."""
    return asyncio.run(calibrate_async(store_path, rubric_id, judge, k_examples, holdout_fraction, seed, **options))


# --------------------------------------------------------------------------------------------------------------
# Decisions
# --------------------------------------------------------------------------------------------------------------

def accept_version(store_path: str | Path, rubric_id: str, version: int | str, *, decided_by: str = "",
                   note: str = "", write_to: str | Path | None = None) -> RubricVersionRecord:
    """Mark a proposed version accepted; `write_to` writes its YAML there (e.g. over rubrics/<id>.yaml)."""
    with TrustStore(store_path) as trust:
        record = trust.decide(rubric_id, version, "accepted", decided_by=decided_by, note=note)
    if write_to is not None:
        rubric = Rubric.model_validate(record.rubric)
        header = f"Accepted{' by ' + decided_by if decided_by else ''} from calibration (kappa on held-out audits: " \
                 f"{_fmt(record.kappa_before)} → {_fmt(record.kappa_after)})."
        Path(write_to).write_text(rubric_yaml(rubric, header), encoding="utf-8")
    return record


def reject_version(store_path: str | Path, rubric_id: str, version: int | str, *, decided_by: str = "",
                   note: str = "") -> RubricVersionRecord:
    """Mark a proposed version rejected; it stays in the store with its agreement numbers."""
    with TrustStore(store_path) as trust:
        return trust.decide(rubric_id, version, "rejected", decided_by=decided_by, note=note)


def list_versions(store_path: str | Path, rubric_id: str) -> list[RubricVersionRecord]:
    with TrustStore(store_path) as trust:
        return trust.versions(rubric_id)


def _fmt(value: float | None) -> str:
    return "undefined" if value is None else f"{value:.2f}"
