"""Judge panel: several judges per rubric → median / majority, unscored judges counted, inter-judge agreement in the
report data, disagreements first in the audit queue, configuration errors naming file, line and field."""
from __future__ import annotations

import json
import textwrap

import pytest

from rubriceval import ConfigError, JudgeConfig, Verdict
from rubriceval.scoring.consensus import is_disagreement, majority_pass
from rubriceval.scoring.panel import JudgePanel, PanelConfig, load_panel_config, score_with_panel
from rubriceval.scoring.panel_votes import DETAILS_KEY, panel_votes
from rubriceval.stats.agreement import fleiss_kappa, krippendorff_alpha
from rubriceval.testing.scripted_judge import ScriptedJudge, judge_error
from rubriceval.trust.panel_agreement import panel_agreement
from tests.trust.test_trust_audits import sample, tone_rubric


def scoring(score: int | None, model: str = "m") -> ScriptedJudge:
    """A judge that always gives `score` (None: never a readable score, so unscored after the re-ask)."""
    reply = "no score here" if score is None else json.dumps({"feedback": f"gave {score}", "score": score})
    judge = ScriptedJudge(lambda request: reply)
    judge.config = judge.config.model_copy(update={"model": model})
    return judge


def panel_of(*scores: int | None, min_scored: int | None = None) -> JudgePanel:
    return JudgePanel([(f"j{i + 1}", scoring(s, model=f"model-{i + 1}")) for i, s in enumerate(scores)],
                      min_scored=min_scored)


# ── the rules ──────────────────────────────────────────────────────────────────────────────────────────────────────

def test_majority_vote_and_its_tie_rule():
    assert majority_pass(2, 3, final=3, threshold=4) is True          # a strict majority decides
    assert majority_pass(1, 3, final=5, threshold=4) is False
    assert majority_pass(1, 2, final=4, threshold=4) is True          # a tie goes to the rounded median
    assert majority_pass(1, 2, final=3, threshold=4) is False


def test_disagreement_is_a_spread_of_two_or_a_pass_fail_split():
    assert is_disagreement([3, 5], threshold=None)
    assert is_disagreement([3, 4], threshold=4)                       # spread 1, but one passes and one fails
    assert not is_disagreement([4, 5, 5], threshold=4)
    assert not is_disagreement([3, 4], threshold=None)


async def test_median_score_majority_pass_and_every_judges_score_kept():
    verdict = await score_with_panel(tone_rubric(), sample(1), panel_of(2, 4, 5))
    assert verdict.score == 4.0 and verdict.passed is True
    info = verdict.details[DETAILS_KEY]
    assert info["scores"] == [2, 4, 5] and info["median"] == 4 and info["spread"] == 3
    assert info["pass_votes"] == 2 and info["disagreement"] is True
    votes = panel_votes(verdict)
    assert [(v.judge, v.model, v.score, v.passed) for v in votes] == [
        ("j1", "model-1", 2, False), ("j2", "model-2", 4, True), ("j3", "model-3", 5, True)]
    assert verdict.feedback == "gave 4" and verdict.usage.calls == 3


async def test_agreeing_judges_are_not_a_disagreement():
    verdict = await score_with_panel(tone_rubric(), sample(1), panel_of(4, 5, 4))
    assert verdict.score == 4.0 and verdict.details[DETAILS_KEY]["disagreement"] is False


async def test_even_panel_tie_goes_to_the_rounded_median():
    verdict = await score_with_panel(tone_rubric(), sample(1), panel_of(3, 4))
    assert verdict.score == 4.0 and verdict.passed is True            # median 3.5 → 4; votes 1–1
    assert verdict.details[DETAILS_KEY]["disagreement"] is True       # pass/fail split
    low = await score_with_panel(tone_rubric(), sample(1), panel_of(1, 4))
    assert low.score == 3.0 and low.passed is False                   # median 2.5 → 3; votes 1–1


async def test_one_unscored_judge_is_counted_and_the_others_decide():
    verdict = await score_with_panel(tone_rubric(), sample(1), panel_of(5, None, 3))
    assert verdict.score == 4.0 and verdict.unscored_reason is None
    info = verdict.details[DETAILS_KEY]
    assert info["n_unscored"] == 1 and info["scores"] == [5, 3]
    assert "no score" in info["unscored_reasons"][0]
    assert panel_votes(verdict)[1].unscored_kind == "parse_error"
    assert verdict.usage.calls == 1 + 2 + 1                            # the unscored judge was re-asked once


