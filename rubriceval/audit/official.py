"""The official score of a verdict: the latest human decision on it, else the machine's (the judge's) score.

Human decisions are read from the append-only records where they were made, never written over a verdict:
- `override`: an expert's save in the audit app (`audit_log`, action save_response: an agreement, an override, or a
  score given to an unscored verdict);
- `adjudication`: a lead's final label in a team task (`team_adjudications`);
- `appeal`: an appeal accepted by a reviewer, or closed as accepted by a lead's final judgement (`appeal_events`,
  rubriceval/audit/appeals.py). A rejected appeal decides nothing: the score stays what it was — except on a rubric
  verdict pending review (issue 44), which it settles at the judge's score (the reviewer found the judge right);
- `correction`: a ground-truth correction or context relevance mark made after a deterministic metric was scored
  (`audit_gt_edits`): the metric's value recomputed on the corrected sample (rubriceval/audit/corrected_metrics.py).
  An LLM metric cannot be recomputed without a judge call: it keeps the machine's score and is listed in
  `OfficialScores.corrected` for the reports to say the sample was corrected after scoring (re-run to re-score).
The latest of them (by time, then by the order they were recorded) is the official score. A team expert's review is
an opinion, not a decision: several experts' scores are settled by the lead's adjudication.

Every reader (reports, compare, gate, exports, the Python API) takes its scores through `OfficialScores`; with
`machine_only=True` it gives the judge's view unchanged (for measuring the judge).

A rubric verdict pending review (issue 44: its rubric's `auto_accept` target does not accept it; core/pending_review.py)
has no official score until a human decision settles it: `score` gives None, `is_pending` says so, and readers count
it apart (`n_pending`), in no mean. The first decision on it (an agreement, an override, an adjudication, an accepted
appeal) makes it count, with the decided score, as any decided verdict. Calibration sessions
(rubriceval/audit/calibration.py) are kept in tables of their own and are never read here.

A decision that removes one deduction recomputes the verdict's score from the items it was combined from:
`score_without` asks the recompute function registered for the scorer's kind (rubrics are built in; scorecards
register theirs with `register_recompute`).
"""
from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel

from rubriceval.audit.corrected_metrics import CorrectedVerdict, corrected_verdicts
from rubriceval.core.item_scores import ItemScores
from rubriceval.core.pending_review import DETAILS_KEY as PENDING_KEY
from rubriceval.rubric.schema import Combine
from rubriceval.scoring.combine import ItemScore, combine
from rubriceval.store.db import Database

if TYPE_CHECKING:       # pandas is loaded by the frames only: a run that never asks for one never loads it
    import pandas as pd

DecisionSource = Literal["override", "adjudication", "appeal", "correction"]
Key = tuple[str, str]                   # (sample id, scorer)


class HumanDecision(BaseModel):
    """One human decision on a verdict's score."""

    sample_id: str
    scorer: str
    score: float
    source: DecisionSource
    by: str
    at: float
    reason: str = ""
    ref: str = ""                       # the appeal id or team task id it came from
    item: str = ""                      # an appeal against one deduction: that item


class OfficialRow(BaseModel):
    sample_id: str
    scorer: str
    machine_score: float | None
    official_score: float | None
    human: bool
    decision: HumanDecision | None = None


def _override_rows(conn: Database, run_id: str) -> Iterable[tuple[float, int, HumanDecision]]:
    if not conn.table_exists("audit_log"):
        return
    for r in conn.execute("SELECT log_id, at, expert, sample_id, scorer, payload_json FROM audit_log WHERE run_id = ? "
                          "AND action = 'save_response' AND outcome = 'saved' ORDER BY log_id", (run_id,)).fetchall():
        payload = json.loads(r["payload_json"])
        yield r["at"], 0, HumanDecision(sample_id=r["sample_id"], scorer=r["scorer"], score=float(payload["score"]),
                                        source="override", by=r["expert"], at=r["at"],
                                        reason=str(payload.get("reason") or ""))


