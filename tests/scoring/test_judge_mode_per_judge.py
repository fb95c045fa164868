"""Each rubric's judge mode is decided for the judge(s) that judge it, in one place (rubriceval/scoring/judge_mode.py):
fitted checklist weights apply only to the judge they were fitted for; any other judge runs the rubric's declared
level rule, and the run says so once per rubric with the fix. Checked where modes are resolved: the rule itself,
a run (api.start_run, end to end through the stub server), the dry-run / Batch API planner, a panel, a resumed run
(keeps its versions, says so; the scorer's guard agrees), pairwise (holistic), benchmark-judge and calibrate."""
from __future__ import annotations

import asyncio

import pytest

import rubriceval.scoring.judge_mode as judge_mode
from rubriceval import JudgeConfig, RunStore, Sample, load_rubric
from rubriceval.run.evaluate import run_async, start_run
from rubriceval.run.planning import plan_cost, planned_judge_calls
from rubriceval.scoring.judge_mode import misfitted_weights, supported_mode, with_judge_mode
from rubriceval.scoring.panel import PanelConfig, PanelJudge
from rubriceval.store.runs import rubrics_from_run

SOOTHING = load_rubric("rubrics/emotional_soothing.yaml")
SAMPLE = Sample(id="d1", question="我的订单延迟三天了还没到", tags=["订单延迟"],
                answer="非常抱歉让您久等了。包裹在杭州转运中心，预计周五送达；超过 5 天可申请退款。",
                contexts=["杭州转运中心，暴雨延误，预计周五送达。"])
FIX = "rubriceval calibrate --fit-weights --rubric emotional_soothing"


def hosted(model: str, **extra) -> JudgeConfig:
    return JudgeConfig(base_url="http://127.0.0.1:9/v1", model=model, cache=False, **extra)


def test_the_shipped_rubric_runs_its_fitted_weights_only_on_the_judge_they_were_fitted_for():
    assert SOOTHING.judge_mode == "checklist_fitted" and SOOTHING.checklist_items[0].fitted.judge_model == "local"
    (same,), notes = with_judge_mode([SOOTHING], None, judge_models=["local"])
    assert same is SOOTHING and notes == []
    (other,), notes = with_judge_mode([SOOTHING], None, judge_models=["qwen-max"])
    assert other.judge_mode == "checklist" and other.version_tag != SOOTHING.version_tag   # never mixed
    assert len(notes) == 1 and "'local'" in notes[0] and "'qwen-max'" in notes[0] and FIX in notes[0]
    # --judge-mode checklist_fitted is decided by the same rule; holistic stays available to any judge.
    assert supported_mode(SOOTHING, "checklist_fitted", ["qwen-max"]) == "checklist"
    assert supported_mode(SOOTHING, "holistic", ["qwen-max"]) == "holistic"
    # Applying the rule twice changes nothing (the Batch API planner re-applies it to a started run's rubrics).
    # Applied again it only says again that this mode was never measured on this judge (issue 43.2).
    again, notes = with_judge_mode([other], None, judge_models=["qwen-max"])
    assert again == [other] and len(notes) == 1 and "never measured on judge 'qwen-max'" in notes[0]


def test_weights_that_name_no_judge_apply_to_any_judge():
    item = SOOTHING.checklist_items[0]
    unnamed = SOOTHING.model_copy(update={"items": [item.model_copy(update={
        "fitted": item.fitted.model_copy(update={"judge_model": ""})}) if i is item else i for i in SOOTHING.items]})
    assert misfitted_weights(unnamed, ["qwen-max"]) is None
    assert supported_mode(unnamed, "checklist_fitted", ["qwen-max"]) == "checklist_fitted"


