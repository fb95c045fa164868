"""Run comparison (paired deltas, bootstrap CIs, worse samples, seesaw) and the CI gate (checks, trust, JUnit XML,
exit codes, pytest helper). The baseline run is the one built in test_report; the candidate changes it by hand."""
from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from rubriceval import RunStore, assert_gate, compare_runs, evaluate_gate
from rubriceval.report.compare import format_comparison, write_compare_html
from rubriceval.report.gate import EXIT_FAILED, EXIT_PASSED, EXIT_USAGE, junit_xml, run_gate
from rubriceval.report.gate_checks import GateUsageError, parse_check
from rubriceval.stats.bootstrap import paired_bootstrap_ci
from tests.report.test_report import RECALL_A, add_run, build_verdicts

PROCESS_B = {"s1": 5, "s2": 4, "s3": 4, "s4": 3, "s5": 5, "s6": 4}
LINK_OK_B = {sid: True for sid in PROCESS_B}
EMPATHY_B = {"s1": 2, "s2": 4, "s3": 3, "s5": 4, "s6": 2}
FAITH_B = {"s1": 1.0, "s2": 0.9, "s3": 1.0, "s4": 0.8, "s5": None, "s6": 0.9}
RECALL_B = {"s1": 0.5, "s2": 0.0, "s3": 0.5, "s4": None, "s5": 0.0, "s6": 0.0}


def build_compare_store(store: RunStore) -> RunStore:
    """The baseline run and the candidate run these tests compare, in `store`."""
    add_run(store, "baseline", build_verdicts())
    verdicts = build_verdicts(process=PROCESS_B, empathy=EMPATHY_B, faith=FAITH_B, recall=RECALL_B,
                              link_ok=LINK_OK_B)
    # The candidate's context_recall on s4 timed out instead of scoring 0.0: a new unscored row.
    for i, v in enumerate(verdicts):
        if v.scorer == "context_recall" and v.sample_id == "s4":
            verdicts[i] = v.model_copy(update={"unscored_kind": "timeout", "unscored_reason": "timed out after 3 "
                                                                                             "retries"})
    add_run(store, "candidate", verdicts)
    return store


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> RunStore:
    """Built once: no test here writes to the store."""
    return build_compare_store(RunStore(tmp_path_factory.mktemp("compare") / "runs.sqlite"))


# -- compare ---------------------------------------------------------------------------------------------------------

def test_paired_deltas_by_hand(store: RunStore):
    c = compare_runs(store, "baseline", "candidate")
    process = c.get("流程合规")
    # Paired: s1 s2 s3 s5 s6 (s4 was unscored in the baseline) → diffs 0, +2, 0, +4, 0.
    assert (process.n_paired, process.n_only_b, process.n_better, process.n_worse) == (5, 1, 2, 0)
    assert process.delta == pytest.approx(1.2) and process.mean_a == pytest.approx(3.2)
    faith = c.get("faithfulness")                     # s1 +.1, s2 +.3, s3 0, s4 +.3, s6 +.1
    assert faith.delta == pytest.approx(0.16) and faith.direction == "better"
    recall = c.get("context_recall")                  # s1 s2 s3 s5 −.5, s6 0; s4 newly unscored
    assert recall.delta == pytest.approx(-0.4) and recall.direction == "worse" and recall.n_only_a == 1
    empathy = c.get("empathy")                        # s1 −1, s2 0, s3 −2, s6 0 (s5 unscored in the baseline)
    assert empathy.delta == pytest.approx(-0.75) and empathy.n_paired == 4
    for d in c.deltas:
        assert d.ci_low <= d.delta <= d.ci_high