async def test_too_few_scored_judges_make_the_verdict_unscored_by_the_declared_rule():
    verdict = await score_with_panel(tone_rubric(), sample(1), panel_of(5, None, None))
    assert verdict.score is None and verdict.unscored_kind == "parse_error"
    assert "only 1 of 3 panel judges were scored (at least 2 needed)" in verdict.unscored_reason
    assert verdict.details[DETAILS_KEY]["scores"] == [5]
    # A declared min_scored of 1 accepts the one scored judge.
    lenient = await score_with_panel(tone_rubric(), sample(1), panel_of(5, None, None, min_scored=1))
    assert lenient.score == 5.0


async def test_a_provider_error_is_an_unscored_judge_not_a_score():
    failing = ScriptedJudge(lambda request: judge_error("HTTP 500: boom"))
    panel = JudgePanel([("a", scoring(4)), ("b", failing), ("c", scoring(4))])
    verdict = await score_with_panel(tone_rubric(), sample(1), panel)
    assert verdict.score == 4.0 and verdict.details[DETAILS_KEY]["n_unscored"] == 1
    assert panel_votes(verdict)[1].unscored_kind == "provider_error"


# ── inter-judge agreement in the report data ─────────────────────────────────────────────────────────────────────

async def test_inter_judge_agreement_uses_the_shared_statistics():
    table = [(4, 4, 5), (2, 3, 2), (5, 5, 5), (1, 3, None), (3, 3, 4), (2, 2, 2)]
    verdicts = [await score_with_panel(tone_rubric(), sample(i), panel_of(*row)) for i, row in enumerate(table)]
    result = panel_agreement(verdicts, threshold=4, n_boot=200, seed=1)
    ratings = [[float(s) if s is not None else None for s in row] for row in table]
    expected_alpha = krippendorff_alpha(ratings, level="ordinal", n_boot=200, seed=1)
    assert result.alpha_ordinal == expected_alpha and result.alpha_ordinal.value is not None
    complete = [[float(s >= 4) for s in row] for row in table if None not in row]
    assert result.fleiss_pass == fleiss_kappa(complete, n_boot=200, seed=1)
    assert result.n_rows == 6 and result.n_complete == 5
    assert result.n_disagreements == 2                                 # (1, 3): spread 2; (3, 3, 4): split
    by_judge = {j.judge: j for j in result.judges}
    assert by_judge["j3"].n_unscored == 1 and by_judge["j3"].n_scored == 5
    assert by_judge["j1"].mean == pytest.approx(17 / 6)
    assert panel_agreement([Verdict(sample_id="x", scorer="tone", score=3.0)], 4) is None


# ── configuration ────────────────────────────────────────────────────────────────────────────────────────────────

def write(tmp_path, text: str):
    path = tmp_path / "judges.yaml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def test_panel_config_inherits_the_judge_section_and_overrides_per_judge(tmp_path, monkeypatch):
    monkeypatch.setenv("PANEL_TEST_KEY", "sk-other")
    path = write(tmp_path, """
        judge: {base_url: "http://127.0.0.1:9/v1", model: base, timeout_s: 7}
        judges:
          - {name: a}
          - {name: b, model: other, base_url: "http://127.0.0.1:8/v1", api_key_env: PANEL_TEST_KEY}
          - {name: c, seed: 7}
        panel: {min_scored: 3}
        """)
    config = load_panel_config(path)
    assert [j.name for j in config.judges] == ["a", "b", "c"] and config.required == 3
    a, b, c = (j.config for j in config.judges)
    assert (a.model, a.timeout_s, b.model, b.base_url, c.seed) == ("base", 7, "other", "http://127.0.0.1:8/v1", 7)
    assert config.judges[1].resolved_config().api_key == "sk-other"
    public = config.public()
    assert "sk-other" not in json.dumps(public)
    assert PanelConfig.from_public(public).judges[2].config.seed == 7
    assert load_panel_config(write(tmp_path, "judge: {model: x}\n")) is None


