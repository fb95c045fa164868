"""`rubriceval metrics`: columns sized to their longest cell (agent_goal_accuracy_without_reference is 37 characters),
and each metric's scope as the run decides it (standard_metrics/scope.py, the one source)."""
from __future__ import annotations

import re

from rubriceval.cli import main
from rubriceval.standard_metrics.registry import list_metrics
from rubriceval.standard_metrics.scope import metric_kinds, scope_label


def listing(capsys) -> list[str]:
    assert main(["metrics"]) == 0
    return capsys.readouterr().out.splitlines()


def test_columns_line_up_after_the_longest_name(capsys):
    lines = listing(capsys)
    infos = list_metrics()
    assert len(lines) == len(infos) + 1 and lines[0].startswith("name ")
    longest = max(len(m.name) for m in infos)
    assert longest == len("agent_goal_accuracy_without_reference")
    family_at = {line[longest:].index(line[longest:].lstrip()) + longest for line in lines}
    assert len(family_at) == 1 and family_at.pop() > longest           # one column start, after every name
    for line, info in zip(lines[1:], infos):
        name, family, scope = re.split(r"\s{2,}", line)[:3]
        assert (name, family, scope) == (info.name, info.family, info.scope)


def test_scope_comes_from_metric_scope(capsys):
    infos = {m.name: m for m in list_metrics()}
    assert all(info.scope == scope_label(name) for name, info in infos.items())
    # answer_correctness needs a ground truth a conversation turn lacks: single-turn only, as runs treat it.
    assert metric_kinds("answer_correctness") == ("sample",) and infos["answer_correctness"].scope == "single-turn"
    assert infos["faithfulness"].scope == "single-turn, per turn"
    assert infos["agent_goal_accuracy_without_reference"].scope == "conversation"
    rows = {re.split(r"\s{2,}", line)[0]: re.split(r"\s{2,}", line)[2] for line in listing(capsys)[1:]}
    assert rows["answer_correctness"] == "single-turn" and rows["tool_call_accuracy"] == "conversation"
