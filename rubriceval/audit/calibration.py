"""Reviewer calibration sessions (校准会, grade the grader): a lead picks verdicts with a benchmark label (their own,
or a lead's adjudicated label of a team task), each reviewer grades them blind — no judge score, no benchmark, no
one else's grade — and the session reports each reviewer's agreement with the benchmark (exact, ±1, κ) and with each
other (pairwise κ, Krippendorff's α), with the statistics of rubriceval/stats/agreement.

A session never changes an official score: its grades live in tables of their own (`calibration_grades`,
append-only) that rubriceval/audit/official.py does not read, and its log lines are not audit saves.
"""
from __future__ import annotations

import itertools
import json
import time
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel, Field

from rubriceval.audit.team import TeamStore
from rubriceval.audit.team_adjudication import final_labels
from rubriceval.stats.agreement import AgreementReport, Estimate, agreement_report, cohen_kappa, krippendorff_alpha
from rubriceval.store.audit import check_score
from rubriceval.store.audit_models import clean_expert_name
from rubriceval.store.team_models import LEAD_ROLES, TeamError

N_BOOT = 500


class CalibrationPick(BaseModel):
    """An item a lead picks: a verdict and its benchmark label (None: the lead's adjudicated label of it)."""

    run: str
    sample_id: str
    scorer: str
    benchmark: int | None = None


class CalibrationItem(BaseModel):
    item_no: int
    run_id: str
    sample_id: str
    scorer: str


class CalibrationSession(BaseModel):
    session_id: str
    name: str
    lead: str
    created_at: float
    reviewers: list[str]
    items: list[CalibrationItem]


class ReviewerResult(BaseModel):
    reviewer: str
    n_graded: int
    agreement: AgreementReport | None = None       # the reviewer (as "judge") against the benchmark


class PairResult(BaseModel):
    a: str
    b: str
    n: int
    kappa: Estimate


class ItemResult(BaseModel):
    item_no: int
    sample_id: str
    scorer: str
    benchmark: int
    grades: dict[str, int]
    share_correct: float | None


class CalibrationReport(BaseModel):
    session: CalibrationSession
    reviewers: list[ReviewerResult]
    pairs: list[PairResult] = Field(default_factory=list)
    alpha: Estimate                               # Krippendorff's α (ordinal) over the reviewers
    items: list[ItemResult]


