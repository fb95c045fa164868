"""A ground-truth correction or context relevance mark made in the audit app after scoring: a deterministic metric's
official value is the one recomputed on the corrected sample (source "correction", who/when), derived on read; the
stored verdict and the append-only edits stay; an LLM metric keeps the machine's score and the report says the
sample was corrected after scoring (re-run to re-score). SQLite and PostgreSQL."""
from __future__ import annotations

import asyncio

import pytest

from rubriceval.audit.official import OfficialScores, official_scores
from rubriceval.core.verdict import Verdict
from rubriceval.data.sample import Sample
from rubriceval.report.official_figures import official_headline
from rubriceval.report.run_data import load_run
from rubriceval.standard_metrics.registry import score_sample
from rubriceval.store.audit import AuditStore
from rubriceval.store.audit_models import SAMPLE_LEVEL
from rubriceval.store.runs import RunConfig, RunStore

METRICS = ["rouge_l", "exact_match", "nonllm_context_recall"]
CONTEXTS = ["退货须在签收后七天内申请。", "会员积分每月清零一次。"]


def _samples() -> list[Sample]:
    return [Sample(id=f"s{i}", question=f"退货期限是多久{i}？", answer="签收后七天内可以申请退货。",
                   ground_truth="签收后三十天内可以退货。",
                   contexts=CONTEXTS,
                   reference_contexts=["会员积分每月清零一次。"]) for i in range(3)]


async def score_audited_items(samples: list[Sample]) -> list[tuple[Verdict, str]]:
    out = []
    for s in samples:
        for v in await score_sample(s, METRICS):
            out.append((v, s.input_hash()))
        # an LLM metric as a judge gave it (not recomputable without a judge call)
        out.append((Verdict(sample_id=s.id, scorer="faithfulness", kind="metric", score=0.4), s.input_hash()))
    return out


@pytest.fixture()
def corrected(store_target):
    store = RunStore(store_target)
    samples = _samples()
    run_id = store.create_run(RunConfig(metrics=[*METRICS, "faithfulness"]), samples,
                              [(m, "metric", "1", {"name": m}) for m in [*METRICS, "faithfulness"]], name="rag")
    store.save_verdicts(run_id, asyncio.run(score_audited_items(samples)))
    audit = AuditStore(store_target)
    version = audit.versions(run_id, "s0", SAMPLE_LEVEL).sample
    # s0: the reference answer fixed to the answer's wording, and the first context marked relevant
    assert audit.edit_ground_truth(run_id, "s0", editor="qa_zhang", expected_sample_version=version,
                                   ground_truth="签收后七天内可以申请退货。", context_relevance={0: True}).ok
    audit.close()
    yield store, run_id
    store.close()


def _machine(store: RunStore, run_id: str, sample: str, scorer: str) -> float | None:
    return next(v.score for v in store.verdicts(run_id) if v.sample_id == sample and v.scorer == scorer)


def test_deterministic_metrics_are_recomputed_on_the_corrected_sample(corrected):
    store, run_id = corrected
    official = OfficialScores.load(store.conn, run_id)
    fixed = next(c for _, c in AuditStore(store.path).corrected_samples(run_id) if c.id == "s0")
    expected = {v.scorer: v.score for v in asyncio.run(score_sample(fixed, METRICS))}
    assert expected["exact_match"] == 1.0 and expected["nonllm_context_recall"] == 1.0   # both changed
    for scorer in METRICS:
        decision = official.decision("s0", scorer)
        assert decision is not None and decision.source == "correction" and decision.by == "qa_zhang"
        assert decision.score == pytest.approx(expected[scorer])
        assert "ground_truth" in decision.reason and "context #1" in decision.reason
        assert official.decision("s1", scorer) is None                     # an uncorrected sample: the machine's
    assert _machine(store, run_id, "s0", "exact_match") == 0.0             # the stored verdict is not rewritten
    # the LLM metric keeps the machine's score, listed as corrected after scoring
    assert official.decision("s0", "faithfulness") is None
    assert official.n_corrected("faithfulness") == 1 and official.n_corrected("rouge_l") == 0
    assert official.score("s0", "faithfulness", 0.4) == 0.4
    assert OfficialScores.load(store.conn, run_id, machine_only=True).decision("s0", "exact_match") is None