def _adjudication_rows(conn: Database, run_id: str) -> Iterable[tuple[float, int, HumanDecision]]:
    if not conn.table_exists("team_adjudications"):
        return
    for r in conn.execute("SELECT task_id, sample_id, scorer, lead, label, reason, saved_at FROM team_adjudications "
                          "WHERE run_id = ? ORDER BY adjudication_id", (run_id,)).fetchall():
        yield r["saved_at"], 1, HumanDecision(sample_id=r["sample_id"], scorer=r["scorer"], score=float(r["label"]),
                                              source="adjudication", by=r["lead"], at=r["saved_at"],
                                              reason=r["reason"], ref=r["task_id"])


def _appeal_rows(conn: Database, run_id: str) -> Iterable[tuple[float, int, HumanDecision]]:
    """Each appeal's last decisive step (a reviewer's decision or a lead's final judgement), when it accepts."""
    if not conn.table_exists("appeal_events"):
        return
    last: dict[str, Any] = {}
    for r in conn.execute("SELECT appeal_id, sample_id, scorer, item, actor, at, outcome, score, reason "
                          "FROM appeal_events "
                          "WHERE run_id = ? AND action IN ('decide', 'final') ORDER BY event_id", (run_id,)).fetchall():
        last[r["appeal_id"]] = r
    rejected: dict[Key, tuple[str, Any]] = {}
    for appeal_id, r in last.items():
        if r["outcome"] == "accepted" and r["score"] is not None:
            yield r["at"], 2, HumanDecision(sample_id=r["sample_id"], scorer=r["scorer"], score=float(r["score"]),
                                            source="appeal", by=r["actor"], at=r["at"], reason=r["reason"],
                                            ref=appeal_id, item=r["item"])
        elif r["outcome"] == "rejected" and not r["item"]:      # the whole verdict, not one deduction
            rejected[(r["sample_id"], r["scorer"])] = (appeal_id, r)
    # A rejected appeal of a rubric verdict pending review (issue 44) settles it at the judge's score: the reviewer
    # decided the judge was right. On any other verdict a rejection decides nothing: the score stays what it was.
    if rejected:
        for key, machine in _pending_machine_scores(conn, run_id, rejected).items():
            appeal_id, r = rejected[key]
            yield r["at"], 2, HumanDecision(sample_id=key[0], scorer=key[1], score=machine, source="appeal",
                                            by=r["actor"], at=r["at"], reason=r["reason"], ref=appeal_id,
                                            item=r["item"])


def _pending_machine_scores(conn: Database, run_id: str, keys: Iterable[Key]) -> dict[Key, float]:
    """Of these verdicts, the scored ones marked pending review: their judge's score."""
    from rubriceval.core.pending_review import PendingReview

    wanted = set(keys)
    if not targeted_rubrics(conn, run_id):
        return {}
    rows = conn.execute("SELECT sample_id, scorer, score, details_json FROM verdicts WHERE run_id = ? AND "
                        "kind = 'rubric' AND score IS NOT NULL AND instr(details_json, ?) > 0",
                        (run_id, f'"{PENDING_KEY}"')).fetchall()
    return {(r[0], r[1]): float(r[2]) for r in rows
            if (r[0], r[1]) in wanted and PendingReview.read(json.loads(r[3] or "{}")) is not None}


def _correction_rows(corrected: Iterable[CorrectedVerdict]) -> Iterable[tuple[float, int, HumanDecision]]:
    for c in corrected:
        if c.score is not None:
            yield c.at, 3, HumanDecision(sample_id=c.sample_id, scorer=c.scorer, score=c.score, source="correction",
                                         by=c.by, at=c.at, reason=c.reason)