class Calibration:
    """Calibration sessions over a TeamStore's connection."""

    def __init__(self, team: TeamStore, *, clock: Callable[[], float] = time.time):
        self.team, self.clock = team, clock

    def create(self, name: str, *, lead: str, role: str, reviewers: Sequence[str],
               picks: Sequence[CalibrationPick]) -> CalibrationSession:
        if role not in LEAD_ROLES:
            raise TeamError("only a lead runs a calibration session", field="role")
        lead, name = clean_expert_name(lead), " ".join((name or "").split())
        reviewers = list(dict.fromkeys(clean_expert_name(r) for r in reviewers))
        if not name or not reviewers or not picks:
            raise TeamError("a calibration session needs a name, reviewers and items",
                            field="name" if not name else "reviewers" if not reviewers else "items")
        if self.team.query("SELECT 1 FROM calibration_sessions WHERE name = :n", {"n": name}):
            raise TeamError(f"a calibration session named '{name}' already exists", field="name")
        rows: list[dict[str, Any]] = []
        adjudicated: dict[tuple[str, str], dict[str, int]] = {}
        for no, pick in enumerate(picks, start=1):
            run_id = self.team.audit.resolve(pick.run)
            if not self.team.query("SELECT 1 FROM verdicts WHERE run_id = :r AND sample_id = :s AND scorer = :c "
                                   "AND kind = 'rubric'", {"r": run_id, "s": pick.sample_id, "c": pick.scorer}):
                raise TeamError(f"item {no}: no rubric verdict '{pick.scorer}' of sample '{pick.sample_id}'",
                                field="items")
            benchmark, source = pick.benchmark, "lead"
            if benchmark is None:
                labels = adjudicated.setdefault((run_id, pick.scorer), final_labels(self.team, run_id, pick.scorer))
                if pick.sample_id not in labels:
                    raise TeamError(f"item {no}: give a benchmark label, or adjudicate '{pick.sample_id}' first",
                                    field="benchmark")
                benchmark, source = labels[pick.sample_id], "adjudication"
            rows.append({"no": no, "run": run_id, "sample": pick.sample_id, "scorer": pick.scorer,
                         "benchmark": check_score(benchmark), "source": source})
        session_id = uuid.uuid4().hex[:12]
        with self.team.writing() as conn:
            conn.execute("INSERT INTO calibration_sessions VALUES (:id, :name, :lead, :at, :reviewers)",
                         {"id": session_id, "name": name, "lead": lead, "at": self.clock(),
                          "reviewers": json.dumps(reviewers, ensure_ascii=False)})
            conn.executemany("INSERT INTO calibration_items VALUES (:id, :no, :run, :sample, :scorer, :benchmark, "
                             ":source)", [{"id": session_id, **r} for r in rows])
            self.team.log(lead, "calibration_create", rows[0]["run"], "", "", "saved",
                          {"session_id": session_id, "name": name, "reviewers": reviewers, "n_items": len(rows)})
        return self.session(session_id)

    def session(self, session: str) -> CalibrationSession:
        rows = self.team.query("SELECT * FROM calibration_sessions WHERE session_id = :s OR name = :s", {"s": session})
        if not rows:
            raise TeamError(f"no calibration session '{session}'", field="session")
        r = rows[0]
        items = [CalibrationItem(item_no=i["item_no"], run_id=i["run_id"], sample_id=i["sample_id"],
                                 scorer=i["scorer"]) for i in self.team.query(
            "SELECT item_no, run_id, sample_id, scorer FROM calibration_items WHERE session_id = :s ORDER BY item_no",
            {"s": r["session_id"]})]
        return CalibrationSession(session_id=r["session_id"], name=r["name"], lead=r["lead"],
                                  created_at=r["created_at"], reviewers=json.loads(r["reviewers_json"]), items=items)

    def sessions(self, *, reviewer: str | None = None) -> list[CalibrationSession]:
        found = [self.session(r[0]) for r in self.team.query(
            "SELECT session_id FROM calibration_sessions ORDER BY created_at")]
        return [s for s in found if reviewer is None or reviewer in s.reviewers]

    def my_grades(self, session: str, reviewer: str) -> dict[int, int]:
        """item number → the reviewer's latest grade (their own only: grading stays blind to the others)."""
        info = self.session(session)
        return {r["item_no"]: r["score"] for r in self.team.query(
            "SELECT item_no, score FROM calibration_grades WHERE session_id = :s AND reviewer = :r ORDER BY grade_id",
            {"s": info.session_id, "r": reviewer})}

    def grade(self, session: str, item_no: int, *, reviewer: str, score: int, note: str = "") -> None:
        """A reviewer's blind grade of one item (a later grade of the same item replaces it; both are kept)."""
        info = self.session(session)
        reviewer = clean_expert_name(reviewer)
        if reviewer not in info.reviewers:
            raise TeamError(f"{reviewer} is not a reviewer of session '{info.name}'", field="reviewer")
        if not any(i.item_no == int(item_no) for i in info.items):
            raise TeamError(f"session '{info.name}' has no item {item_no}", field="item")
        score = check_score(score)
        with self.team.writing() as conn:
            conn.execute("INSERT INTO calibration_grades (session_id, item_no, reviewer, score, note, saved_at) "
                         "VALUES (:s, :no, :r, :score, :note, :at)",
                         {"s": info.session_id, "no": int(item_no), "r": reviewer, "score": score,
                          "note": (note or "").strip(), "at": self.clock()})
            item = next(i for i in info.items if i.item_no == int(item_no))
            self.team.log(reviewer, "calibration_grade", item.run_id, item.sample_id, item.scorer, "saved",
                          {"session_id": info.session_id, "item_no": int(item_no), "score": score})

    def report(self, session: str, *, n_boot: int = N_BOOT, seed: int = 0) -> CalibrationReport:
        """Each reviewer against the benchmark and against each other, and every item's grades (for the lead)."""
        info = self.session(session)
        benchmark = {r["item_no"]: r["benchmark"] for r in self.team.query(
            "SELECT item_no, benchmark FROM calibration_items WHERE session_id = :s", {"s": info.session_id})}
        grades: dict[str, dict[int, int]] = {reviewer: {} for reviewer in info.reviewers}
        for r in self.team.query("SELECT item_no, reviewer, score FROM calibration_grades WHERE session_id = :s "
                                 "ORDER BY grade_id", {"s": info.session_id}):
            grades.setdefault(r["reviewer"], {})[r["item_no"]] = r["score"]
        reviewers = []
        for reviewer in info.reviewers:
            mine = grades.get(reviewer, {})
            nos = sorted(mine)
            report = agreement_report([mine[n] for n in nos], [benchmark[n] for n in nos], ids=[str(n) for n in nos],
                                      name=reviewer, n_boot=n_boot, seed=seed) if nos else None
            reviewers.append(ReviewerResult(reviewer=reviewer, n_graded=len(nos), agreement=report))
        pairs = []
        for a, b in itertools.combinations(info.reviewers, 2):
            shared = sorted(set(grades.get(a, {})) & set(grades.get(b, {})))
            kappa = cohen_kappa([grades[a][n] for n in shared], [grades[b][n] for n in shared], n_boot=n_boot,
                                seed=seed) if shared else Estimate(note="no item graded by both")
            pairs.append(PairResult(a=a, b=b, n=len(shared), kappa=kappa))
        matrix = [[grades.get(r, {}).get(i.item_no) for r in info.reviewers] for i in info.items]
        alpha = krippendorff_alpha([[float("nan") if v is None else v for v in row] for row in matrix],
                                   n_boot=n_boot, seed=seed) if len(info.reviewers) >= 2 else \
            Estimate(note="one reviewer: no inter-reviewer agreement")
        items = []
        for item in info.items:
            given = {r: grades[r][item.item_no] for r in info.reviewers if item.item_no in grades.get(r, {})}
            correct = sum(1 for v in given.values() if v == benchmark[item.item_no])
            items.append(ItemResult(item_no=item.item_no, sample_id=item.sample_id, scorer=item.scorer,
                                    benchmark=benchmark[item.item_no], grades=given,
                                    share_correct=correct / len(given) if given else None))
        return CalibrationReport(session=info, reviewers=reviewers, pairs=pairs, alpha=alpha, items=items)

    def alignment(self, *, n_boot: int = 0) -> list[dict[str, Any]]:
        """Reviewer alignment over time: one row per session and reviewer, oldest session first (for the lead)."""
        out = []
        for info in self.sessions():
            for result in self.report(info.session_id, n_boot=n_boot).reviewers:
                agreement = result.agreement
                out.append({"session": info.name, "created_at": info.created_at, "reviewer": result.reviewer,
                            "n_graded": result.n_graded,
                            "exact": agreement.exact.value if agreement else None,
                            "kappa": agreement.kappa_quadratic.value if agreement else None})
        return out