def test_reports_and_the_python_api_read_the_corrected_values(corrected):
    store, run_id = corrected
    summary = load_run(store, run_id).summary
    exact = summary.get("exact_match")
    assert exact.n_human == 1 and exact.mean == pytest.approx(1 / 3) and exact.machine_mean == 0.0
    assert summary.get("faithfulness").n_corrected == 1 and summary.get("faithfulness").n_human == 0
    line = official_headline(summary, "en")
    assert "faithfulness: 1 sample(s) corrected after scoring" in line and "re-run to re-score" in line
    assert "重新运行" in official_headline(summary, "zh")
    judge = load_run(store, run_id, machine_only=True).summary
    assert judge.get("exact_match").mean == 0.0 and judge.n_corrected == 0
    frame = official_scores(store.path, run_id)
    row = frame[(frame.sample_id == "s0") & (frame.scorer == "exact_match")].iloc[0]
    assert (row.machine_score, row.official_score, row.decided_by) == (0.0, 1.0, "correction")
    stale = frame[(frame.sample_id == "s0") & (frame.scorer == "faithfulness")].iloc[0]
    assert stale.corrected_after_scoring and not stale.human_decided


def test_report_files_name_the_correction(corrected, tmp_path):
    from openpyxl import load_workbook

    from rubriceval.report.excel import write_workbook
    from rubriceval.report.html import render_html_report
    from rubriceval.report.markdown import render_markdown

    store, run_id = corrected
    data = load_run(store, run_id)
    md = render_markdown(data, lang="en", findings=[])
    assert "faithfulness: 1 sample(s) corrected after scoring" in md
    assert "re-run to re-score" in render_html_report(data, lang="en", findings=[])
    book = load_workbook(write_workbook(data, tmp_path / "r.xlsx", lang="en", findings=[]))
    cells = [str(c.value) for ws in book.worksheets for row in ws.iter_rows() for c in row if c.value is not None]
    assert any(c.startswith("recomputed after a correction · qa_zhang") for c in cells)


def test_a_verdict_rescored_on_the_corrected_row_is_left_alone(corrected):
    store, run_id = corrected
    fixed = next(c for _, c in AuditStore(store.path).corrected_samples(run_id) if c.id == "s0")
    rescored = asyncio.run(score_sample(fixed, ["exact_match"]))
    store.save_verdicts(run_id, [(v, fixed.input_hash()) for v in rescored])
    official = OfficialScores.load(store.conn, run_id)
    assert official.decision("s0", "exact_match") is None                  # the stored score is the corrected one
    assert official.decision("s0", "rouge_l") is not None


def test_a_correction_that_leaves_the_metric_unscorable_is_listed_not_zeroed(corrected):
    store, run_id = corrected
    audit = AuditStore(store.path)
    version = audit.versions(run_id, "s1", SAMPLE_LEVEL).sample
    # s1: the only reference context marked irrelevant → no reference contexts left for the recall
    assert audit.edit_ground_truth(run_id, "s1", editor="qa_li", expected_sample_version=version,
                                   context_relevance={1: False}).ok
    audit.close()
    official = OfficialScores.load(store.conn, run_id)
    assert official.decision("s1", "nonllm_context_recall") is None
    stale = official.corrected[("s1", "nonllm_context_recall")]
    assert "missing_field" in stale.reason and "re-run to re-score" in stale.reason
    assert official.decision("s1", "rouge_l").score == pytest.approx(_machine(store, run_id, "s1", "rouge_l"))