def test_worse_samples_new_unscored_and_seesaw(store: RunStore):
    c = compare_runs(store, "baseline", "candidate")
    worse = c.worse["empathy"]
    assert [(w.sample_id, w.score_a, w.score_b) for w in worse] == [("s3", 5, 3), ("s1", 3, 2)]
    assert worse[0].question == "退款多久能到账？"
    assert [w.sample_id for w in c.worse["context_recall"]] == ["s1", "s2", "s3", "s5"]
    assert "process_compliance" not in c.worse and "faithfulness" not in c.worse
    assert [(u.sample_id, u.scorer, u.score_a, u.unscored_kind) for u in c.new_unscored] == \
           [("s4", "context_recall", RECALL_A["s4"], "timeout")]
    assert c.seesaw and c.seesaw_up == ["faithfulness"] and c.seesaw_down == ["context_recall"]
    seesaw = {s.sample_id: s for s in c.seesaw_samples}
    assert sorted(seesaw) == ["s1", "s2", "s5"]
    assert seesaw["s1"].better == {"faithfulness": (0.9, 1.0)}
    assert seesaw["s1"].worse == {"empathy": (3.0, 2.0), "context_recall": (1.0, 0.5)}


def test_bootstrap_ci_is_seeded_and_matches_the_normal_approximation():
    rng = np.random.default_rng(7)
    diffs = rng.normal(0.3, 1.0, 400)
    low, high = paired_bootstrap_ci(diffs, n_boot=4000, seed=1)
    assert (low, high) == paired_bootstrap_ci(diffs, n_boot=4000, seed=1)
    half = 1.96 * diffs.std(ddof=1) / np.sqrt(len(diffs))
    assert low == pytest.approx(diffs.mean() - half, abs=0.02)
    assert high == pytest.approx(diffs.mean() + half, abs=0.02)
    assert paired_bootstrap_ci([0.5]) == (None, None)


def test_comparison_renders_as_text_and_html(store: RunStore, tmp_path: Path):
    c = compare_runs(store, "baseline", "candidate")
    text = format_comparison(c)
    assert "跷跷板效应" in text and "+0.16" in text and "-0.40" in text and "显著下降" in text
    assert "s3: 5 → 3" in text
    html = write_compare_html(c, tmp_path / "compare.html").read_text(encoding="utf-8")
    assert "跷跷板效应" in html and "+1.20" in html and "-0.75" in html and "timed out after 3 retries" in html
    assert "<script" not in html and html.count("<svg") == 2


# -- gate ------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, expected", [
    ("情绪安抚 mean>=4.0", ("mean", "情绪安抚", ">=", 4.0)),
    ("faithfulness>=0.8", ("mean", "faithfulness", ">=", 0.8)),
    ("pass_rate:流程合规>=90%", ("pass_rate", "流程合规", ">=", 0.9)),
    ("流程合规：pass_rate ≥ 0.9", ("pass_rate", "流程合规", ">=", 0.9)),
    ("regression>=-0.2", ("regression", None, ">=", -0.2)),
    ("max_unscored_rate<=0.1", ("unscored_rate", None, "<=", 0.1)),
    ("max_unscored_rate:empathy<.3", ("unscored_rate", "empathy", "<", 0.3)),
    ("business_score >= 3.5", ("business_score", None, ">=", 3.5)),
])
def test_parse_check(text, expected):
    check = parse_check(text)
    assert (check.stat, check.scorer, check.op) == expected[:3] and check.value == pytest.approx(expected[3])
    assert check.name == text


@pytest.mark.parametrize("text", ["faithfulness", "mean>=3", "foo:bar>=1", ">=0.8", "faithfulness>=high"])
def test_parse_check_rejects_bad_syntax(text):
    with pytest.raises(GateUsageError):
        parse_check(text)


def test_gate_checks_on_the_candidate(store: RunStore):
    result = evaluate_gate(store, "candidate", ["faithfulness>=0.8", "情绪安抚 mean>=4.0", "pass_rate:流程合规>=0.9",
                                                "max_unscored_rate<=0.1", "business_score>=3.7"])
    by_name = {c.name: c for c in result.checks}
    assert by_name["faithfulness>=0.8"].passed and by_name["faithfulness>=0.8"].actual == pytest.approx(0.92)
    assert not by_name["情绪安抚 mean>=4.0"].passed and by_name["情绪安抚 mean>=4.0"].actual == pytest.approx(3.0)
    process = by_name["pass_rate:流程合规>=0.9"]
    assert not process.passed and process.actual == pytest.approx(5 / 6) and "5/6 passed" in process.reason
    unscored = by_name["max_unscored_rate<=0.1"]
    assert unscored.actual == pytest.approx(2 / 23) and unscored.passed
    assert by_name["business_score>=3.7"].actual == pytest.approx((25 / 6 * 2 + 3.0) / 3)
    assert not result.passed and result.exit_code == EXIT_FAILED
    baseline = evaluate_gate(store, "baseline", ["max_unscored_rate<=0.1"])
    assert not baseline.passed and baseline.checks[0].actual == pytest.approx(3 / 23)


