"""Estimates from a planned audit task (rubriceval/audit/plan.py): from the random part only, each reviewed item
weighted by N_h / n_h (Hájek: Σ w·x / Σ w), the experts' pass rate, the judge's pass rate on the same items and the
judge–expert agreement (exact level, and pass/fail) — unbiased for the run although strata were sampled at different
rates; unweighted figures beside them, and the risk-first additions apart (reviewed, never in the estimates).

An item's expert label is the lead's adjudication when there is one, else the median of its experts' scores (half
up). Items not reviewed yet are left out, and the output says how many.
"""
from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

from rubriceval.audit.team_plan import plan_rows
from rubriceval.store.team_models import TeamError

STATEMENT = ("Estimates use the random part only, each item weighted by N_h/n_h (its stratum's verdicts over those "
             "drawn): unbiased for the run. Risk-first additions are shown apart and are not in the estimates.")


class Rate(BaseModel):
    weighted: float | None = None
    unweighted: float | None = None


class PlanEstimate(BaseModel):
    scorer: str
    n_random: int                 # random items in the task
    n_random_reviewed: int
    population: float             # Σ weights of the reviewed random items (≈ the verdicts they stand for)
    expert_pass_rate: Rate
    judge_pass_rate: Rate
    exact_agreement: Rate
    pass_agreement: Rate
    n_risk: int
    n_risk_reviewed: int
    risk_exact_agreement: float | None = None
    risk_by_kind: dict[str, int] = {}


def _label(scores: Sequence[int], adjudicated: int | None) -> int | None:
    if adjudicated is not None:
        return adjudicated
    if not scores:
        return None
    return int(math.floor(statistics.median(scores) + 0.5))


def _rate(pairs: Sequence[tuple[float, bool]]) -> Rate:
    if not pairs:
        return Rate()
    total = sum(w for w, _ in pairs)
    return Rate(weighted=sum(w for w, x in pairs if x) / total, unweighted=sum(1 for _, x in pairs if x) / len(pairs))


def plan_estimates(team: Any, task: str) -> list[PlanEstimate]:
    info = team.task(task)
    plan = plan_rows(team, info.task_id)
    if not plan:
        raise TeamError(f"task '{info.name}' was not created with a sampling plan", field="task",
                        hint="audit-task create … --plan '5% per agent_id per week, min 3'")
    items = team.query("SELECT item_no, sample_id, scorer, judge_score, threshold FROM team_task_items "
                       "WHERE task_id = :t ORDER BY item_no", {"t": info.task_id})
    scores: dict[int, list[int]] = {}
    for r in team.query("SELECT item_no, score FROM team_assignments WHERE task_id = :t AND state = 'scored' "
                        "AND score IS NOT NULL", {"t": info.task_id}):
        scores.setdefault(r[0], []).append(int(r[1]))
    adjudicated = {r[0]: int(r[1]) for r in team.query(
        "SELECT item_no, label FROM team_adjudications WHERE task_id = :t ORDER BY adjudication_id", {"t": info.task_id})}
    out: dict[str, dict[str, Any]] = {}
    for item_no, _sample, scorer, judge, threshold in items:
        if scorer in info.scorecards:        # a card's items: card_plan_estimates
            continue
        row = plan[item_no]
        acc = out.setdefault(scorer, {"random": [], "risk": [], "n_random": 0, "n_risk": 0, "kinds": {}})
        label = _label(scores.get(item_no, []), adjudicated.get(item_no))
        if row["selection"] == "random":
            acc["n_random"] += 1
        else:
            acc["n_risk"] += 1
            for kind in row["selection"].removeprefix("risk:").split(","):
                acc["kinds"][kind] = acc["kinds"].get(kind, 0) + 1
        if label is None or judge is None:
            continue
        judge_level = int(math.floor(judge + 0.5))
        fact = (label, judge_level, label >= threshold, judge >= threshold)
        if row["selection"] == "random":
            acc["random"].append((float(row["weight"]), fact))
        else:
            acc["risk"].append(fact)
    estimates = []
    for scorer, acc in out.items():
        random_part, risk = acc["random"], acc["risk"]
        estimates.append(PlanEstimate(
            scorer=scorer, n_random=acc["n_random"], n_random_reviewed=len(random_part),
            population=sum(w for w, _ in random_part),
            expert_pass_rate=_rate([(w, f[2]) for w, f in random_part]),
            judge_pass_rate=_rate([(w, f[3]) for w, f in random_part]),
            exact_agreement=_rate([(w, f[0] == f[1]) for w, f in random_part]),
            pass_agreement=_rate([(w, f[2] == f[3]) for w, f in random_part]),
            n_risk=acc["n_risk"], n_risk_reviewed=len(risk),
            risk_exact_agreement=sum(1 for f in risk if f[0] == f[1]) / len(risk) if risk else None,
            risk_by_kind=acc["kinds"]))
    return estimates


def format_estimates(estimates: Sequence[PlanEstimate]) -> str:
    from rubriceval.common.tables import text_table

    def pct(rate: Rate) -> str:
        if rate.weighted is None:
            return "n/a"
        return f"{rate.weighted:.1%} (unweighted {rate.unweighted:.1%})"
    rows = [[e.scorer, f"{e.n_random_reviewed}/{e.n_random}", f"{e.population:.0f}", pct(e.expert_pass_rate),
             pct(e.judge_pass_rate), pct(e.exact_agreement), pct(e.pass_agreement),
             f"{e.n_risk_reviewed}/{e.n_risk} " + ", ".join(f"{k} {v}" for k, v in e.risk_by_kind.items()),
             "n/a" if e.risk_exact_agreement is None else f"{e.risk_exact_agreement:.1%}"] for e in estimates]
    table = text_table(["rubric", "random reviewed", "stands for", "expert pass rate", "judge pass rate",
                        "exact agreement", "pass/fail agreement", "risk-first reviewed", "risk exact agreement"], rows)
    return f"{table}\n\n{STATEMENT}\n"


