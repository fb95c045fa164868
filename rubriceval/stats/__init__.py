"""Statistics shared by comparisons, pairwise verdicts and trends (bootstrap intervals), written once."""
