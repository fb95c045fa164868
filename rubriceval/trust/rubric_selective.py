"""Selective scoring of rubric verdicts (issue 44): a rubric's `auto_accept: {agreement, confidence}` target applied
to its verdicts, with the scorecard side's statistics and fit (trust/selective.py fit_region, stats/selective.py).

- **Reviewed verdicts.** Every run of the store that started before this one, judged this rubric's version with the
  same judge model (trust/fit_reviews.judge_of_run: a fit names its judge and is ignored with another), and whose
  verdict a person decided before this run started: the latest human decision of the one official-score rule
  (audit/official.decision_events: an audit's agreement or override, a lead's adjudication, an accepted appeal). A
  team expert's review alone is an opinion, not a decision, and a rejected appeal decides nothing: neither counts.
  Only verdicts the judge scored are paired (an unscored one has no score to agree with).
- **Agreement** is the decided score equal to the judge's: an accepted verdict's score stands as the official score
  with no person, and the rubric's means, pass rates and gates are computed from it, so agreeing "on the pass/fail
  side" (a 4 the reviewer makes a 5) would let accepted verdicts move the means the guarantee is meant to protect.
- **Confidence** is what the verdict carries: the judge's probability of the level it wrote, per holistic item, when
  logprobs were read (scoring/score_probs.py), and the probability of the answer it chose, max(p, 1 − p), per
  question with a p(yes) (a checklist question, a per-turn question a check asked); the verdict's confidence is the
  least of them, and a verdict decided by deterministic checks alone ranks first. The ranking only orders the
  regions tested; the guarantee is the bound over the reviewed verdicts of the region, whatever the ranking (a
  calibrated cut-off that is not 0.5 makes max(p, 1 − p) a rougher order, never a weaker bound). When the reviewed
  verdicts carry one, the region is "confidence ≥ threshold" by fixed-sequence testing; otherwise (a judge without
  logprobs) the rubric is one band: all its verdicts are accepted when the one-sided Clopper–Pearson bound over its
  reviewed verdicts reaches the target at the stated confidence, else none.
- **Applied at run time** (`RubricAcceptance`, called on each rubric verdict before it is stored): a scored verdict
  outside the region is marked pending review (core/pending_review.py); it keeps the judge's score and feedback, and
  audit/official.py keeps it out of every figure until a person decides it. Unscored and undecided verdicts are never
  accepted (they are unscored: counted apart as they always were). A rubric without a target is left as it is.

Each run refits from every review made before it started, so reviews that agree open acceptance and a disagreement
closes it on the next run by itself; the report recomputes exactly the fit the run applied (`rubric_acceptance`)."""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from rubriceval.audit.official import OfficialScores, decision_events
from rubriceval.checks.turn_answers import TurnAnswer
from rubriceval.core.item_scores import ItemScores
from rubriceval.core.pending_review import PendingReview
from rubriceval.core.verdict import Verdict
from rubriceval.i18n import Lang, say, t
from rubriceval.rubric.schema import Rubric
from rubriceval.scoring.score_probs import stored_distributions
from rubriceval.trust.fit_reviews import judge_of_run
from rubriceval.trust.selective import EVIDENCE_CONFIDENCE, AcceptanceRegion, Mode, fit_region
from rubriceval.trust.selective_reviews import CardAcceptance, ItemAcceptance, run_judge

TURN_QUESTIONS_KEY = "turn_questions"     # a rubric verdict's per-turn questions and answers (scoring/rubric_scorer.py)


class ReviewedVerdict(BaseModel):
    """One scored rubric verdict a person decided: the judge's score, the decided one, the verdict's confidence."""

    rubric: str
    run_id: str
    sample_id: str
    machine_score: float
    reviewed_score: float
    source: str                        # the decision's kind: override (an audit), adjudication, appeal
    confidence: float | None = None

    @property
    def agrees(self) -> bool:
        return self.machine_score == self.reviewed_score


