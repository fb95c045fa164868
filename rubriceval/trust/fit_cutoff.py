"""`rubriceval calibrate --fit-thresholds --rubric ID --labels TURNS`: fit the p(yes) cut-off of each per-turn
question (`ask:` predicates) to audited turns, for the judge that answered them.

Audited turns: a JSONL/CSV file of what an expert says the right answer is, one row per (conversation, turn,
question): `sample_id`, `turn`, `question` (its text) or `item` (a check id whose predicates ask one question), and
`answer` (yes/no, true/false, 1/0). The judge's p(yes) for those turns are read from a run's verdicts
(`details.turn_questions`, default: the newest run that used the rubric); turns the run never asked about (a check
stops at its first decisive turn) have no p(yes) and are counted, not guessed. A row without a `turn` names a
rubric checklist question (`item` = its id, or `question` = its text) about the whole sample: its p(yes) is read
from the verdict's `details.checklist`, and an accepted fit is written as the question's `calibration:` entry for
the judge (rubric/calibration.ItemCalibration), the one model the scorecard items use too.

Per question: the audited turns are split (stratified by the expert's answer, seeded) into a fitting half and a
held-out half; on the fitting half the cut-off that maximises balanced accuracy is chosen (ties: nearest 0.5); it
is PROPOSED only when its balanced accuracy on the held-out half beats the current cut-off's (0.5, or the one the
question already has for this judge) — otherwise refused, and the current one stays. The AUC of p(yes) on the
held-out half is reported either way. An accepted cut-off is written into every predicate that asks the question,
with the judge it was fitted for (`cutoff: {value, judge_model, auc, …}`): with any other judge the question uses 0.5
again. The proposal is written as YAML in `proposed_rubrics/` beside the store;
nothing changes in the rubric in use.

The same fit serves reviewed scorecard items (`rubriceval scorecard fit`, trust/fit_reviews.py): there the labelled
items are reviewers' decisions and the cut-off to beat is the item's current one for the judge (`current`, with its
undecided `band`), not always 0.5.
"""
from __future__ import annotations

import csv
import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel

from rubriceval.common.errors import DatasetError, RubricEvalError
from rubriceval.rubric.calibration import ItemCalibration
from rubriceval.rubric.items import ChecklistQuestion
from rubriceval.rubric.predicate import DEFAULT_CUTOFF, FittedCutoff, Predicate
from rubriceval.rubric.schema import Rubric

MIN_PER_CLASS = 2          # audited yes and no turns each half needs


class CutoffFit(BaseModel):
    question: str
    n_train: int
    n_heldout: int
    auc_heldout: float | None
    cutoff: float
    balanced_accuracy_heldout: float
    balanced_accuracy_default_heldout: float
    accepted: bool
    reason: str
    current: float = DEFAULT_CUTOFF       # the cut-off the fit had to beat (balanced_accuracy_default_heldout's)
    enough: bool = True                   # False: too few labelled yes and no items in a half to fit at all

    def line(self, unit: str = "turns") -> str:
        auc = "–" if self.auc_heldout is None else f"{self.auc_heldout:.2f}"
        verdict = "PROPOSED" if self.accepted else "REFUSED"
        if not self.enough:
            return f"REFUSED for “{self.question}”: {self.reason} ({self.n_train} {unit} to fit, {self.n_heldout} held out)"
        return (f"{verdict} cut-off {self.cutoff:.2f} for “{self.question}”: held-out AUC {auc}, balanced accuracy "
                f"{self.balanced_accuracy_heldout:.2f} vs {self.balanced_accuracy_default_heldout:.2f} at "
                f"{self.current:g} ({self.n_train} {unit} to fit, {self.n_heldout} held out; {self.reason})")


def auc(p_yes: list[float], labels: list[bool]) -> float | None:
    """P(a yes turn gets a higher p(yes) than a no turn), ties counted half (Mann–Whitney)."""
    pos = [p for p, y in zip(p_yes, labels) if y]
    neg = [p for p, y in zip(p_yes, labels) if not y]
    if not pos or not neg:
        return None
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


Band = tuple[float, float]


def _undecided(p: float, band: Band | None) -> bool:
    return band is not None and band[0] <= p <= band[1]


