"""Pairwise A/B: two or more versions of a bot answer the same questions; a judge compares their answers per rubric.

models.py         versions, one order's reading, the pairwise verdict (an outcome, or unscored with the reason)
prompt.py         rubric item + two answers → messages (templates prompt/templates/<lang>/pairwise*.j2, fenced)
judge.py          both orders through the one judge path; a flip is a tie
run.py            load versions (datasets or runs), pair samples by id, judge, store (resumable)
store.py          the pairwise tables in the run store file
summary.py        win rates with bootstrap CIs; bradley_terry.py the ranking of three or more versions
report.py         terminal text;  the `rubriceval pairwise` command is rubriceval/cli/pairwise.py
The CI gate reads comparisons in rubriceval/report/gate_pairwise.py; `rubriceval compare` shows them.
"""
