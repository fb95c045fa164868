"""Metric options reach the metrics from the CLI: the --config file's `metrics:` section and repeatable
`--metric-option KEY=VALUE` flags (flags win), validated by MetricOptions with errors naming file, line and field;
they reach the run (NL2SQL, agent metrics), the dry-run plan, and the run's stored config."""
from __future__ import annotations

import json
import re

from rubriceval.cli import main
from rubriceval.store.runs import RunStore

NL2SQL = "datasets/demo_nl2sql_zh.jsonl"


def run(capsys, tmp_path, name, dataset, metrics, *extra):
    code = main(["run", dataset, "--metrics", metrics, "--store", str(tmp_path / "runs.sqlite"), "--name", name,
                 "--quiet", *extra])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    store = RunStore(tmp_path / "runs.sqlite")
    run_id = store.resolve(name)
    return {(v.sample_id, v.scorer): v for v in store.verdicts(run_id)}, store.run_info(run_id).config


def scores(verdicts):
    return {key: v.score for key, v in verdicts.items()}


def test_sql_mode_from_flag_and_config_file(tmp_path, capsys):
    rows, rows_config = run(capsys, tmp_path, "rows", NL2SQL, "datacompy_score")          # the default
    columns, columns_config = run(capsys, tmp_path, "columns", NL2SQL, "datacompy_score",
                                  "--metric-option", "sql.mode=columns")
    changed = [key for key in rows if rows[key].score != columns[key].score]
    assert changed, "columns mode must score some row differently from rows mode"
    assert {v.details.get("mode") for v in columns.values() if v.scored} == {"columns"}
    assert rows_config.metric_options == {} and columns_config.metric_options == {"sql": {"mode": "columns"}}

    config = tmp_path / "eval.yaml"
    config.write_text("judge:\n  model: local\nmetrics:\n  sql:\n    mode: columns\n", encoding="utf-8")
    from_file, _ = run(capsys, tmp_path, "file", NL2SQL, "datacompy_score", "--config", str(config))
    assert scores(from_file) == scores(columns)
    overridden, _ = run(capsys, tmp_path, "flag-wins", NL2SQL, "datacompy_score", "--config", str(config),
                        "--metric-option", "sql.mode=rows")
    assert scores(overridden) == scores(rows)


CONVERSATION = {
    "id": "lookup", "turns": [
        {"role": "user", "content": "Where is order E1?"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "c1", "name": "order_lookup", "arguments": {"order_id": "e1 "}},
            {"id": "c2", "name": "verify_identity", "arguments": {}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "shipped"},
        {"role": "tool", "tool_call_id": "c2", "content": "ok"},
        {"role": "assistant", "content": "It has shipped."}],
    "reference_tool_calls": [{"name": "verify_identity", "arguments": {}},
                             {"name": "order_lookup", "arguments": {"order_id": "E1"}}]}


def test_agent_options_reach_tool_call_accuracy(tmp_path, capsys):
    dataset = tmp_path / "conversations.jsonl"
    dataset.write_text(json.dumps(CONVERSATION) + "\n", encoding="utf-8")
    key = ("lookup", "tool_call_accuracy")
    strict, _ = run(capsys, tmp_path, "strict", str(dataset), "tool_call_accuracy")
    any_order, _ = run(capsys, tmp_path, "any-order", str(dataset), "tool_call_accuracy",
                       "--metric-option", "agent.strict_order=false")
    lenient, config = run(capsys, tmp_path, "lenient", str(dataset), "tool_call_accuracy",
                          "--metric-option", "agent.strict_order=false",
                          "--metric-option", "agent.argument_match=case_insensitive")
    assert strict[key].score < any_order[key].score < lenient[key].score == 1.0
    assert "case_insensitive" in lenient[key].scorer_version
    assert config.metric_options == {"agent": {"strict_order": False, "argument_match": "case_insensitive"}}


def test_dry_run_plans_with_the_options(tmp_path, capsys):
    tokens = {}
    for language in ("zh", "en"):
        assert main(["run", "datasets/demo_cs_zh.jsonl", "--metrics", "faithfulness", "--dry-run",
                     "--store", str(tmp_path / "runs.sqlite"), "--metric-option", f"language={language}"]) == 0
        line = next(out for out in capsys.readouterr().out.splitlines() if out.startswith("faithfulness"))
        tokens[language] = int(re.split(r"\s+", line)[-1])
    assert tokens["zh"] != tokens["en"]          # the prompts are rendered in the language asked for


def error_line(capsys, *argv) -> str:
    assert main(["run", NL2SQL, "--metrics", "datacompy_score", "--quiet", *argv]) == 2
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in lines[0], lines
    return lines[0]


def test_bad_options_name_the_flag_or_the_file_line_and_field(tmp_path, capsys):
    line = error_line(capsys, "--store", str(tmp_path / "r.sqlite"), "--metric-option", "sql.mod=columns")
    assert line.startswith("error: [--metric-option sql.mod]: unknown metric option (hint: known options here: "
                           "database, ")
    line = error_line(capsys, "--store", str(tmp_path / "r.sqlite"), "--metric-option", "agent.argument_match=fuzzy")
    assert line.startswith("error: [--metric-option agent.argument_match]: Input should be 'exact'")
    line = error_line(capsys, "--store", str(tmp_path / "r.sqlite"), "--metric-option", "sqlmode")
    assert "expected KEY=VALUE" in line
    config = tmp_path / "eval.yaml"
    config.write_text("judge:\n  model: local\nmetrics:\n  sql:\n    mode: colums\n", encoding="utf-8")
    line = error_line(capsys, "--store", str(tmp_path / "r.sqlite"), "--config", str(config))
    assert line == f"error: {config}:5 [metrics.sql.mode]: Input should be 'rows' or 'columns'"
    assert not (tmp_path / "r.sqlite").exists() or not RunStore(tmp_path / "r.sqlite").list_runs()
