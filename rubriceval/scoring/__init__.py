"""Stage 4 — verdicts: judge replies and deterministic checks become one typed Verdict per sample and rubric
(verdict.py: a score with feedback, or unscored with a reason), in holistic, checklist, predicate or panel mode."""
