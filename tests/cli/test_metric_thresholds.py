"""Metric pass thresholds, settable (issue 32.3): config `metrics: {faithfulness: {threshold: 0.8}}`, CLI
`--threshold METRIC=VALUE` (flag over file), stored in the metric's definition so verdicts' `passed`, reports'
pass rates and gates agree; bad values name the flag or the file, line and field."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from rubriceval.cli import main
from rubriceval.common.errors import ConfigError
from rubriceval.report.run_data import load_run
from rubriceval.run.metric_config import load_metric_options
from rubriceval.store.runs import RunStore

ROWS = [{"id": f"r{i}", "question": f"问题{i}", "answer": answer, "ground_truth": "退款三到五个工作日到账"}
        for i, answer in enumerate(["退款三到五个工作日到账", "退款三到五天", "请联系客服"])]


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    path = tmp_path / "d.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in ROWS), encoding="utf-8")
    return path


def run(tmp_path: Path, dataset: Path, name: str, *extra: str) -> tuple[RunStore, str]:
    store = tmp_path / "runs.sqlite"
    assert main(["run", str(dataset), "--metrics", "rouge_l", "--store", str(store), "--name", name, "--quiet",
                 *extra]) == 0
    return RunStore(store), name


def passed(store: RunStore, name: str) -> list[bool | None]:
    return [v.passed for v in store.verdicts(name)]


def test_default_config_and_flag_thresholds(tmp_path: Path, dataset: Path, capsys):
    store, default = run(tmp_path, dataset, "default")
    scores = [v.score for v in store.verdicts(default)]
    assert passed(store, default) == [s >= 0.5 for s in scores]          # the default for other metrics: 0.5
    config = tmp_path / "eval.yaml"
    config.write_text("metrics:\n  rouge_l: {threshold: 0.95}\n", encoding="utf-8")
    store, strict = run(tmp_path, dataset, "strict", "--config", str(config))
    assert passed(store, strict) == [s >= 0.95 for s in scores] and passed(store, strict) != passed(store, default)
    summary = load_run(store, strict).summary.get("rouge_l")
    assert summary.threshold == 0.95 and summary.threshold_source == "definition"
    store, flag = run(tmp_path, dataset, "flag", "--config", str(config), "--threshold", "rouge_l=0.1")
    assert passed(store, flag) == [s >= 0.1 for s in scores]
    assert load_run(store, flag).summary.get("rouge_l").threshold == 0.1         # the flag wins over the file


def test_bad_thresholds_say_where(tmp_path: Path, dataset: Path):
    with pytest.raises(ConfigError, match=r"\[--threshold rouge_l\].*number"):
        load_metric_options(None, (), ["rouge_l=high"])
    with pytest.raises(ConfigError, match="METRIC=VALUE"):
        load_metric_options(None, (), ["rouge_l"])
    config = tmp_path / "bad.yaml"
    config.write_text("metrics:\n  sql: {mode: columns}\n  rouge_l: {threshold: 0.9, weight: 2}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"bad.yaml:3 \[metrics.rouge_l\].*only its threshold"):
        load_metric_options(config)


def test_a_threshold_for_a_metric_not_in_the_run_is_refused(tmp_path: Path, dataset: Path, capsys):
    code = main(["run", str(dataset), "--metrics", "rouge_l", "--store", str(tmp_path / "r.sqlite"),
                 "--threshold", "faithfulness=0.8", "--quiet"])
    assert code != 0 and "not a metric of this run" in capsys.readouterr().err
