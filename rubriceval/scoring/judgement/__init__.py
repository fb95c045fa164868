"""Judgement items decided right on a small judge (issue 39): per-turn decomposition, evidence drafted from the
question, the policy retrieved per claim, and a calibration that says when the judge cannot tell (undecided)."""