def decision_events(conn: Database, run_id: str, corrected: Sequence[CorrectedVerdict] = ()) -> list[HumanDecision]:
    """Every human decision of the run, oldest first (the same instant keeps the order of the sources, and the order
    within one source). A scorecard reads them all: each accepted appeal changes its own item
    (audit/scorecard_official.py), not only the latest."""
    events = [*_override_rows(conn, run_id), *_adjudication_rows(conn, run_id), *_appeal_rows(conn, run_id),
              *_correction_rows(corrected)]
    return [decision for _, _, decision in sorted(events, key=lambda e: (e[0], e[1]))]


def human_decisions(conn: Database, run_id: str, corrected: Sequence[CorrectedVerdict] | None = None
                    ) -> dict[Key, HumanDecision]:
    """(sample id, scorer) → the latest human decision on that verdict of the run (`corrected`: the run's
    corrected metric verdicts when the caller read them already)."""
    if corrected is None:
        corrected = list(corrected_verdicts(conn, run_id))
    latest: dict[Key, HumanDecision] = {}
    for decision in decision_events(conn, run_id, corrected):
        latest[(decision.sample_id, decision.scorer)] = decision
    return latest


class OfficialScores:
    """What a reader uses for a run's scores: the official one per verdict (or the machine's, machine_only)."""

    def __init__(self, decisions: Mapping[Key, HumanDecision], *, machine_only: bool = False,
                 corrected: Iterable[CorrectedVerdict] = (), pending: Iterable[Key] = ()):
        self.machine_only = machine_only
        self.decisions: dict[Key, HumanDecision] = {} if machine_only else dict(decisions)
        self._by_scorer = Counter(scorer for _, scorer in self.decisions)
        # Rubric verdicts pending review that no person decided yet: no official score (machine_only: the judge's).
        self.pending: set[Key] = set() if machine_only else {k for k in pending if k not in self.decisions}
        self._pending_by_scorer = Counter(scorer for _, scorer in self.pending)
        # Metric verdicts scored before their sample was corrected and not recomputed (LLM metrics): the machine's
        # score stands, the reports say "re-run to re-score" — unless a person decided the verdict since.
        self.corrected: dict[Key, CorrectedVerdict] = {} if machine_only else {
            (c.sample_id, c.scorer): c for c in corrected if not c.recomputed
            and not self._decided_since(c.sample_id, c.scorer, c.at)}
        self._corrected_by_scorer = Counter(scorer for _, scorer in self.corrected)

    @classmethod
    def load(cls, conn: Database, run_id: str, *, machine_only: bool = False) -> OfficialScores:
        if machine_only:
            return cls({}, machine_only=True)
        corrected = list(corrected_verdicts(conn, run_id))
        return cls(human_decisions(conn, run_id, corrected), corrected=corrected, pending=pending_keys(conn, run_id))

    def _decided_since(self, sample_id: str, scorer: str, at: float) -> bool:
        found = self.decisions.get((sample_id, scorer))
        return found is not None and found.at >= at

    def __bool__(self) -> bool:
        """Whether any verdict's official score differs from the judge's (a decision, or a pending verdict)."""
        return bool(self.decisions or self.pending)

    def is_pending(self, sample_id: str, scorer: str) -> bool:
        """A rubric verdict pending review that no person decided yet (counted apart, in no mean)."""
        return (sample_id, scorer) in self.pending

    def n_pending(self, scorer: str) -> int:
        return self._pending_by_scorer.get(scorer, 0)

    def pending_counts(self) -> dict[str, int]:
        return dict(self._pending_by_scorer)

    def decision(self, sample_id: str, scorer: str) -> HumanDecision | None:
        return self.decisions.get((sample_id, scorer))

    def score(self, sample_id: str, scorer: str, machine: float | None) -> float | None:
        """The decided score, else the judge's — None while the verdict is pending review."""
        found = self.decisions.get((sample_id, scorer))
        if found is None and (sample_id, scorer) in self.pending:
            return None
        return machine if found is None else found.score

    def n_human(self, scorer: str) -> int:
        """Verdicts of `scorer` whose official score is a human decision."""
        return self._by_scorer.get(scorer, 0)

    def scorers(self) -> set[str]:
        return set(self._by_scorer)

    def n_corrected(self, scorer: str) -> int:
        """Verdicts of `scorer` whose sample was corrected after scoring and that could not be recomputed."""
        return self._corrected_by_scorer.get(scorer, 0)

    def corrected_counts(self) -> dict[str, int]:
        return dict(self._corrected_by_scorer)

    def row(self, sample_id: str, scorer: str, machine: float | None) -> OfficialRow:
        found = self.decision(sample_id, scorer)
        return OfficialRow(sample_id=sample_id, scorer=scorer, machine_score=machine,
                           official_score=self.score(sample_id, scorer, machine), human=found is not None,
                           decision=found)