def balanced_accuracy(p_yes: list[float], labels: list[bool], cutoff: float, band: Band | None = None) -> float:
    """Mean of the yes and the no items' share decided right; an answer inside the undecided `band` decides nothing,
    so it counts as not right (the band is the same for the rules compared: only their cut-offs differ)."""
    pos = [p >= cutoff and not _undecided(p, band) for p, y in zip(p_yes, labels) if y]
    neg = [p < cutoff and not _undecided(p, band) for p, y in zip(p_yes, labels) if not y]
    return (sum(pos) / len(pos) + sum(neg) / len(neg)) / 2


def split_halves(labels: list[bool], holdout_fraction: float, seed: int) -> tuple[list[int], list[int]]:
    """(fitting, held-out) indices: each answer's items shuffled (seeded) and `holdout_fraction` of them held out."""
    rng = np.random.default_rng(seed)
    train, held = [], []
    for value in (True, False):
        index = [i for i, y in enumerate(labels) if y == value]
        rng.shuffle(index)
        cut = int(round(len(index) * holdout_fraction))
        held += index[:cut]
        train += index[cut:]
    return sorted(train), sorted(held)


def fit_cutoff(question: str, p_yes: list[float], labels: list[bool], *, holdout_fraction: float = 0.5,
               seed: int = 0, current: float = DEFAULT_CUTOFF, band: Band | None = None, unit: str = "turns"
               ) -> CutoffFit:
    """The cut-off for one question, accepted only when it beats the `current` one (0.5, or the cut-off the item
    already has for this judge) on the held-out half (see module doc). `band`: the item's undecided band, kept as it
    is by both rules compared. `unit`: what the labelled items are, for the reason ("turns", "reviews")."""
    train, held = split_halves(labels, holdout_fraction, seed)
    n_train, n_heldout = len(train), len(held)
    for name, part in (("fitting", train), ("held-out", held)):
        yes = sum(labels[i] for i in part)
        if min(yes, len(part) - yes) < MIN_PER_CLASS:
            return CutoffFit(question=question, n_train=n_train, n_heldout=n_heldout, auc_heldout=None, cutoff=current,
                             balanced_accuracy_heldout=0.0, balanced_accuracy_default_heldout=0.0, accepted=False,
                             current=current, enough=False,
                             reason=f"the {name} half needs at least {MIN_PER_CLASS} {_labelled(unit)}")
    tp, ty = [p_yes[i] for i in train], [labels[i] for i in train]
    values = sorted(set(tp))
    candidates = [(a + b) / 2 for a, b in zip(values, values[1:])] + [current]
    best = max(candidates, key=lambda c: (balanced_accuracy(tp, ty, c, band), -abs(c - current)))
    hp, hy = [p_yes[i] for i in held], [labels[i] for i in held]
    fitted, default = balanced_accuracy(hp, hy, best, band), balanced_accuracy(hp, hy, current, band)
    accepted = fitted > default
    reason = (f"beats {current:g} on held-out {unit}" if accepted else
              f"does not beat {current:g} on held-out {unit} ({fitted:.2f} ≤ {default:.2f})")
    return CutoffFit(question=question, n_train=n_train, n_heldout=n_heldout, auc_heldout=auc(hp, hy),
                     cutoff=round(best, 4), balanced_accuracy_heldout=fitted, balanced_accuracy_default_heldout=default, accepted=accepted,
                     current=current, reason=reason)


def _labelled(unit: str) -> str:
    return "audited yes and no turns" if unit == "turns" else f"reviewed yes and no {unit.removesuffix('s')} decisions"


def _answer(value: Any, file: str, line: int) -> bool:
    text = str(value).strip().lower()
    if text in ("yes", "y", "true", "1", "是"):
        return True
    if text in ("no", "n", "false", "0", "否"):
        return False
    raise DatasetError(f"answer {value!r} is not yes/no", file=file, line=line, field="answer")


def read_turn_labels(path: str | Path) -> list[dict[str, Any]]:
    """Rows {sample_id, turn, question | item, answer} from JSONL or CSV, errors naming file:line [field]."""
    file = str(path)
    text = Path(path).read_text(encoding="utf-8")
    if file.endswith(".csv"):
        records = [(n, row) for n, row in enumerate(csv.DictReader(text.splitlines()), start=2)]
    else:
        records = []
        for n, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                try:
                    records.append((n, json.loads(line)))
                except json.JSONDecodeError as exc:
                    raise DatasetError(f"not JSON: {exc.msg}", file=file, line=n) from None
    rows = []
    for n, row in records:
        for field in ("sample_id", "answer"):
            if row.get(field) in (None, ""):
                raise DatasetError(f"missing {field}", file=file, line=n, field=field)
        if not (row.get("question") or row.get("item")):
            raise DatasetError("give the question (its text) or the item (a check id, or a checklist question's id)",
                               file=file, line=n, field="question")
        turn = None                       # no turn: a checklist question about the whole sample
        if row.get("turn") not in (None, ""):
            try:
                turn = int(row["turn"])
            except (TypeError, ValueError):
                raise DatasetError(f"turn {row['turn']!r} is not a number", file=file, line=n,
                                   field="turn") from None
        rows.append({"sample_id": str(row["sample_id"]), "turn": turn, "question": row.get("question"),
                     "item": row.get("item"), "answer": _answer(row["answer"], file, n)})
    return rows


