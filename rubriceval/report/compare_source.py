"""The comparison of two stored runs, read in SQL a scorer at a time: paired scores stream in the candidate's
dataset order (so the bootstrap draws exactly what it drew over loaded runs), and only the rows a comparison lists
— the worst drops, new unscored rows, seesaw samples, at most LISTED of each — are loaded whole. The counts are
over every row."""
from __future__ import annotations

import heapq
import json
from array import array
from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

from rubriceval.core.verdict import Verdict
from rubriceval.data.sample import Sample
from rubriceval.i18n import Lang
from rubriceval.report.conversations import answer_at, first_failing_turn
from rubriceval.report.reversed_order import Reversed
from rubriceval.store.runs import row_to_verdict

if TYPE_CHECKING:
    from rubriceval.audit.official import OfficialScores
    from rubriceval.report.compare_models import Comparison
    from rubriceval.report.run_data import RunData

LISTED = 500     # rows listed per scorer (worse, new unscored) and seesaw samples; the totals count them all
_IN_RUN = ("JOIN runs r{x} ON r{x}.run_id = {x}.run_id JOIN dataset_samples d{x} ON d{x}.dataset_id = r{x}.dataset_id "
           "AND d{x}.sample_id = {x}.sample_id")


def _verdicts(data: RunData, scorer: str, ids: list[str]) -> dict[str, Verdict]:
    if not ids:
        return {}
    rows = data.source.run_rows(f"SELECT v.* FROM verdicts v WHERE v.run_id = ? AND v.scorer = ? AND v.sample_id IN "
                                f"({','.join('?' * len(ids))})", (scorer, *ids))
    return {r["sample_id"]: row_to_verdict(r) for r in rows}


