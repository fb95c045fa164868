"""Types every stage above the inputs shares: the verdict (a score with feedback, or unscored with a reason), its
evidence and its usage (verdict.py). It sits below data, rubric, judge and scorers so none of them imports upward."""