# -- scorecard tasks ----------------------------------------------------------------------------------------------
CARD_STATEMENT = ("Each agent's official mean total and each item's agreement (the reviewers' status = the machine's) "
                  "are Hájek estimates over the random part, each reviewed conversation weighted by N_h/n_h; the "
                  "official total is the one every surface shows (audit/scorecard_official.py). Risk-first additions "
                  "are not in them.")


class AgentEstimate(BaseModel):
    scorecard: str
    segment: str                  # the plan's first field's value (the agent), '(none)' without one
    n_reviewed: int
    population: float             # Σ weights: the conversations they stand for
    official_mean: float | None   # Hájek: Σ w·total / Σ w
    unweighted_mean: float | None


class ItemAgreement(BaseModel):
    scorecard: str
    item: str
    name: str
    n_reviewed: int
    agreement: Rate               # share of reviewed conversations where the reviewer's status = the machine's


class CardPlanEstimate(BaseModel):
    agents: list[AgentEstimate]
    items: list[ItemAgreement]
    n_random: int
    n_random_reviewed: int
    n_risk: int


def card_plan_estimates(team: Any, task: str) -> CardPlanEstimate:
    """A planned card task's Hájek estimates: per agent (the plan's first segment) the official mean total, per
    card item the reviewers' agreement with the machine."""
    from rubriceval.audit.scorecard_official import CardDecisions
    from rubriceval.audit.team_cards import card_verdict, run_cards, statuses_of

    info = team.task(task)
    plan = plan_rows(team, info.task_id)
    if not plan:
        raise TeamError(f"task '{info.name}' was not created with a sampling plan", field="task",
                        hint="audit-task create … --scorecards ID --plan '5% per agent_id per week, min 2'")
    cards = run_cards(team, info.run_id)
    decisions = CardDecisions.load(team.audit.runs, info.run_id)
    statuses: dict[int, list[dict[str, str]]] = {}
    for r in team.query("SELECT item_no, expert, tags FROM team_reviews WHERE task_id = :t AND kind = 'score' "
                        "ORDER BY review_id", {"t": info.task_id}):
        statuses.setdefault(r[0], []).append(statuses_of(r[2]))
    totals: dict[tuple[str, str], list[tuple[float, float]]] = {}
    agree: dict[tuple[str, str], list[tuple[float, bool]]] = {}
    n_random = n_reviewed = n_risk = 0
    for item_no, sample_id, scorer in team.query("SELECT item_no, sample_id, scorer FROM team_task_items WHERE "
                                                 "task_id = :t ORDER BY item_no", {"t": info.task_id}):
        card, row = cards.get(scorer), plan[item_no]
        if card is None:
            continue
        if row["selection"] != "random":
            n_risk += 1
            continue
        n_random += 1
        if item_no not in statuses:
            continue
        n_reviewed += 1
        weight = float(row["weight"])
        machine = card_verdict(team, info.run_id, sample_id, scorer)
        official, _ = decisions.official(card, machine)
        segment = str(row["stratum"]).split("|")[0]
        if official.totals.total is not None:
            totals.setdefault((scorer, segment), []).append((weight, float(official.totals.total)))
        said = {o.item: o.status for o in machine.outcomes}
        for given in statuses[item_no]:
            for item, status in given.items():
                agree.setdefault((scorer, item), []).append((weight / len(statuses[item_no]), status == said.get(item)))
    agents = [AgentEstimate(scorecard=c, segment=seg, n_reviewed=len(pairs), population=sum(w for w, _ in pairs),
                            official_mean=sum(w * x for w, x in pairs) / sum(w for w, _ in pairs),
                            unweighted_mean=sum(x for _, x in pairs) / len(pairs))
              for (c, seg), pairs in sorted(totals.items())]
    names = {(c.id, i.id): i.label for c in cards.values() for i in c.items}
    items = [ItemAgreement(scorecard=c, item=i, name=names.get((c, i), i), n_reviewed=len(pairs),
                           agreement=_rate(pairs)) for (c, i), pairs in sorted(agree.items())]
    return CardPlanEstimate(agents=agents, items=items, n_random=n_random, n_random_reviewed=n_reviewed,
                            n_risk=n_risk)


def format_card_estimates(e: CardPlanEstimate) -> str:
    from rubriceval.common.tables import text_table

    def mean(x: float | None) -> str:
        return "n/a" if x is None else f"{x:.1f}"
    agents = text_table(["scorecard", "agent", "reviewed", "stands for", "official mean total (weighted)",
                         "unweighted"], [[a.scorecard, a.segment, str(a.n_reviewed), f"{a.population:.0f}",
                                          mean(a.official_mean), mean(a.unweighted_mean)] for a in e.agents])
    items = text_table(["scorecard", "item", "reviewed", "agreement with the machine (weighted)", "unweighted"],
                       [[i.scorecard, f"{i.name} ({i.item})" if i.name != i.item else i.item, str(i.n_reviewed),
                         "n/a" if i.agreement.weighted is None else f"{i.agreement.weighted:.1%}",
                         "n/a" if i.agreement.unweighted is None else f"{i.agreement.unweighted:.1%}"]
                        for i in e.items])
    return (f"random part: {e.n_random_reviewed}/{e.n_random} conversations reviewed; risk-first additions: "
            f"{e.n_risk}\n\n{agents}\n\n{items}\n\n{CARD_STATEMENT}\n")
