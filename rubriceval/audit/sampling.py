"""Which verdicts an audit task holds, and which experts review each.

Stratified random sampling is the default because it keeps the agreement estimate unbiased: strata are (judge score,
first tag) cells, each gets a share of the n items proportional to its size (largest remainders), and items are
drawn at random inside it — so every verdict has about the same chance n/N to be audited, and the audited set looks
like the run. Lowest-score-first (and least-sure-first) audits where the judge is most likely wrong, which finds
problems faster but over-represents them: agreement measured on such a task understates the judge's agreement.
"""
from __future__ import annotations

import math
import random
from collections import defaultdict

from rubriceval.store.team_models import Candidate, SamplingMode, TeamError

NO_TAG = "-"


def stratum(candidate: Candidate) -> str:
    """The (judge score, first tag) cell of a verdict, e.g. '2|订单延迟' or 'unscored|-'."""
    score = "unscored" if candidate.judge_score is None else str(math.floor(candidate.judge_score))
    return f"{score}|{candidate.tags[0] if candidate.tags else NO_TAG}"


def proportional_allocation(sizes: dict[str, int], n: int) -> dict[str, int]:
    """n split over strata in proportion to their sizes (Hamilton's largest remainders; ties by stratum name)."""
    total = sum(sizes.values())
    n = min(n, total)
    quotas = {key: n * size / total for key, size in sizes.items()}
    shares = {key: int(math.floor(q)) for key, q in quotas.items()}
    left = n - sum(shares.values())
    for key in sorted(quotas, key=lambda k: (-(quotas[k] - shares[k]), k))[:left]:
        shares[key] += 1
    return shares


def choose(candidates: list[Candidate], n: int, mode: SamplingMode, seed: int) -> list[Candidate]:
    """n of one rubric's candidates (all of them when there are fewer), in the order the mode gives."""
    rng = random.Random(seed)
    pool = sorted(candidates, key=lambda c: c.sample_id)        # reproducible whatever order the store returned
    if mode == "stratified":
        cells: dict[str, list[Candidate]] = defaultdict(list)
        for candidate in pool:
            cells[stratum(candidate)].append(candidate)
        chosen = []
        for key, share in sorted(proportional_allocation({k: len(v) for k, v in cells.items()}, n).items()):
            chosen += rng.sample(cells[key], share)
        rng.shuffle(chosen)
        return chosen
    ties = {c.sample_id: rng.random() for c in pool}
    if mode == "least_sure":
        ordered = sorted(pool, key=lambda c: (not c.disputed, c.spread is None, -(c.spread or 0), ties[c.sample_id]))
    elif mode == "lowest":
        ordered = sorted(pool, key=lambda c: (c.judge_score is None, c.judge_score or 0, ties[c.sample_id]))
    else:
        raise TeamError(f"unknown sampling '{mode}'", field="sampling", hint="stratified, least_sure or lowest")
    return ordered[:n]


def assign(n_items: int, experts: list[str], overlap: int) -> list[list[str]]:
    """For item i, `overlap` distinct experts: consecutive in a rotation, so shares stay even (within `overlap`),
    shifted by one each full turn so the same experts are not always paired (inter-expert agreement needs mixes)."""
    if overlap > len(experts):
        raise TeamError(f"overlap {overlap} needs at least {overlap} experts, got {len(experts)}", field="overlap")
    m = len(experts)
    return [[experts[(i * overlap + i * overlap // m + j) % m] for j in range(overlap)] for i in range(n_items)]
