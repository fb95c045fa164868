"""Log-odds, one way: a probability clamped away from 0 and 1 (a judge's p(yes) of exactly 0 or 1 has no log-odds),
and back. Calibration bands, checker stacking and cut-off shifts all move probabilities in log-odds."""
from __future__ import annotations

import math


def logit(p: float, eps: float = 1e-4) -> float:
    p = min(max(p, eps), 1 - eps)
    return math.log(p / (1 - p))


def sigmoid(x: float) -> float:
    """The inverse of logit, safe for any x (no overflow far from 0)."""
    return 1 / (1 + math.exp(-max(min(x, 40.0), -40.0)))