def compare_stored(a: RunData, b: RunData, *, n_boot: int, seed: int, confidence: float,
                   min_drop: Mapping[str, float], lang: Lang | None) -> Comparison:
    from rubriceval.report.compare_models import (
        Comparison,
        NewUnscored,
        PairedDelta,
        SampleChange,
        SeesawSample,
        direction_of,
        preview_answer,
    )
    from rubriceval.stats.bootstrap import paired_bootstrap_ci

    if a.source.store.path != b.source.store.path:
        raise ValueError("compare reads both runs from one run store")
    conn = b.source.conn
    official_a, official_b = a.source.official, b.source.official     # human decisions (audit/official.py)
    official = bool(official_a or official_b)
    summary_a = {s.scorer: s for s in a.summary.scorers}
    summary_b = {s.scorer: s for s in b.summary.scorers}
    comparison = Comparison(run_a=a.run_name, run_b=b.run_name, run_a_id=a.run_id, run_b_id=b.run_id,
                            language=lang or b.language, deltas=[], n_boot=n_boot, seed=seed, confidence=confidence)
    only_a = [s for s in summary_a if s not in summary_b]
    only_b = [s for s in summary_b if s not in summary_a]
    if only_a:
        comparison.notes.append(f"only in {a.run_name}: {', '.join(only_a)}")
    if only_b:
        comparison.notes.append(f"only in {b.run_name}: {', '.join(only_b)}")
    ds_a, ds_b = a.source.store.dataset_id(a.run_id), b.source.store.dataset_id(b.run_id)
    if ds_a != ds_b:
        shared = conn.execute("SELECT COUNT(*) FROM dataset_samples x JOIN dataset_samples y ON y.dataset_id = ? "
                              "AND y.sample_id = x.sample_id WHERE x.dataset_id = ?", (ds_b, ds_a)).fetchone()[0]
        n_a, n_b = a.n_samples, b.n_samples
        if not shared == n_a == n_b:
            comparison.notes.append(f"sample sets differ: {shared} shared, {n_a - shared} only in {a.run_name}, "
                                    f"{n_b - shared} only in {b.run_name}; only shared samples pair")
    scorers = [s for s in summary_b if s in summary_a]
    listed_ids: set[str] = set()
    for scorer in scorers:
        sa, sb = summary_a[scorer], summary_b[scorer]
        delta = PairedDelta(scorer=scorer, name=sb.name, kind=sb.kind, n_paired=0, version_a=sa.version,
                            version_b=sb.version)
        delta.n_only_a = _only_in_a(a, b, scorer, official)
        scores_a, scores_b = array("d"), array("d")
        min_change = min_drop.get(sb.kind, 0.0)
        worst: list[tuple[float, Reversed]] = []     # max-heap (negated) of the LISTED largest drops, by sample id
        worse_total = 0
        unscored_ids: list[str] = []
        for rows in conn.stream(
                "SELECT b.sample_id, a.score, b.score, CASE WHEN a.sample_id IS NULL THEN 0 ELSE 1 END FROM verdicts b "
                f"{_IN_RUN.format(x='b')} LEFT JOIN verdicts a ON a.run_id = ? AND a.sample_id = b.sample_id "
                "AND a.scorer = b.scorer WHERE b.run_id = ? AND b.scorer = ? ORDER BY db.position",
                (a.run_id, b.run_id, scorer), 5000):
            for sid, score_a, score_b, in_a in rows:
                if official:
                    pending_a = bool(in_a) and official_a.is_pending(sid, scorer)
                    pending_b = official_b.is_pending(sid, scorer)
                    if pending_a or pending_b:      # waits for a reviewer: in no pair, and not a new unscored row
                        delta.n_pending_a += pending_a
                        delta.n_pending_b += pending_b
                        continue
                    score_a = official_a.score(sid, scorer, score_a) if in_a else None
                    score_b = official_b.score(sid, scorer, score_b)
                    if score_b is None and score_a is not None:     # in the SQL count without decisions
                        delta.n_only_a += 1
                if score_b is None:
                    if not in_a or score_a is not None:
                        comparison.new_unscored_total += 1
                        if len(unscored_ids) < LISTED:
                            unscored_ids.append(sid)
                    continue
                if score_a is None:
                    delta.n_only_b += 1
                    continue
                scores_a.append(score_a)
                scores_b.append(score_b)
                diff = score_b - score_a
                if diff > 0:
                    delta.n_better += 1
                elif diff < 0:
                    delta.n_worse += 1
                else:
                    delta.n_same += 1
                if diff < 0 and abs(diff) >= min_change:
                    worse_total += 1
                    key = (-diff, Reversed(sid))               # the heap's smallest is the mildest kept drop
                    if len(worst) < LISTED:
                        heapq.heappush(worst, key)
                    elif key > worst[0]:
                        heapq.heapreplace(worst, key)
        delta.n_paired = len(scores_b)
        if delta.n_paired:
            va, vb = np.frombuffer(scores_a), np.frombuffer(scores_b)
            diffs = vb - va
            delta.mean_a, delta.mean_b = float(np.mean(va)), float(np.mean(vb))
            delta.delta = float(np.mean(diffs))
            delta.ci_low, delta.ci_high = paired_bootstrap_ci(diffs, n_boot, seed, confidence)
            if delta.ci_low is None:
                delta.note = "one paired sample: no confidence interval"
        else:
            delta.note = "no sample is scored in both runs"
        delta.direction = direction_of(delta.delta, delta.ci_low, delta.ci_high)
        if delta.version_changed:
            note = f"scorer changed between runs ({delta.version_a} → {delta.version_b}): scores may not be comparable"
            delta.note = f"{delta.note}; {note}" if delta.note else note
        ids = [sid for _, sid in sorted((-drop, desc.value) for drop, desc in worst)]   # by delta, then sample id
        rows_a, rows_b = _verdicts(a, scorer, ids), _verdicts(b, scorer, ids)
        samples_a, samples_b = a.samples_for(ids), b.samples_for(ids)
        changes = []
        for sid in ids:
            verdict_a, verdict_b = rows_a[sid], rows_b[sid]
            sample_a, sample_b = samples_a.get(sid), samples_b.get(sid)
            shown = sample_b or sample_a
            turn_a, turn_b = first_failing_turn(verdict_a), first_failing_turn(verdict_b)
            score_a = official_a.score(sid, scorer, verdict_a.score)
            score_b = official_b.score(sid, scorer, verdict_b.score)
            if score_a is None or score_b is None:      # cannot be: `ids` are drops between two official scores
                raise TypeError(f"listed drop {sid!r} of {scorer!r} lacks a score")
            changes.append(SampleChange(
                sample_id=sid, scorer=scorer, question=shown.question if shown else "", score_a=score_a,
                score_b=score_b, delta=score_b - score_a,
                answer_a=preview_answer(answer_at(sample_a, turn_a)) if sample_a else "",
                answer_b=preview_answer(answer_at(sample_b, turn_b)) if sample_b else "",
                feedback_a=preview_answer(verdict_a.feedback), feedback_b=preview_answer(verdict_b.feedback),
                first_failing_turn_a=turn_a, first_failing_turn_b=turn_b,
                decided_a=_decided_by(official_a, sid, scorer), decided_b=_decided_by(official_b, sid, scorer)))
        if changes:
            comparison.worse[scorer] = changes
            comparison.worse_total[scorer] = worse_total
        if unscored_ids:
            rows_a, rows_b = _verdicts(a, scorer, unscored_ids), _verdicts(b, scorer, unscored_ids)
            questions = _questions(a, b, unscored_ids)
            comparison.new_unscored += [NewUnscored(
                sample_id=sid, scorer=scorer, question=questions.get(sid, ""),
                score_a=official_a.score(sid, scorer, rows_a[sid].score) if sid in rows_a else None,
                unscored_kind=rows_b[sid].unscored_kind or "error", unscored_reason=rows_b[sid].unscored_reason or "")
                for sid in unscored_ids]
        listed_ids.update(ids)
        comparison.deltas.append(delta)
    comparison.seesaw_up = [d.scorer for d in comparison.deltas if d.direction == "better"]
    comparison.seesaw_down = [d.scorer for d in comparison.deltas if d.direction == "worse"]
    comparison.seesaw_samples, comparison.seesaw_total = _seesaw(a, b, scorers, {s: summary_b[s].kind for s in
                                                                                  scorers}, min_drop, SeesawSample)
    return comparison