@pytest.mark.parametrize("body, field, line, message", [
    ("judges:\n  - {name: a, model: x}\n  - {name: a, model: y}\n", "judges[1].name", 3, "two panel judges"),
    ("judges:\n  - {name: a, model: x}\n  - {name: b, model: x}\n", "judges[1]", 3, "share cached answers"),
    ("judges:\n  - {name: a, model: x}\n  - {name: b, modle: y}\n", "judges[1].modle", 3, "unknown judge setting"),
    ("judges:\n  - {name: a, model: x}\n  - {name: b, timeout_s: -1}\n", "judges[1].timeout_s", 3, "greater than"),
    ("judges:\n  - {name: a, model: x}\n", "judges", 1, "at least two"),
    ("judges:\n  - {model: x}\n  - {model: y}\npanel: {min_scored: 3}\n", "panel.min_scored", 4, "min_scored is 3"),
])
def test_bad_panel_config_names_file_line_and_field(tmp_path, body, field, line, message):
    path = write(tmp_path, body)
    with pytest.raises(ConfigError) as caught:
        load_panel_config(path, base=JudgeConfig(base_url="http://127.0.0.1:9/v1"))
    error = caught.value
    assert (error.file, error.line, error.field) == (str(path), line, field) and message in error.message


# ── end to end: a run with a panel on the loopback stub ──────────────────────────────────────────────────────────

def test_a_run_with_a_panel_stores_each_judge_reports_agreement_and_queues_disagreements_first(tmp_path):
    from rubriceval import AuditStore, RunStore, Sample, evaluate
    from rubriceval.store.audit_models import QueueFilter
    from rubriceval.testing.stub_server import StubServer

    # Each model scores by the answer's own number, model-b one level lower on "s2", model-c harsh on "s3".
    offsets = {"model-a": {}, "model-b": {"s2": -1}, "model-c": {"s3": -3}}
    base = {"s0": 4, "s1": 5, "s2": 4, "s3": 5}
    samples = [Sample(id=sid, question=f"q {sid}", answer=f"answer {sid}") for sid in base]

    def respond(body):
        sid = next(s for s in base if f"answer {s}" in body["messages"][-1]["content"])
        return {"feedback": "ok", "score": base[sid] + offsets[body["model"]].get(sid, 0)}

    with StubServer(responder=respond) as stub:
        path = write(tmp_path, "judges: [{name: a, model: model-a}, {name: b, model: model-b}, "
                               "{name: c, model: model-c}]\n")
        judge = JudgeConfig(base_url=stub.base_url, model="x", cache_path=str(tmp_path / "cache.sqlite"), timeout_s=2)
        result = evaluate(samples, rubrics=[tone_rubric()], judge=judge, store=tmp_path / "runs.sqlite", panel=path,
                          progress=False)
        assert stub.stats.calls["chat"] == 3 * len(samples)
    scores = {v.sample_id: v.score for v in result.verdicts}
    assert scores == {"s0": 4, "s1": 5, "s2": 4, "s3": 5}             # medians
    votes = {v.sample_id: [x.score for x in panel_votes(v)] for v in result.verdicts}
    assert votes["s2"] == [4, 3, 4] and votes["s3"] == [5, 5, 2]
    store = RunStore(tmp_path / "runs.sqlite")
    assert [j["name"] for j in store.run_info(result.run_id).config.panel["judges"]] == ["a", "b", "c"]
    assert result.totals["judge"]["calls"] == 12                      # every judge's calls counted once

    summary = result.summary().get("tone")
    assert summary.panel is not None and summary.panel.n_rows == 4
    assert summary.panel.n_disagreements == 2 and summary.panel.alpha_ordinal.value is not None
    # … and in the reports people read.
    from rubriceval.report.html import render_html_report
    from rubriceval.report.markdown import render_markdown
    from rubriceval.report.run_data import load_run

    data = load_run(store, result.run_id)
    markdown = render_markdown(data, lang="en")
    assert "**Judge panel agreement**" in markdown and "2/4 disagreements" in markdown
    assert f"Krippendorff α (ordinal) {summary.panel.alpha_ordinal.format()}" in markdown
    assert "评审团一致性" in render_html_report(data, lang="zh")

    with AuditStore(tmp_path / "runs.sqlite") as audits:
        rows = audits.queue(result.run_id, QueueFilter(scorer="tone", order="uncertain_first"))
    assert [r.sample_id for r in rows] == ["s3", "s2", "s0", "s1"]     # spread 3, then the pass/fail split
    assert [r.disputed for r in rows] == [True, True, False, False]
