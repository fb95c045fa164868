"""Bradley–Terry ranking of three or more bot versions from their pairwise wins.

The model: version i beats version j with probability p_i / (p_i + p_j), for positive strengths p. Given W[i, j],
the times i beat j (a tie counts half a win to each side), the maximum-likelihood strengths maximise

    L(p) = Σ_ij W[i, j] · (log p_i − log(p_i + p_j)).

Fit by the MM algorithm (Hunter 2004, "MM algorithms for generalized Bradley–Terry models", Ann. Statist. 32(1);
it is Zermelo's 1929 iteration): with w_i = Σ_j W[i, j] the wins of i and N[i, j] = W[i, j] + W[j, i] the
comparisons of i and j,

    p_i ← w_i / Σ_{j≠i} N[i, j] / (p_i + p_j),

then rescale so the log-strengths sum to zero (L depends only on ratios). Each step increases L, and it converges to
the unique maximum whenever that exists.

When the maximum exists (Ford 1957): for every split of the versions into two groups, some version of each group
beat some version of the other — the "beat" graph (i → j when W[i, j] > 0) is strongly connected. A version that
never lost (nor tied) has no finite strength. Then, and only then, the fit adds one virtual tie (half a win each
way) to every compared pair — a weak, symmetric prior that keeps the order the wins give — and says so
(`regularized`, `note`). Versions never compared with the rest, directly or through others, cannot be ranked
against them at all: the fit refuses (`strengths` None, with a note).
"""
from __future__ import annotations

import numpy as np
from pydantic import BaseModel, Field

MAX_ITERATIONS = 10_000
TOLERANCE = 1e-10          # on the largest change of a log-strength between two steps
VIRTUAL_TIE = 0.5          # half a win each way per compared pair, only when the maximum does not exist


class BradleyTerryFit(BaseModel):
    versions: list[str]
    strengths: list[float] | None = None        # p_i, geometric mean 1 (None: cannot be ranked; see note)
    log_strengths: list[float] | None = None
    iterations: int = 0
    converged: bool = False
    regularized: bool = False
    log_likelihood: float | None = None         # of the observed wins (without the virtual ties)
    note: str | None = None
    ranking: list[str] = Field(default_factory=list)   # strongest first

    def probability(self, winner: str, loser: str) -> float | None:
        """The fitted chance that `winner` beats `loser`."""
        if self.strengths is None:
            return None
        i, j = self.versions.index(winner), self.versions.index(loser)
        return self.strengths[i] / (self.strengths[i] + self.strengths[j])


def _reaches_all(adjacency: np.ndarray) -> bool:
    """Every node reaches every other along the edges (strongly connected)."""
    n = len(adjacency)
    for graph in (adjacency, adjacency.T):
        seen, frontier = {0}, [0]
        while frontier:
            node = frontier.pop()
            for nxt in np.flatnonzero(graph[node]):
                if int(nxt) not in seen:
                    seen.add(int(nxt))
                    frontier.append(int(nxt))
        if len(seen) < n:
            return False
    return True


def log_likelihood(wins: np.ndarray, log_strengths: np.ndarray) -> float:
    """L at the given log-strengths."""
    p = np.exp(log_strengths)
    total = p[:, None] + p[None, :]
    mask = wins > 0
    return float((wins * (np.log(p)[:, None] - np.log(total)))[mask].sum())


def _mm(wins: np.ndarray) -> tuple[np.ndarray, int, bool]:
    comparisons = wins + wins.T
    won = wins.sum(axis=1)
    log_p = np.zeros(len(wins))
    for iteration in range(1, MAX_ITERATIONS + 1):
        p = np.exp(log_p)
        denominator = (comparisons / (p[:, None] + p[None, :])).sum(axis=1)
        new = np.log(won) - np.log(denominator)
        new -= new.mean()
        if np.max(np.abs(new - log_p)) < TOLERANCE:
            return new, iteration, True
        log_p = new
    return log_p, MAX_ITERATIONS, False


def fit_bradley_terry(versions: list[str], wins: np.ndarray | list[list[float]]) -> BradleyTerryFit:
    """Strengths from a K × K matrix of wins (W[i, j]: times versions[i] beat versions[j]; ties as halves)."""
    w = np.array(wins, dtype=float)
    if w.shape != (len(versions), len(versions)) or (w < 0).any() or not np.isfinite(w).all():
        raise ValueError(f"wins must be a non-negative {len(versions)} × {len(versions)} matrix")
    np.fill_diagonal(w, 0)
    fit = BradleyTerryFit(versions=list(versions))
    compared = (w + w.T) > 0
    if len(versions) < 2:
        fit.note = "a ranking needs at least two versions"
        return fit
    if not _reaches_all(compared):
        fit.note = "some versions were never compared with the others (directly or through others): no ranking"
        return fit
    fitted = w
    if not _reaches_all(w > 0):
        fitted = w + VIRTUAL_TIE * compared
        fit.regularized = True
        fit.note = ("the maximum-likelihood strengths do not exist (a version never lost, or a group of versions "
                    "never lost to the rest): one virtual tie was added per compared pair")
    log_p, fit.iterations, fit.converged = _mm(fitted)
    fit.log_strengths = [float(x) for x in log_p]
    fit.strengths = [float(x) for x in np.exp(log_p)]
    fit.log_likelihood = log_likelihood(w, log_p)
    fit.ranking = [versions[i] for i in np.argsort(-log_p, kind="stable")]
    if not fit.converged:
        fit.note = (fit.note + "; " if fit.note else "") + f"did not converge in {MAX_ITERATIONS} iterations"
    return fit
