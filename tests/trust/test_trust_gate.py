"""The release gate: trusted / untrusted / unknown by the rubric's own trust bar, for this exact version."""
from __future__ import annotations

import pytest

from rubriceval import TrustBar, agreement_report, trust_status
from rubriceval.trust.release_gate import release_gate, run_warnings
from rubriceval.trust.store import TrustStore
from tests.trust.test_trust_audits import Row, make_audited_store, sample, tone_rubric

GOOD = [(5, 5), (4, 4), (3, 3), (2, 2), (1, 1), (5, 4), (4, 4), (3, 3), (2, 1), (1, 1), (4, 5), (3, 3)]
POOR = [(5, 1), (4, 2), (3, 5), (2, 4), (1, 5), (5, 3), (4, 1), (3, 1), (2, 5), (1, 4), (4, 4), (3, 2)]


def rows(pairs):
    return [Row(sample(i), judge, {"alice": human}) for i, (judge, human) in enumerate(pairs)]


def test_no_store_or_no_audits_is_unknown(tmp_path):
    rubric = tone_rubric()
    status = trust_status(tmp_path / "missing.sqlite", rubric)
    assert status.trusted is None and status.label == "unknown" and "no run store" in status.reason
    assert not (tmp_path / "missing.sqlite").exists()                   # asking does not create a store


def test_a_judged_but_unaudited_version_is_unknown(store_target):
    rubric = tone_rubric()
    make_audited_store(store_target, rubric, [Row(sample(i), 4) for i in range(12)])   # judged, never audited
    status = trust_status(store_target, rubric)
    assert status.trusted is None and status.n == 0 and "no audited items" in status.reason


def test_below_the_bar_is_untrusted_with_the_numbers(store_target):
    rubric = tone_rubric()
    store = store_target
    make_audited_store(store, rubric, rows(POOR))
    status = trust_status(store, rubric)
    expected = agreement_report([j for j, _ in POOR], [h for _, h in POOR], n_boot=0).kappa_quadratic.value
    assert status.trusted is False and status.label == "untrusted"
    assert status.n == 12 and status.kappa == pytest.approx(expected)
    assert "below the bar κ ≥ 0.6" in status.reason and "12 items" in status.reason


def test_meeting_the_bar_is_trusted(tmp_path):
    rubric = tone_rubric()
    store = tmp_path / "runs.sqlite"
    make_audited_store(store, rubric, rows(GOOD))
    status = trust_status(store, rubric)
    assert status.trusted is True and status.kappa >= 0.6 and status.min_items == 10
    assert status.kappa_ci_low is not None and status.kappa_ci_low <= status.kappa <= status.kappa_ci_high


def test_too_few_items_or_no_bar_is_unknown(tmp_path):
    store = tmp_path / "runs.sqlite"
    demanding = tone_rubric(trust=TrustBar(min_kappa=0.6, min_items=50))
    make_audited_store(store, demanding, rows(GOOD))
    status = trust_status(store, demanding)
    assert status.trusted is None and "at least 50 audited items" in status.reason and status.kappa is not None

    no_bar = tone_rubric(trust=None)
    make_audited_store(store, no_bar, rows(GOOD), run_name="no-bar")
    status = trust_status(store, no_bar)
    assert status.trusted is None and "no trust bar" in status.reason


def test_editing_the_rubric_resets_trust(tmp_path):
    rubric = tone_rubric()
    store = tmp_path / "runs.sqlite"
    make_audited_store(store, rubric, rows(GOOD))
    edited = tone_rubric(criterion="Is the answer polite, warm and short?")
    assert trust_status(store, rubric).trusted is True
    assert trust_status(store, edited).trusted is None


def test_judge_model_filter(tmp_path):
    rubric = tone_rubric()
    store = tmp_path / "runs.sqlite"
    make_audited_store(store, rubric, rows(GOOD), judge_model="qwen-plus")
    assert trust_status(store, rubric, judge_model="qwen-plus").trusted is True
    assert trust_status(store, rubric, judge_model="gpt-4o").trusted is None


def test_stored_labels_result_with_more_items_is_used(store_target):
    rubric = tone_rubric()
    store = store_target
    make_audited_store(store, rubric, rows(GOOD[:4]))                   # 4 audits: too few on their own
    big = agreement_report([j for j, _ in POOR] * 2, [h for _, h in POOR] * 2, n_boot=0)
    with TrustStore(store) as trust:
        trust.record_agreement("tone", rubric.version_tag, big, source="labels", source_detail="labels.csv")
        trust.record_agreement("tone", "v1@other", big, source="labels")               # another version
    status = trust_status(store, rubric)
    assert status.n == 24 and status.trusted is False and "labels.csv" in status.source


def test_gate_blocks_untrusted_and_optionally_unknown(store_target):
    store = store_target
    good = tone_rubric()
    poor = tone_rubric(id="poor")
    fresh = tone_rubric(id="fresh")
    unbarred = tone_rubric(id="unbarred", trust=None)
    make_audited_store(store, good, rows(GOOD), run_name="good")
    make_audited_store(store, poor, rows(POOR), run_name="poor")
    rubrics = [good, poor, fresh, unbarred]

    gate = release_gate(store, rubrics)
    assert not gate.passed and [s.rubric_id for s in gate.blocking] == ["poor"]
    strict = release_gate(store, rubrics, require_known=True)
    assert [s.rubric_id for s in strict.blocking] == ["poor", "fresh"]     # unbarred never blocks
    assert "FAILED" in strict.summary() and "fresh" in strict.summary()
    assert release_gate(store, [good, unbarred]).passed

    warnings = run_warnings(store, rubrics)
    assert len(warnings) == 2
    assert "poor" in warnings[0] and "is below" in warnings[0]
    assert "fresh" in warnings[1] and "has not yet met" in warnings[1]