def verdict_confidence(details: Mapping[str, Any] | None, evidence: Iterable[Mapping[str, Any]]) -> float | None:
    """The least of the verdict's probabilities of its own answers (module doc): P(the level written) per holistic
    item, max(p, 1 − p) per question with a p(yes) (a check's evidence, a per-turn question it asked). A verdict
    decided by deterministic checks alone ranks first (EVIDENCE_CONFIDENCE, as a card's evidence-decided decision);
    None when the judge answered something without a probability (a holistic item without logprobs, a question
    answered without one): nothing says how sure it was."""
    distributions = stored_distributions(details)
    scores = ItemScores.read(details)
    judged = [item for item, value in scores.items() if type(value) is int] if scores is not None else []
    if any(item not in distributions for item in judged):
        return None
    asked = [TurnAnswer.model_validate(a) for a in (details or {}).get(TURN_QUESTIONS_KEY) or []
             if isinstance(a, Mapping)]
    if any(a.p_yes is None for a in asked):
        return None
    found = [d.probs.get(d.written, 0.0) for d in distributions.values()]
    found += [max(a.p_yes, 1 - a.p_yes) for a in asked if a.p_yes is not None]
    found += [max(float(e["p_yes"]), 1 - float(e["p_yes"])) for e in evidence
              if isinstance(e, Mapping) and e.get("p_yes") is not None]
    if found:
        return min(found)
    return EVIDENCE_CONFIDENCE if scores is not None else None


def rubric_mode(reviewed: Sequence[ReviewedVerdict]) -> Mode:
    """Ranked by confidence when the reviewed verdicts carry one, else one band."""
    return "confidence" if any(r.confidence is not None for r in reviewed) else "band"


def _versions(runs: Any, rubric_id: str, judge: str, version: str, before: float) -> Iterable[str]:
    """The runs before `before` that judged this version of the rubric with this judge."""
    for info in runs.list_runs():
        if info.created_at >= before or info.config.rubrics.get(rubric_id) != version:
            continue
        if judge_of_run(info.config.judge) == judge:
            yield info.run_id


def reviewed_verdicts(runs: Any, rubric_id: str, version: str, judge: str, before: float) -> list[ReviewedVerdict]:
    """The rubric's scored verdicts a person decided before `before`, over the runs of this version and judge."""
    import json

    found: list[ReviewedVerdict] = []
    for run_id in _versions(runs, rubric_id, judge, version, before):
        with runs.lock:
            events = decision_events(runs.conn, run_id)
        latest = {d.sample_id: d for d in events if d.scorer == rubric_id and d.at < before}
        if not latest:
            continue
        with runs.lock:
            rows = runs.conn.execute("SELECT sample_id, score, details_json, evidence_json FROM verdicts "
                                     "WHERE run_id = ? AND scorer = ? AND kind = 'rubric'",
                                     (run_id, rubric_id)).fetchall()
        for sample_id, score, details, evidence in rows:
            decision = latest.get(sample_id)
            if decision is None or score is None:
                continue
            found.append(ReviewedVerdict(
                rubric=rubric_id, run_id=run_id, sample_id=sample_id, machine_score=float(score),
                reviewed_score=decision.score, source=decision.source,
                confidence=verdict_confidence(json.loads(details or "{}"), json.loads(evidence or "[]"))))
    return found


def rubric_region(runs: Any, run_id: str, rubric: Rubric) -> AcceptanceRegion | None:
    """The region a run applies to a rubric's verdicts (None without a target): fitted on the reviews made before the
    run started, on its judge, for the version of the rubric the run judged."""
    if rubric.auto_accept is None:
        return None
    info = runs.run_info(run_id)
    judge = run_judge(runs, run_id)
    version = info.config.rubrics.get(rubric.id, rubric.version_tag)
    reviewed = reviewed_verdicts(runs, rubric.id, version, judge, info.created_at)
    return fit_region(rubric.id, rubric_mode(reviewed), reviewed, rubric.auto_accept, judge)


def pending_mark(verdict: Verdict, region: AcceptanceRegion) -> Verdict:
    """The verdict marked pending review when it is scored and outside the region; else unchanged."""
    if verdict.kind != "rubric" or verdict.score is None:
        return verdict              # unscored and undecided verdicts are never accepted: they are unscored already
    confidence = verdict_confidence(verdict.details, [e.model_dump() for e in verdict.evidence])
    if region.admits(confidence):
        return verdict
    mark = PendingReview(judge=region.judge, confidence=confidence)
    return verdict.model_copy(update={"details": {**verdict.details, **mark.details()}})


