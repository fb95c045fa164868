"""The dry run's plan is what the run then spends, per scorer, and the run's own numbers agree with its report.

Calls must match exactly (every stub reply parses, so no re-asks). Prompt tokens are estimated by
`rubriceval.judge.tokens` (~0.7 token per CJK character, 1.3 per English word) while the stub counts its own way
(~1 token per 1.5 CJK characters, 1 per word); per scorer they agree within TOKEN_TOLERANCE. A shared metric call
charged to a different metric in the plan than in the run would move a metric's share by 50% or more.
"""
import pytest

from rubriceval import (
    EmbedderConfig,
    JudgeConfig,
    RunStore,
    Usage,
    evaluate,
    load_rubrics,
    plan_cost,
    read_dataset,
    summarize,
)
from rubriceval.report.markdown import usage_line
from rubriceval.testing.stub_server import StubServer

DATA = "datasets/demo_cs_zh.jsonl"
TOKEN_TOLERANCE = 0.25


def spent_by_scorer(verdicts) -> dict[str, Usage]:
    spent: dict[str, Usage] = {}
    for v in verdicts:
        spent[v.scorer] = spent.get(v.scorer, Usage()) + v.usage
    return spent


@pytest.mark.parametrize("metrics", [["faithfulness", "answer_correctness"], ["answer_correctness", "faithfulness"]])
def test_dry_run_per_scorer_matches_the_run(tmp_path, monkeypatch, metrics):
    monkeypatch.setenv("RUBRICEVAL_CACHE_DIR", str(tmp_path / "cache"))     # embeddings too: nothing from other runs
    samples, rubrics = read_dataset(DATA), load_rubrics("rubrics", only=["policy_compliance", "emotional_soothing"])
    with StubServer() as stub:
        judge = JudgeConfig(base_url=stub.base_url, model="stub", cache_path=str(tmp_path / "judge.sqlite"))
        plan = plan_cost(samples, rubrics, metrics, judge)
        result = evaluate(DATA, rubrics=rubrics, metrics=metrics, judge=judge, store=tmp_path / "runs.sqlite",
                          embedder=EmbedderConfig(base_url=stub.base_url, model="stub-embed"), progress=False)
    spent = spent_by_scorer(result.verdicts)
    planned = {s.scorer: s for s in plan.scorers if s.calls}
    assert set(planned) == {s for s, u in spent.items() if u.calls} == {"policy_compliance", "emotional_soothing",
                                                                         *metrics}
    for scorer, p in planned.items():
        assert p.calls == spent[scorer].calls, scorer
        assert abs(p.prompt_tokens - spent[scorer].prompt_tokens) <= TOKEN_TOLERANCE * spent[scorer].prompt_tokens, \
            (scorer, p.prompt_tokens, spent[scorer].prompt_tokens)
    # The shared statement extraction is charged to the metric listed first, in the plan as in the run.
    first = planned[metrics[0]]
    assert first.shared > 0 and planned[metrics[1]].shared == 0
    assert "shared" in plan.format()


def test_run_summary_and_report_count_the_same_cache_hits(tmp_path, monkeypatch):
    monkeypatch.setenv("RUBRICEVAL_CACHE_DIR", str(tmp_path / "cache"))
    metrics = ["faithfulness", "answer_correctness"]
    with StubServer() as stub:
        judge = JudgeConfig(base_url=stub.base_url, model="stub", cache_path=str(tmp_path / "judge.sqlite"))
        embedder = EmbedderConfig(base_url=stub.base_url, model="stub-embed")
        kw = dict(rubrics="rubrics", metrics=metrics, judge=judge, embedder=embedder, store=tmp_path / "runs.sqlite",
                  progress=False)
        evaluate(DATA, **kw)
        warm = evaluate(DATA, **kw)                       # judge replies and embeddings now come from the caches
    store = RunStore(tmp_path / "runs.sqlite")
    reported = summarize(store.verdicts(warm.run_id), store.scorers(warm.run_id)).usage
    assert reported.cache_hits == warm.totals["judge"]["cache_hits"] > 0
    assert reported.calls == warm.totals["judge"]["calls"] == 0
    assert reported.embedding_cache_hits > 0           # counted, but apart from the judge's cache hits
    line = usage_line(reported, "en")
    assert f"Judge cache hits {warm.totals['judge']['cache_hits']}" in line and "Embedding cache hits" in line
    assert f"评审缓存命中 {reported.cache_hits}" in usage_line(reported, "zh")


def test_the_run_command_and_its_report_print_the_same_usage_line(tmp_path, monkeypatch, capsys):
    import re

    from rubriceval.cli import main

    monkeypatch.setenv("RUBRICEVAL_CACHE_DIR", str(tmp_path / "cache"))
    store, reports = str(tmp_path / "runs.sqlite"), str(tmp_path / "reports")
    with StubServer() as stub:
        config = tmp_path / "judge.yaml"
        config.write_text(f"judge: {{base_url: '{stub.base_url}', model: stub, cache_path: '{tmp_path}/j.sqlite'}}\n"
                          f"embedder: {{base_url: '{stub.base_url}', model: stub-embed}}\n", encoding="utf-8")
        args = ["run", DATA, "--rubrics", "rubrics", "--only", "policy_compliance", "--metrics",
                "answer_correctness", "--config", str(config), "--store", store, "--quiet"]
        assert main(args + ["--name", "cold"]) == 0
        assert main(args + ["--name", "warm"]) == 0
    run_out = capsys.readouterr().out
    said = re.findall(r"^Judge calls .*$", run_out, flags=re.MULTILINE)
    assert len(said) == 2 and said[1].startswith("Judge calls 0 · Judge cache hits ")
    assert main(["report", "warm", "--store", store, "--out", reports, "--lang", "en"]) == 0
    assert said[1] in capsys.readouterr().out
