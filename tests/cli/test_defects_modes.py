"""Issue 43, items 1, 2 and 5 without the model (the embedded judge's half is tests/architecture/test_defects_local_judge.py).

1. `--judge-mode predicates` made no judge: a run made its judge only for judge items, and predicates mode has none,
   so every per-turn question was unscored "no judge to ask the question".
2. A shipped rubric runs, on each judge, the mode its `measured:` block found best there (best by the interval's
   lower bound, not by a κ on 4 items), and a run says when it runs a mode never measured on its judge.
5. `rubriceval compile` takes --judge-mode, and --judge for the mode that judge would get."""
from __future__ import annotations

from rubriceval import evaluate
from rubriceval.cli import main
from rubriceval.rubric.loader import load_rubric
from rubriceval.scoring.judge_mode import with_judge_mode
from tests.architecture.test_defects_local_judge import CONVERSATIONS

IDENTITY = "rubrics/identity_verification.yaml"


def test_predicates_mode_hands_the_judge_to_the_per_turn_questions(judge_config, tmp_path):
    result = evaluate(CONVERSATIONS, rubrics=IDENTITY, judge=judge_config.model_copy(update={"judge_mode": "predicates"}),
                      store=tmp_path / "runs.sqlite", progress=False)
    verdicts = [v for v in result.verdicts if v.scorer == "identity_verification"]
    assert len(verdicts) == 3
    assert not [v.unscored_reason for v in verdicts if "no judge" in (v.unscored_reason or "")]
    assert result.totals["judge"]["calls"] > 0


def test_each_judge_gets_the_mode_measured_best_on_it_and_is_told_when_it_was_never_measured():
    identity, process = load_rubric(IDENTITY), load_rubric("rubrics/process_compliance.yaml")
    (on_local, process_local), notes = with_judge_mode([identity, process], None, judge_models=["local"])
    assert on_local.judge_mode == "predicates"              # κ 0.85 [0.61, 1.00]; holistic −0.01 there
    # checklist_fitted κ 0.70 [0.54, 0.83] on 22 items, not holistic+per_level+shuffled κ 0.96 [0.00, 1.00] on 4
    assert process_local.judge_mode == "checklist_fitted"
    assert any("'identity_verification' runs in judge mode 'predicates' (measured best on judge 'local'" in n
               for n in notes)
    assert not any("never measured" in n for n in notes)
    (elsewhere,), notes = with_judge_mode([identity], None, judge_models=["qwen-plus"])
    assert elsewhere.judge_mode == identity.judge_mode == "holistic"        # the file's mode for other judges
    assert len(notes) == 1 and "'holistic' was never measured on judge 'qwen-plus'" in notes[0]
    (asked,), notes = with_judge_mode([identity], "checklist", judge_models=["local"])
    assert asked.judge_mode == "checklist" and notes == []                  # asked for, and measured there


def test_a_run_says_which_mode_it_runs_and_why(judge_config, tmp_path, capsys):
    evaluate(CONVERSATIONS[:1], rubrics=IDENTITY, judge=judge_config, store=tmp_path / "runs.sqlite", progress=False)
    err = capsys.readouterr().err
    assert "rubric 'identity_verification' runs in judge mode 'holistic'" in err
    assert "never measured on judge 'stub'" in err


def test_compile_previews_the_mode_asked_or_the_mode_a_judge_gets(capsys):
    def compiled(*args):
        assert main(["compile", *args]) == 0
        return capsys.readouterr()

    # The feedback-then-score prompt of a rubric whose file says checklist_fitted.
    out = compiled("rubrics/emotional_soothing.yaml", "--judge-mode", "holistic")
    assert '{"feedback": "<评语>", "score": <1-5 的整数>}' in out.out and "judge mode: holistic" in out.err
    assert "只回答 yes 或 no" not in out.out
    # On the embedded judge identity_verification runs predicates: its per-turn questions about a conversation.
    out = compiled(IDENTITY, "--dataset", "datasets/demo_zh.jsonl", "--judge", "local")
    assert "judge mode: predicates (judge 'local')" in out.err and "# 问题（关于第 2 轮）" in out.out
    out = compiled(IDENTITY, "--dataset", "datasets/demo_zh.jsonl", "--judge", "qwen-plus")
    assert "judge mode: holistic (judge 'qwen-plus')" in out.err and "never measured on judge 'qwen-plus'" in out.err
    assert '"score"' in out.out             # holistic: the transcript judged whole (and its must checks' questions)