def test_a_panel_uses_fitted_weights_only_when_every_judge_is_their_model():
    assert supported_mode(SOOTHING, "checklist_fitted", ["local", "local"]) == "checklist_fitted"    # seeds
    (mixed,), notes = with_judge_mode([SOOTHING], None, judge_models=["local", "qwen-max", "qwen-max"])
    fallback, unmeasured = notes[0].split(" — ")     # why it falls back; that 'checklist' was never measured there
    assert mixed.judge_mode == "checklist" and len(notes) == 1 and fallback.count("'qwen-max'") == 1
    assert "never measured on judge 'qwen-max'" in unmeasured


def panel(*models: str) -> PanelConfig:
    return PanelConfig(judges=[PanelJudge(name=f"j{i}", config=hosted(m, seed=i)) for i, m in enumerate(models)])


@pytest.mark.parametrize("models, mode", [(("local",), "checklist_fitted"), (("qwen-max",), "checklist"),
                                          (("local", "local"), "checklist_fitted"), (("local", "qwen-max"), "checklist")])
def test_a_run_stores_the_mode_for_its_judges_and_says_so_once(tmp_path, capsys, models, mode):
    store = RunStore(tmp_path / "runs.sqlite")
    config = JudgeConfig(model=models[0]) if len(models) == 1 else hosted("metrics-judge")
    run_id, used = start_run([SAMPLE], [SOOTHING], [], store=store, judge_config=config,
                             panel_config=panel(*models) if len(models) > 1 else None)
    stored, _ = rubrics_from_run(store, run_id)
    assert used[0].judge_mode == stored[0].judge_mode == mode
    assert store.run_info(run_id).config.rubrics == {"emotional_soothing": stored[0].version_tag}
    assert capsys.readouterr().err.count(FIX) == (mode == "checklist")


async def test_end_to_end_another_judge_scores_with_the_level_rule_the_fitted_judge_with_the_weights(
        judge_config, tmp_path, capsys):
    store = RunStore(tmp_path / "runs.sqlite")
    how = {}
    for model in ("stub", "local"):           # the stub server answers whatever model is named
        config = judge_config.model_copy(update={"model": model, "choice_constraint": "grammar"})
        run_id, _ = await run_async([SAMPLE], [SOOTHING], [], store=store, judge_config=config, name=model,
                                    progress=False)
        (verdict,) = store.verdicts(run_id)
        details = verdict.details["checklist"]["checklist"]
        assert verdict.score is not None and "refit" not in details["how"]     # the guard is never reached
        how[model] = (details["judge_mode"], details["how"])
    assert how["stub"][0] == "checklist" and how["stub"][1].startswith("level ")
    assert how["local"][0] == "checklist_fitted" and how["local"][1].startswith("fitted z")
    assert capsys.readouterr().err.count(FIX) == 1


async def test_a_resumed_run_keeps_its_mode_says_so_and_the_scorers_guard_agrees(judge_config, tmp_path, capsys):
    store = RunStore(tmp_path / "runs.sqlite")
    run_id, rubrics = start_run([SAMPLE], [SOOTHING], [], store=store, judge_config=JudgeConfig(model="local"))
    assert rubrics[0].judge_mode == "checklist_fitted"
    capsys.readouterr()
    other = judge_config.model_copy(update={"model": "stub"})
    stored, _ = rubrics_from_run(store, run_id)
    await run_async(None, stored, [], store=store, judge_config=other, resume_run=run_id, progress=False)
    err = capsys.readouterr().err
    assert "resumed run keeps rubric 'emotional_soothing' in judge mode 'checklist_fitted'" in err and FIX in err
    (verdict,) = store.verdicts(run_id)
    assert verdict.scorer_version == SOOTHING.version_tag                     # one version per run
    assert "weights fitted for judge 'local', this judge is 'stub': refit them" in \
        verdict.details["checklist"]["checklist"]["how"]


