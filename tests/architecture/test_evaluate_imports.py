"""evaluate() imports what the run needs (issue 32.14): one rubric and no metric loads neither pandas nor the
standard metrics (their registry, prompts, sqlglot, sacrebleu) nor the scorecards; asking for a metric does."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("pandas", "rubriceval.standard_metrics.registry", "rubriceval.standard_metrics.catalog", "sqlglot", "sacrebleu",
         "rubriceval.run.scorecard_stage")
SCRIPT = """
import json, sys
from rubriceval.testing.stub_server import StubServer
before = set(sys.modules)          # the stub server itself is the test's, not the run's
with StubServer() as stub:
    from rubriceval import evaluate
    result = evaluate([{"question": "我的快递怎么还没到？", "answer": "抱歉，包裹正在派送中。",
                        "ground_truth": "包裹今日送达"}],
                      rubrics="rubrics/emotional_soothing.yaml", metrics=sys.argv[1] or None, store=sys.argv[2],
                      judge={"base_url": stub.base_url, "model": "stub", "cache_path": sys.argv[3],
                             "judge_mode": "holistic"}, progress=False)
    assert result.verdicts
print(json.dumps(sorted(set(sys.modules) - before)))
"""


def loaded(tmp_path: Path, metrics: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", SCRIPT, metrics, str(tmp_path / f"r{metrics}.sqlite"),
                          str(tmp_path / "cache.sqlite")], cwd=ROOT, capture_output=True, text=True, check=True)
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


def test_one_rubric_and_no_metric_loads_no_metric_machinery(tmp_path: Path):
    modules = loaded(tmp_path, "")
    assert "rubriceval.run.evaluate" in modules and "openai" in modules          # the run and its judge client
    assert [m for m in HEAVY if m in modules] == []


def test_asking_for_a_metric_loads_it(tmp_path: Path):
    modules = loaded(tmp_path, "rouge_l")
    assert {"rubriceval.standard_metrics.registry", "rubriceval.standard_metrics.catalog", "sacrebleu"} <= modules