def _decided_by(official: OfficialScores, sample_id: str, scorer: str) -> str:
    """'appeal · qa_zhao' when the official score is a human decision, else ''."""
    decision = official.decision(sample_id, scorer)
    return "" if decision is None else f"{decision.source} · {decision.by}"


def _only_in_a(a: RunData, b: RunData, scorer: str, official: bool) -> int:
    """Rows scored in the baseline and unscored or absent in the candidate. With human decisions, only the rows
    absent from the candidate are counted here (official scores decide them); the candidate's unscored rows are
    counted as the paired stream reads them."""
    conn = b.source.conn
    join = (f"FROM verdicts a {_IN_RUN.format(x='a')} LEFT JOIN verdicts b ON b.run_id = ? "
            "AND b.sample_id = a.sample_id AND b.scorer = a.scorer WHERE a.run_id = ? AND a.scorer = ?")
    if not official:
        return conn.execute(f"SELECT COUNT(*) {join} AND a.score IS NOT NULL AND b.score IS NULL",
                            (b.run_id, a.run_id, scorer)).fetchone()[0]
    return sum(1 for sid, score in conn.execute(f"SELECT a.sample_id, a.score {join} AND b.sample_id IS NULL",
                                                (b.run_id, a.run_id, scorer))
               if a.source.official.score(sid, scorer, score) is not None)


def _questions(a: RunData, b: RunData, ids: list[str]) -> dict[str, str]:
    samples: dict[str, Sample] = {**a.samples_for(ids), **b.samples_for(ids)}
    return {sid: s.question for sid, s in samples.items()}


def _moves(scores: Mapping[str, tuple[float | None, float | None]], scorers: list[str], kinds: Mapping[str, str],
           min_drop: Mapping[str, float]) -> tuple[dict[str, tuple[float, float]], dict[str, tuple[float, float]]]:
    """(better, worse): the scorers, in the comparison's order, whose paired score moved beyond its kind's minimum."""
    better: dict[str, tuple[float, float]] = {}
    worse: dict[str, tuple[float, float]] = {}
    for scorer in scorers:
        score_a, score_b = scores.get(scorer, (None, None))
        if score_a is None or score_b is None:
            continue
        diff = score_b - score_a
        if diff == 0 or abs(diff) < min_drop.get(kinds[scorer], 0.0):
            continue
        (better if diff > 0 else worse)[scorer] = (score_a, score_b)
    return better, worse