def targeted_rubrics(conn: Database, run_id: str) -> list[str]:
    """The run's rubrics that state an auto_accept target (issue 44): the only ones whose verdicts may wait."""
    rows = conn.execute("SELECT scorer, definition_json FROM run_scorers WHERE run_id = ? AND kind = 'rubric'",
                        (run_id,)).fetchall()
    return [r[0] for r in rows if (json.loads(r[1] or "{}") or {}).get("auto_accept")]


def pending_keys(conn: Database, run_id: str) -> list[Key]:
    """(sample id, scorer) of the run's rubric verdicts marked pending review (core/pending_review.py). Only the
    verdicts of rubrics with a target are read (a run without one costs one small query), instr() first, so only the
    rows whose details mention the mark are parsed."""
    from rubriceval.core.pending_review import PendingReview

    scorers = targeted_rubrics(conn, run_id)
    if not scorers:
        return []
    rows = conn.execute("SELECT sample_id, scorer, details_json FROM verdicts WHERE run_id = ? AND kind = 'rubric' "
                        f"AND scorer IN ({','.join('?' * len(scorers))}) AND instr(details_json, ?) > 0",
                        (run_id, *scorers, f'"{PENDING_KEY}"')).fetchall()
    return [(r[0], r[1]) for r in rows if PendingReview.read(json.loads(r[2] or "{}")) is not None]


OFFICIAL_KEY = "official"     # details key of a verdict shown with its official score: who decided, the machine's


def with_decision(verdict: Any, decision: HumanDecision | None, threshold: float | None = None) -> Any:
    """The verdict as a report shows it: the decided score, `passed` against `threshold` (None: left to the
    reader), and under details["official"] the source, who, and the machine's score. Without a decision, the verdict
    unchanged."""
    if decision is None:
        return verdict
    return verdict.model_copy(update={
        "score": decision.score, "passed": None if threshold is None else decision.score >= threshold,
        "unscored_reason": None, "unscored_kind": None,
        "details": {**verdict.details, OFFICIAL_KEY: {"source": decision.source, "by": decision.by,
                                                      "machine_score": verdict.score, "reason": decision.reason}}})


def official_frame(conn: Database, run_id: str, *, machine_only: bool = False) -> pd.DataFrame:
    """One row per verdict: machine score, official score, whether a human decided it, who, when, why, and whether
    its sample was corrected after scoring without the score being recomputed (an LLM metric: re-run to re-score)."""
    import pandas as pd
    official = OfficialScores.load(conn, run_id, machine_only=machine_only)
    rows = []
    for r in conn.execute("SELECT sample_id, scorer, score FROM verdicts WHERE run_id = ? ORDER BY sample_id, scorer",
                          (run_id,)).fetchall():
        row = official.row(r["sample_id"], r["scorer"], r["score"])
        d = row.decision
        rows.append({"sample_id": row.sample_id, "scorer": row.scorer, "machine_score": row.machine_score,
                     "official_score": row.official_score, "human_decided": row.human,
                     "decided_by": d.source if d else "pending_review" if official.is_pending(
                         row.sample_id, row.scorer) else "machine", "decider": d.by if d else None,
                     "decided_at": d.at if d else None, "decision_reason": d.reason if d else None,
                     "corrected_after_scoring": (row.sample_id, row.scorer) in official.corrected})
    return pd.DataFrame(rows, columns=["sample_id", "scorer", "machine_score", "official_score", "human_decided",
                                       "decided_by", "decider", "decided_at", "decision_reason",
                                       "corrected_after_scoring"], dtype=object)