def test_one_trust_rule_for_the_release_gate_and_the_ci_gate():
    from rubriceval.trust.bar import TrustEvidence, check_bar

    bar = TrustBar(min_kappa=0.6, min_items=10)
    outcomes = {
        "none": check_bar(bar, None),
        "bare kappa": check_bar(bar, TrustEvidence(kappa=0.9)),
        "few items": check_bar(bar, TrustEvidence(kappa=0.9, n_items=9)),
        "few items, kappa undefined": check_bar(bar, TrustEvidence(kappa=None, n_items=9)),
        "kappa undefined": check_bar(bar, TrustEvidence(kappa=None, n_items=10)),
        "below": check_bar(bar, TrustEvidence(kappa=0.59, n_items=10)),
        "at the bar": check_bar(bar, TrustEvidence(kappa=0.6, n_items=10)),
    }
    assert {k: (v.trusted, v.shortfall) for k, v in outcomes.items()} == {
        "none": (None, "no_evidence"), "bare kappa": (None, "items_unknown"), "few items": (None, "too_few_items"),
        "few items, kappa undefined": (None, "too_few_items"), "kappa undefined": (None, "kappa_undefined"),
        "below": (False, "below_bar"), "at the bar": (True, None)}
    assert TrustBar(min_kappa=0.6).min_items == 50                        # the one default, on the typed bar


def test_changing_only_the_trust_bar_keeps_the_version_and_its_audits(tmp_path):
    rubric = tone_rubric()
    stricter = tone_rubric(trust=TrustBar(min_kappa=0.95, min_items=10))
    assert stricter.version_tag == rubric.version_tag                    # the bar judges verdicts, it does not shape them
    store = tmp_path / "runs.sqlite"
    make_audited_store(store, rubric, rows(GOOD))
    assert trust_status(store, stricter).n == len(GOOD)                   # the audits still count
    assert trust_status(store, stricter).trusted is False


def test_run_warns_when_a_rubric_is_used_below_its_bar(store_target, tmp_path, stub_server, capsys):
    import json

    import yaml

    from rubriceval.cli import main

    rubric = tone_rubric()
    rubric_dir = tmp_path / "rubrics"
    rubric_dir.mkdir()
    elsewhere = tone_rubric(id="elsewhere", applies_to={"tags": ["another-dataset"]})   # applies to no row here
    for r in (rubric, elsewhere):
        (rubric_dir / f"{r.id}.yaml").write_text(
            yaml.safe_dump(r.model_dump(mode="json", exclude_none=True), allow_unicode=True), encoding="utf-8")
    store = store_target
    audited = rows(POOR)
    make_audited_store(store, rubric, audited, judge_model="stub")
    dataset = tmp_path / "data.jsonl"
    dataset.write_text("\n".join(json.dumps(r.sample.model_dump(mode="json", include={"id", "question", "answer"}))
                                 for r in audited), encoding="utf-8")

    args = ["run", str(dataset), "--rubrics", str(rubric_dir), "--store", str(store), "--quiet", "--no-cache",
            "--judge-base-url", stub_server.base_url, "--judge-model", "stub"]
    assert main(args) == 0
    err = capsys.readouterr().err
    assert "warning: rubric tone" in err and "is below its trust bar" in err and "12 items" in err
    assert "warning: rubric elsewhere" not in err                        # left out of the run, so not warned about

    # Judged by another model, the audits say nothing about it: trust is unknown, still warned about.
    assert main(args[:-1] + ["other-model"]) == 0
    err = capsys.readouterr().err
    assert "has not yet met its trust bar" in err and "with judge other-model" in err


def test_report_shows_each_rubric_versions_agreement(store_target, tmp_path, capsys):
    from rubriceval.cli import main
    from rubriceval.i18n import render
    from rubriceval.trust.release_gate import agreement_lines

    store = store_target
    poor = tone_rubric()
    make_audited_store(store, poor, rows(POOR), run_name="poor")
    lines = {rubric: render(line, "en") for rubric, line in agreement_lines(store, [poor], n_boot=0).items()}
    assert lines["tone"].startswith(poor.version_tag)
    assert "on 12 audited item(s) — below the bar (needs ≥ 0.6 on ≥ 10 items)" in lines["tone"]
    assert "κ" not in lines["tone"] and "unknown" not in lines["tone"]

    assert main(["report", "poor", "--store", str(store), "--out", str(tmp_path / "out"), "--lang", "en"]) == 0
    out = capsys.readouterr().out
    assert "on 12 audited item(s) — below the bar" in out and poor.version_tag in out
    html = (tmp_path / "out" / "poor.html").read_text(encoding="utf-8")
    assert "on 12 audited item(s) — below the bar" in html
    assert main(["report", "poor", "--store", str(store), "--out", str(tmp_path / "zh"), "--lang", "zh"]) == 0
    assert "12 条已审核）——未达标" in capsys.readouterr().out