@pytest.fixture
def resolutions(monkeypatch):
    """Every call of the one rule, with the judges it was asked about."""
    calls: list[tuple] = []
    real = judge_mode.with_judge_mode

    def spy(rubrics, wanted, *, judge_models):
        calls.append((wanted, list(judge_models)))
        return real(rubrics, wanted, judge_models=judge_models)
    monkeypatch.setattr(judge_mode, "with_judge_mode", spy)
    monkeypatch.setattr("benchmarks.judge.cs_zh.with_judge_mode", spy)     # imported at its module's top
    return calls


def test_the_planner_decides_for_the_judges_that_make_the_calls(resolutions):
    plan_cost([SAMPLE], [SOOTHING], [], hosted("qwen-max"))
    list(planned_judge_calls([SAMPLE], [SOOTHING], [], hosted("qwen-max", self_consistency=3)))
    plan_cost([SAMPLE], [SOOTHING], [], hosted("metrics-judge"), panel=panel("local", "qwen-max"))
    assert resolutions == [(None, ["qwen-max"]), (None, ["qwen-max"] * 3), (None, ["local", "qwen-max"])]


def test_the_dry_run_plans_the_same_calls_and_says_which_rubric_runs_its_rule():
    # Fitted weights or the level rule: the same questions are asked, so the same calls are planned.
    fitted = plan_cost([SAMPLE], [SOOTHING], [], hosted("local"))
    rule = plan_cost([SAMPLE], [SOOTHING], [], hosted("qwen-max"))
    assert fitted.scorers[0].calls == rule.scorers[0].calls == len(SOOTHING.checklist_items[0].questions)
    assert FIX not in fitted.format() and rule.format().count(FIX) == 1


async def test_pairwise_compares_with_the_holistic_judge_item(tmp_path, resolutions):
    from rubriceval.data.io import write_dataset
    from rubriceval.pairwise.run import run_pairwise
    from rubriceval.testing.scripted_judge import ScriptedJudge

    for name, answer in (("a", "请耐心等待。"), ("b", SAMPLE.answer)):
        write_dataset([SAMPLE.model_copy(update={"answer": answer})], tmp_path / f"{name}.jsonl")
    judge = ScriptedJudge(lambda request: {"feedback": "b 更好", "winner": "tie"})
    _, totals = await run_pairwise([str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl")], [SOOTHING],
                                   store_path=tmp_path / "runs.sqlite", judge_config=JudgeConfig(), progress=False,
                                   judge=judge)
    assert resolutions == [("holistic", ["scripted"])]                       # the scripted judge's model
    assert totals.units_total == 1 and totals.scored == 1 and len(judge.requests) == 2


def test_benchmark_judge_and_calibrate_decide_for_their_judge(resolutions):
    from benchmarks.judge.cs_zh import variant
    from rubriceval.testing.scripted_judge import ScriptedJudge
    from rubriceval.trust.calibrate import score_audited_items

    assert variant(SOOTHING, "holistic", None, False, "qwen-max").judge_mode == "holistic"
    assert variant(SOOTHING, "checklist_fitted", None, False, "local").judge_mode == "checklist"   # fitted later
    asyncio.run(score_audited_items(SOOTHING, [], ScriptedJudge([])))
    assert resolutions == [("holistic", ["qwen-max"]), ("checklist", ["local"]), (None, ["scripted"])]


def test_a_checks_only_rubric_runs_predicates_whatever_mode_is_asked():
    """--judge-mode holistic on a rubric of per-turn checks alone (no judge item) once failed validation
    (judge_capped needs a judge item); it runs the one mode it has."""
    from pathlib import Path

    from rubriceval.rubric.loader import load_rubric
    from rubriceval.scoring.judge_mode import with_judge_mode

    rubric = load_rubric(Path(__file__).resolve().parents[2]
                         / "benchmarks/judge/rubrics/robustness_predicates_zh.yaml")
    for wanted in ("holistic", "checklist", "checklist_fitted", "predicates", None):
        (out,), notes = with_judge_mode([rubric], wanted, judge_models=["local"])
        assert out.judge_mode == "predicates" and notes == []