class RubricAcceptance:
    """What a run applies to each rubric verdict it makes (run/runner.py): the regions of its rubrics with a target,
    fitted once, before the first verdict, on the reviews made before the run started."""

    def __init__(self, runs: Any, run_id: str, rubrics: Sequence[Rubric]):
        targeted = [r for r in rubrics if r.auto_accept is not None]
        self.judge = run_judge(runs, run_id) if targeted else ""
        self.regions: dict[str, AcceptanceRegion] = {}
        for rubric in targeted:
            region = rubric_region(runs, run_id, rubric)
            if region is not None:
                self.regions[rubric.id] = region

    def __bool__(self) -> bool:
        return bool(self.regions)

    def notes(self, lang: Lang = "en") -> list[str]:
        """A line per rubric with a target: what this run accepts automatically, and why nothing when so."""
        lines = []
        for rubric_id, region in self.regions.items():
            accepts = t("aa_rubric_accepts_" + region.accepts, lang,
                        threshold=f"{region.threshold:.2f}" if region.threshold is not None else "")
            line = t("aa_rubric_note", lang, rubric=rubric_id, judge=self.judge or "—", accepts=accepts)
            if region.reason is not None and region.accepts == "none":
                line += f": {say(region.reason, lang)}"
            lines.append(line)
        return lines

    def __call__(self, verdict: Verdict) -> Verdict:
        region = self.regions.get(verdict.scorer)
        return verdict if region is None or verdict.kind != "rubric" else pending_mark(verdict, region)


def rubric_acceptance(runs: Any, run: str) -> list[CardAcceptance]:
    """Every rubric of the run with a target, as the report's acceptance tables show it (kind 'rubric', one row:
    the rubric): its region as the run applied it, its verdicts counted — decisions (scored or undecided), accepted,
    pending review, undecided, and `waiting`: pending or undecided with no person's decision yet."""
    from rubriceval.store.runs import rubrics_from_run

    run_id = runs.resolve(run)
    rubrics = [r for r in rubrics_from_run(runs, run_id)[0] if r.auto_accept is not None]
    if not rubrics:
        return []
    with runs.lock:
        official = OfficialScores.load(runs.conn, run_id)
    judge = run_judge(runs, run_id)
    out = []
    for rubric in rubrics:
        region = rubric_region(runs, run_id, rubric)
        if region is None:
            continue
        row = ItemAcceptance(item=rubric.id, name=rubric.name or rubric.id, region=region)
        with runs.lock:
            rows = runs.conn.execute("SELECT sample_id, score, unscored_kind, details_json FROM verdicts "
                                     "WHERE run_id = ? AND scorer = ? AND kind = 'rubric'",
                                     (run_id, rubric.id)).fetchall()
        for sample_id, score, unscored_kind, details in rows:
            if score is None and unscored_kind != "undecided":
                continue
            row.decisions += 1
            decided = official.decision(sample_id, rubric.id) is not None
            if score is None:
                row.undecided += 1
                row.waiting += not decided
            elif details and PendingReview.read(_json(details)) is not None:
                row.pending += 1
                row.waiting += not decided
            else:
                row.accepted += 1
        out.append(CardAcceptance(run_id=run_id, scorecard=rubric.id, name=rubric.name or rubric.id, judge=judge,
                                  kind="rubric", items=[row]))
    return out


def _json(text: str) -> dict[str, Any]:
    import json

    found = json.loads(text or "{}")
    return found if isinstance(found, dict) else {}


def acceptances(runs: Any, run: str) -> list[CardAcceptance]:
    """A run's automatic acceptance as the report, the trend, the weekly line and the gate show it: every scorecard
    with a target (trust/selective_reviews.run_acceptance), then every rubric with one."""
    from rubriceval.trust.selective_reviews import run_acceptance

    return [*run_acceptance(runs, run), *rubric_acceptance(runs, run)]