def official_scores(store: Any, run: str = "latest", *, machine_only: bool = False) -> pd.DataFrame:
    """`official_frame` of a stored run (its rubric and metric verdicts), from a store path/URL or a RunStore. The
    Python API's (`EvaluationResult.official_scores`) adds the scorecard totals: audit/official_api.py."""
    from rubriceval.store.runs import RunStore

    runs = store if isinstance(store, RunStore) else RunStore(store)
    conn = Database(runs.path, read_only=True)
    try:
        return official_frame(conn, runs.resolve(run), machine_only=machine_only)
    finally:
        conn.close()
        if runs is not store:
            runs.close()


# -- a deduction removed: the score recomputed ----------------------------------------------------------------------
Recompute = Callable[[Mapping[str, Any], Mapping[str, Any], Sequence[str]], float | None]
_RECOMPUTE: dict[str, Recompute] = {}


def register_recompute(kind: str, recompute: Recompute) -> None:
    """How a scorer kind's score is recomputed once some of its deductions are removed: recompute(definition,
    verdict details, removed item ids) → the new score, or None when it cannot say (a reviewer then gives one)."""
    _RECOMPUTE[kind] = recompute


def deductions(kind: str, details: Mapping[str, Any]) -> list[str]:
    """The items of a verdict an agent may appeal one at a time: a rubric's failed checks."""
    if kind != "rubric":
        finder = _DEDUCTION_FINDERS.get(kind)
        return finder(details) if finder else []
    scores = ItemScores.read(details)
    return scores.failed_checks() if scores is not None else []


_DEDUCTION_FINDERS: dict[str, Callable[[Mapping[str, Any]], list[str]]] = {}


def register_deductions(kind: str, finder: Callable[[Mapping[str, Any]], list[str]]) -> None:
    """Which items of a `kind` verdict are deductions (the scorecard's hook, beside register_recompute)."""
    _DEDUCTION_FINDERS[kind] = finder


def score_without(kind: str, definition: Mapping[str, Any], details: Mapping[str, Any],
                  removed: Sequence[str]) -> float | None:
    recompute = _RECOMPUTE.get(kind)
    return recompute(definition, details, removed) if recompute else None


def _rubric_without(definition: Mapping[str, Any], details: Mapping[str, Any], removed: Sequence[str]
                    ) -> float | None:
    """The rubric's combine rule over its stored item results, the removed checks counted as passed."""
    item_scores = ItemScores.read(details)
    if item_scores is None:
        return None
    declared = {str(i.get("id")): i for i in definition.get("items") or [] if isinstance(i, dict)}
    items = []
    for item_id, value in item_scores.items():
        spec = declared.get(item_id, {})
        weight, must = float(spec.get("weight", 1.0)), bool(spec.get("must", False))
        if isinstance(value, bool) or value is None:
            passed = True if item_id in removed else value
            items.append(ItemScore(item_id=item_id, kind=str(spec.get("type", "check")), weight=weight, must=must,
                                   passed=passed))
        else:
            if item_id in removed:          # a judge item's score is not a deduction to drop: a reviewer decides
                return None
            items.append(ItemScore(item_id=item_id, kind="judge", weight=weight, must=must, score=int(value)))
    score, _ = combine(items, Combine.model_validate(definition.get("combine") or {}))
    return float(score)


register_recompute("rubric", _rubric_without)