def rubric_predicates(rubric: Rubric) -> list[tuple[str, Predicate]]:
    """(check id, predicate with a question) for every question a check asks."""
    from rubriceval.scoring.turn_questions import item_questions

    return [(item.id, predicate) for item in rubric.check_items for predicate, _ in item_questions(item)]


def checklist_questions(rubric: Rubric) -> dict[str, ChecklistQuestion]:
    """The rubric's checklist questions by id (asked about the whole sample)."""
    return {q.id: q for item in rubric.checklist_items for q in item.questions}


def pair_turns(rubric: Rubric, answers: dict[tuple[str, str, int | None], float], labels: list[dict[str, Any]]
               ) -> tuple[dict[str, tuple[list[float], list[bool]]], int]:
    """Per question: the judge's p(yes) and the expert's answer on each audited turn the run asked about (a row
    without a turn: a checklist question about the whole sample, `answers` keyed with turn None); and how many
    audited rows had no p(yes)."""
    checklist = checklist_questions(rubric)
    by_text = {q.ask: q for q in checklist.values()}
    by_item: dict[str, set[str]] = {}
    for item_id, predicate in rubric_predicates(rubric):
        if predicate.ask is not None:         # always: rubric_predicates keeps the predicates that ask
            by_item.setdefault(item_id, set()).add(predicate.ask)
    pairs: dict[str, tuple[list[float], list[bool]]] = {}
    unasked = 0
    for row in labels:
        if row["turn"] is None:
            asked = checklist.get(row["item"]) if row["item"] else by_text.get(row["question"])
            if asked is None:
                named = row["item"] or row["question"]
                raise RubricEvalError(f"a row without a turn names a checklist question: '{named}' is none of "
                                      f"{sorted(checklist) or 'the rubric (it has none)'}", field="item")
            questions = {asked.ask}
        else:
            questions = {row["question"]} if row["question"] else by_item.get(row["item"], set())
        if len(questions) != 1:
            raise RubricEvalError(f"item '{row['item']}' asks {len(questions)} question(s): name the question",
                                  field="item")
        question = next(iter(questions))
        p = answers.get((row["sample_id"], question, row["turn"]))
        if p is None:
            unasked += 1
            continue
        ps, ys = pairs.setdefault(question, ([], []))
        ps.append(p)
        ys.append(row["answer"])
    return pairs, unasked


def with_cutoffs(rubric: Rubric, cutoffs: dict[str, FittedCutoff],
                 calibrations: dict[str, ItemCalibration] | None = None) -> Rubric:
    """The rubric with each fitted cut-off written into every predicate that asks its question, and each checklist
    question's calibration (by question id) into that question — replacing one for the same judge."""
    calibrations = calibrations or {}

    def fix(value: Any) -> Any:
        if isinstance(value, dict):
            if "id" in value and "ask" in value and value["id"] in calibrations:      # a checklist question
                fitted = calibrations[value["id"]]
                kept = [c for c in value.get("calibration") or [] if c.get("judge") != fitted.judge]
                value = {**value, "calibration": [*kept, fitted.model_dump(exclude_none=True)]}
            elif "id" not in value and value.get("ask") in cutoffs:                   # a per-turn predicate
                value = {**value, "cutoff": cutoffs[value["ask"]].model_dump()}
            return {k: fix(v) for k, v in value.items()}
        if isinstance(value, list):
            return [fix(v) for v in value]
        return value
    changed = Rubric.model_validate(fix(rubric.model_dump(exclude_none=True)))
    changed.source_file = rubric.source_file
    return changed


