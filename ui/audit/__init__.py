"""The expert audit app: a queue of verdicts to agree with or override (with a reason), ground truth corrected in
place, agreement per rubric version."""