def _seesaw(a: RunData, b: RunData, scorers: list[str], kinds: Mapping[str, str], min_drop: Mapping[str, float],
            model: type) -> tuple[list, int]:
    """Samples better on one scorer and worse on another (each beyond its kind's minimum change), by sample id, on
    official scores: samples without a human decision are found in SQL on the stored scores, the few with one are
    read and decided here on their official scores."""
    if not scorers:
        return [], 0
    conn = b.source.conn
    official_a, official_b = a.source.official, b.source.official
    decided = sorted({sid for sid, scorer in [*official_a.decisions, *official_b.decisions] if scorer in scorers})
    marks = ",".join("?" * len(scorers))
    change = "CASE b.kind WHEN 'rubric' THEN :rubric ELSE :metric END"
    joined = (f"FROM verdicts b {_IN_RUN.format(x='b')} JOIN verdicts a ON a.run_id = :a AND a.sample_id = b.sample_id "
              f"AND a.scorer = b.scorer WHERE b.run_id = :b AND b.scorer IN ({marks})")
    pairs = joined + " AND a.score IS NOT NULL AND b.score IS NOT NULL" + (
        f" AND b.sample_id NOT IN (SELECT i.value FROM {conn.sql.json_items(':decided', 'i')})" if decided else "")
    params = {"a": a.run_id, "b": b.run_id, "rubric": min_drop.get("rubric", 0.0),
              "metric": min_drop.get("metric", 0.0), "decided": json.dumps(decided)}
    named = dict(params, **{f"s{i}": s for i, s in enumerate(scorers)})
    named_in = "IN (" + ",".join(f":s{i}" for i in range(len(scorers))) + ")"
    pairs, joined = pairs.replace(f"IN ({marks})", named_in), joined.replace(f"IN ({marks})", named_in)
    seesaw = (f"SELECT b.sample_id {pairs} GROUP BY b.sample_id HAVING "
              f"SUM(CASE WHEN b.score > a.score AND ABS(b.score - a.score) >= {change} THEN 1 ELSE 0 END) > 0 AND "
              f"SUM(CASE WHEN b.score < a.score AND ABS(b.score - a.score) >= {change} THEN 1 ELSE 0 END) > 0")
    total = conn.execute(f"SELECT COUNT(*) FROM ({seesaw}) AS seesaw", named).fetchone()[0]
    ids = [r[0] for r in conn.execute(f"{seesaw} ORDER BY b.sample_id LIMIT {LISTED}", named)]
    moved: dict[str, tuple[dict, dict, list[str]]] = {}
    if decided:                         # the samples a person decided a score of: on their official scores
        scores: dict[str, dict[str, tuple[float | None, float | None]]] = {}
        for sid, scorer, score_a, score_b in conn.execute(
                f"SELECT b.sample_id, b.scorer, a.score, b.score {joined} AND b.sample_id IN "
                f"(SELECT i.value FROM {conn.sql.json_items(':decided', 'i')})", named):
            scores.setdefault(sid, {})[scorer] = (official_a.score(sid, scorer, score_a),
                                                  official_b.score(sid, scorer, score_b))
        for sid, by_scorer in scores.items():
            better, worse = _moves(by_scorer, scorers, kinds, min_drop)
            if better and worse:
                human = [sc for sc in scorers if official_a.decision(sid, sc) or official_b.decision(sid, sc)]
                moved[sid] = (better, worse, human)
        total += len(moved)
        ids = sorted([*ids, *moved])[:LISTED]
    if not ids:
        return [], total
    questions = _questions(a, b, ids)
    from_sql = [sid for sid in ids if sid not in moved]
    by_sample: dict[str, dict[str, tuple[float, float]]] = {}
    if from_sql:
        for sid, scorer, score_a, score_b in conn.execute(
                f"SELECT b.sample_id, b.scorer, a.score, b.score {pairs} AND b.sample_id IN "
                f"(SELECT i.value FROM {conn.sql.json_items(':ids', 'i')})", dict(named, ids=json.dumps(from_sql))):
            by_sample.setdefault(sid, {})[scorer] = (score_a, score_b)
    found = []
    for sid in ids:
        better, worse, human = moved[sid] if sid in moved else (*_moves(by_sample.get(sid, {}), scorers, kinds,
                                                                         min_drop), [])
        found.append(model(sample_id=sid, question=questions.get(sid, ""), better=better, worse=worse, human=human))
    return found, total