def fit_thresholds(store_path: str | Path, rubric_id: str, labels_file: str | Path, *, run: str | None = None,
                   holdout_fraction: float = 0.5, seed: int = 0, proposal_dir: str | Path | None = None
                   ) -> tuple[list[CutoffFit], int, Path | None]:
    """Fit every audited question's cut-off from a run's answers; write the proposal when one is accepted."""
    from rubriceval.store.audit import AuditStore
    from rubriceval.store.location import folder_beside_store, store_target
    from rubriceval.trust.calibrate import rubric_yaml
    from rubriceval.trust.human_scores import choose_runs, stored_rubric_definition

    labels = read_turn_labels(labels_file)
    store_path = store_target(store_path)
    with AuditStore(store_path) as store:
        _, chosen = choose_runs(store, rubric_id, run, None)
        info = chosen[-1][0]
        rubric = Rubric.model_validate(stored_rubric_definition(store, info.run_id, rubric_id))
        judge_model = info.config.judge.get("model", "") if isinstance(info.config.judge, dict) else ""
        verdicts = [v for v in store.runs.verdicts(info.run_id) if v.scorer == rubric_id]
    answers: dict[tuple[str, str, int | None], float] = {
        (v.sample_id, a["question"], a["turn"]): a["p_yes"] for v in verdicts
        for a in (v.details or {}).get("turn_questions", []) if a.get("p_yes") is not None}
    checklist = checklist_questions(rubric)
    for v in verdicts:               # checklist answers: details.checklist.<item>.questions.<id>.p_yes
        for item in ((v.details or {}).get("checklist") or {}).values():
            for qid, answer in (item.get("questions") or {}).items():
                if qid in checklist and answer.get("p_yes") is not None:
                    answers[(v.sample_id, checklist[qid].ask, None)] = answer["p_yes"]
    if not judge_model:
        raise RubricEvalError(f"run '{info.run_id}' does not name its judge model: a cut-off is tied to one judge")
    pairs, unasked = pair_turns(rubric, answers, labels)
    by_text = {q.ask: q for q in checklist.values()}
    asks = {predicate.ask: predicate for _, predicate in rubric_predicates(rubric)}
    fits = []
    for q, (ps, ys) in pairs.items():
        if q in by_text:             # a checklist question: its calibration for this judge, else 0.5
            now = by_text[q].calibration_for(judge_model)
            current, band = (now.cutoff, now.undecided) if now is not None else (DEFAULT_CUTOFF, None)
        else:                        # a per-turn question: its fitted cut-off for this judge, else 0.5
            current, band = asks[q].cutoff_for(judge_model)[0] if q in asks else DEFAULT_CUTOFF, None
        fits.append(fit_cutoff(q, ps, ys, holdout_fraction=holdout_fraction, seed=seed, current=current, band=band))
    accepted = {f.question: FittedCutoff(value=f.cutoff, judge_model=judge_model, auc=f.auc_heldout,
                                         n_train=f.n_train, n_heldout=f.n_heldout,
                                         accuracy_heldout=round(f.balanced_accuracy_heldout, 4),
                                         accuracy_default_heldout=round(f.balanced_accuracy_default_heldout, 4))
                for f in fits if f.accepted and f.question not in by_text}
    fitted_at = datetime.now(timezone.utc).isoformat(timespec="seconds")
    calibrations = {by_text[f.question].id: ItemCalibration(
        judge=judge_model, cutoff=f.cutoff, method="reviews", n=f.n_train + f.n_heldout, fitted_at=fitted_at,
        undecided=_band(by_text[f.question], judge_model),
        auc=None if f.auc_heldout is None else round(f.auc_heldout, 4),
        note=f"audits: held-out balanced accuracy {f.balanced_accuracy_heldout:.2f} vs "
             f"{f.balanced_accuracy_default_heldout:.2f} at {f.current:g}") for f in fits
        if f.accepted and f.question in by_text}
    if not accepted and not calibrations:
        return fits, unasked, None
    proposed = with_cutoffs(rubric, accepted, calibrations)
    folder = Path(proposal_dir) if proposal_dir is not None else folder_beside_store(store_path) / "proposed_rubrics"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{rubric.id}.cutoffs.{judge_model.replace('/', '_')}.proposed.yaml"
    header = "\n".join(["Proposed by `rubriceval calibrate --fit-thresholds` for judge " + judge_model + ":",
                        *[f.line() for f in fits]])
    path.write_text(rubric_yaml(proposed, header), encoding="utf-8")
    return fits, unasked, path


def _band(question: ChecklistQuestion, judge: str) -> tuple[float, float] | None:
    now = question.calibration_for(judge)
    return now.undecided if now is not None else None