def test_regression_gate_checks_every_shared_scorer(store: RunStore):
    # Over every scorer the value is a fraction of each one's range (issue 32.5): a 1–5 rubric's delta / 4.
    result = evaluate_gate(store, "candidate", ["regression>=-0.15"], baseline="baseline")
    outcome = {c.scorer: (c.passed, round(c.actual, 4)) for c in result.checks}
    assert outcome == {"process_compliance": (True, 0.3), "empathy": (False, -0.1875),
                       "faithfulness": (True, 0.16), "context_recall": (False, -0.4)}
    reasons = {c.scorer: c.reason for c in result.checks}
    assert "95% CI" in reasons["empathy"] and "Δ +1.2 on 1–5" in reasons["process_compliance"]
    single = evaluate_gate(store, "candidate", ["regression:faithfulness>=-0.05"], baseline="baseline")
    assert [c.passed for c in single.checks] == [True]
    with pytest.raises(GateUsageError, match="baseline"):
        evaluate_gate(store, "candidate", ["regression>=-0.2"])


def test_refuse_untrusted_rubric(store: RunStore):
    checks = ["情绪安抚 mean>=2.5", "流程合规 mean>=4"]
    trusting = evaluate_gate(store, "candidate", checks)
    assert trusting.passed and "warning, untrusted" in trusting.checks[0].reason   # no agreement measured
    from rubriceval.report.gate_checks import gate_config

    strict = gate_config(checks, refuse_untrusted=True)
    unmeasured = evaluate_gate(store, "candidate", strict)
    assert [c.passed for c in unmeasured.checks] == [False, True]                  # 流程合规 has no trust bar
    assert "no judge–expert agreement" in unmeasured.checks[0].reason
    low = evaluate_gate(store, "candidate", strict, agreement={"empathy": {"kappa": 0.45, "n_items": 120}})
    assert not low.checks[0].passed and "κ = 0.45 < 0.6" in low.checks[0].reason
    few = evaluate_gate(store, "candidate", strict, agreement=lambda rid: (0.8, 30) if rid == "empathy" else None)
    assert not few.checks[0].passed and "only 30 audited items" in few.checks[0].reason
    report_like = SimpleNamespace(kappa_quadratic=SimpleNamespace(value=0.72), n=80)   # an AgreementReport's shape
    good = evaluate_gate(store, "candidate", strict, agreement={"情绪安抚": report_like})
    assert good.passed and not good.checks[0].untrusted
    business = evaluate_gate(store, "candidate", gate_config(["business_score>=1"], refuse_untrusted=True))
    assert not business.passed and "情绪安抚" in business.checks[0].reason           # it feeds the business score


def test_junit_xml_parses_with_one_testcase_per_check(store: RunStore, tmp_path: Path):
    junit = tmp_path / "gate.xml"
    lines: list[str] = []
    code = run_gate(store, "candidate", ["faithfulness>=0.8", "情绪安抚 mean>=4.0", "regression>=-0.15"],
                    baseline="baseline", junit_path=junit, out=lines.append)
    assert code == EXIT_FAILED
    root = ET.parse(junit).getroot()
    suite = root.find("testsuite")
    cases = suite.findall("testcase")
    assert len(cases) == 6 and suite.get("tests") == "6" and suite.get("failures") == "3"
    failed = {c.get("name"): c.find("failure").get("message") for c in cases if c.find("failure") is not None}
    assert set(failed) == {"情绪安抚 mean>=4.0", "regression:empathy>=-0.15", "regression:context_recall>=-0.15"}
    assert "fails >=" in failed["情绪安抚 mean>=4.0"]
    assert "门禁未通过" in "".join(lines)                                           # Chinese data → Chinese output
    assert ET.fromstring(junit_xml(evaluate_gate(store, "candidate", ["faithfulness>=0.8"]))).get("failures") == "0"


def test_exit_codes(store: RunStore, tmp_path: Path):
    quiet: list[str] = []
    assert run_gate(store, "candidate", ["faithfulness>=0.8"], out=quiet.append) == EXIT_PASSED
    assert run_gate(store, "candidate", ["faithfulness>=0.95"], out=quiet.append) == EXIT_FAILED
    assert run_gate(store, "candidate", ["faithfulnes>=0.8"], out=quiet.append) == EXIT_USAGE   # unknown scorer
    assert "available" in quiet[-1]
    assert run_gate(store, "candidate", ["faithfulness=0.8"], out=quiet.append) == EXIT_USAGE
    assert run_gate(store, "no-such-run", ["faithfulness>=0.8"], out=quiet.append) == EXIT_USAGE
    assert run_gate(store, "candidate", [], out=quiet.append) == EXIT_USAGE
    assert run_gate(store, "candidate", ["regression>=0"], out=quiet.append) == EXIT_USAGE   # no baseline
    gate_file = tmp_path / "gate.yaml"
    # metric_thresholds raise faithfulness's bar to 0.95: 1.0 and 1.0 of five reach it → pass rate 0.4.
    gate_file.write_text("baseline: baseline\nrefuse_untrusted: false\nmetric_thresholds: {faithfulness: 0.95}\n"
                         "checks:\n  - faithfulness>=0.8\n"
                         "  - check: regression:faithfulness>=0\n    name: 忠实度不退步\n"
                         "  - {scorer: faithfulness, stat: pass_rate, op: '>=', value: 0.4}\n", encoding="utf-8")
    assert run_gate(store, "candidate", config_path=gate_file, out=quiet.append) == EXIT_PASSED
    assert "忠实度不退步" in quiet[-1]
    (tmp_path / "bad.yaml").write_text("checks:\n  - {scorer: x, stat: mean, op: '=>', value: 1}\n")
    assert run_gate(store, "candidate", config_path=tmp_path / "bad.yaml", out=quiet.append) == EXIT_USAGE
    assert "bad.yaml" in quiet[-1]


def test_assert_gate_helper(store: RunStore):
    result = assert_gate("candidate", ["faithfulness>=0.8", "max_unscored_rate<=0.1"], store=store)
    assert result.passed
    evaluation = SimpleNamespace(store_path=str(store.path), run_id=store.resolve("candidate"))
    with pytest.raises(AssertionError, match="情绪安抚 mean>=4.0: 3 fails >= 4"):
        assert_gate(evaluation, ["faithfulness>=0.8", "情绪安抚 mean>=4.0"])


def test_refuse_untrusted_reads_the_release_gate(store: RunStore):
    from rubriceval import TrustStatus
    from rubriceval.report.gate_trust import trust_from_store

    statuses = trust_from_store(store, "candidate")
    assert set(statuses) == {"empathy"} and statuses["empathy"].trusted is None    # a bar, but nothing audited
    lines: list[str] = []
    code = run_gate(store, "candidate", ["情绪安抚 mean>=2.5", "流程合规 mean>=4"], refuse_untrusted=True,
                    out=lines.append)
    assert code == EXIT_FAILED and "no audited items" in lines[-1]
    trusted = TrustStatus(rubric_id="empathy", version_tag="v1", trusted=True, kappa=0.8, n=90, reason="κ ok")
    assert run_gate(store, "candidate", ["情绪安抚 mean>=2.5"], refuse_untrusted=True,
                    agreement={"empathy": trusted}, out=lines.append) == EXIT_PASSED


def test_summary_table_for_the_cli(store: RunStore):
    from rubriceval import summarize
    from rubriceval.report.markdown import summary_table

    text = summary_table(summarize(store.verdicts("candidate"), store.scorers("candidate")), "zh")
    assert "流程合规 (process_compliance)" in text and "4.17" in text and "业务总分: 3.78 / 5" in text
