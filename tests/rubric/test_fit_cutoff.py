"""`calibrate --fit-thresholds` (issue 28.3): a per-turn question's cut-off fitted to audited turns, proposed only
when it beats 0.5 on held-out turns, tied to the judge it was fitted for; AUC and the cut-off reported."""
from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest

from rubriceval import Conversation, Rubric
from rubriceval.common.errors import DatasetError
from rubriceval.data.conversation_io import conversation_sample
from rubriceval.rubric.loader import load_rubric
from rubriceval.run.runner import execute
from rubriceval.store.runs import RunConfig, RunStore
from rubriceval.testing.scripted_judge import ScriptedJudge, yes_no_reply
from rubriceval.trust.fit_cutoff import auc, fit_cutoff, fit_thresholds, read_turn_labels

QUESTION = "这一轮客服是否承诺了参考资料以外的补偿？"
LEVELS = {1: "差", 2: "较差", 3: "一般", 4: "较好", 5: "很好"}


def test_a_cutoff_that_beats_half_is_accepted_and_one_that_does_not_is_refused():
    # An under-confident judge: every "yes" turn sits under 0.5, but p(yes) still ranks them first.
    p = [0.35, 0.4, 0.3, 0.45, 0.38, 0.42, 0.33, 0.36] + [0.05, 0.1, 0.2, 0.15, 0.08, 0.12, 0.18, 0.02]
    y = [True] * 8 + [False] * 8
    fit = fit_cutoff(QUESTION, p, y)
    assert fit.accepted and 0.2 < fit.cutoff < 0.35 and fit.auc_heldout == 1.0
    assert fit.balanced_accuracy_default_heldout == 0.5 and fit.balanced_accuracy_heldout == 1.0
    calibrated = [0.9, 0.8, 0.7, 0.95, 0.85, 0.75, 0.6, 0.99] + [0.1, 0.2, 0.3, 0.05, 0.15, 0.25, 0.4, 0.01]
    refused = fit_cutoff(QUESTION, calibrated, y)
    assert not refused.accepted and "does not beat 0.5" in refused.reason
    too_few = fit_cutoff(QUESTION, [0.3, 0.1, 0.2], [True, False, False])
    assert not too_few.accepted and "at least" in too_few.reason
    assert auc([0.2, 0.2], [True, False]) == 0.5


def _store_run(tmp_path: Path, p_for_turn) -> tuple[Path, list]:
    convos = [conversation_sample(Conversation(id=f"c{i}", turns=[
        {"role": "user", "content": f"第{i}单怎么还没到"}, {"role": "assistant", "content": f"回复A{i}"},
        {"role": "user", "content": "然后呢"}, {"role": "assistant", "content": f"回复B{i}"}])) for i in range(10)]
    rubric = Rubric.model_validate({"id": "promise", "name": "越权承诺", "criterion": "c", "score_descriptions": LEVELS,
                                    "scope": "conversation", "combine": {"rule": "min"}, "items": [
                                        {"id": "no_promise", "type": "must_not_mention", "turns": "assistant",
                                         "match": {"ask": QUESTION}}]})

    def reply(request):
        content = request[-1]["content"]
        cid = re.search(r"第(\d+)单", content).group(1)
        turn = int(re.search(r"# 问题（关于第 (\d+) 轮）", content).group(1))
        return yes_no_reply(p_for_turn(int(cid), turn))
    store_path = tmp_path / "runs.sqlite"
    store = RunStore(store_path)
    try:
        run_id = store.create_run(RunConfig(judge={"model": "scripted-1"}), convos,
                                  [(rubric.id, "rubric", rubric.version_tag, rubric.model_dump(mode="json"))])
        asyncio.run(execute(store, run_id, convos, [rubric], [], judge=ScriptedJudge(reply), progress=False))
        store.set_status(run_id, "complete")
    finally:
        store.close()
    return store_path, convos


def test_fit_thresholds_reads_a_runs_answers_and_proposes_a_cutoff_for_that_judge(tmp_path: Path):
    promised = lambda cid, turn: (cid + turn) % 2 == 0          # noqa: E731  the expert's answers
    store_path, convos = _store_run(tmp_path, lambda cid, turn: (0.3 + 0.01 * cid) if promised(cid, turn) else 0.1)
    labels = tmp_path / "turns.jsonl"
    labels.write_text("\n".join(json.dumps({"sample_id": c.id, "turn": t, "item": "no_promise",
                                            "answer": "yes" if promised(i, t) else "no"})
                                for i, c in enumerate(convos) for t in (2, 4)) + "\n", encoding="utf-8")
    fits, unasked, path = fit_thresholds(store_path, "promise", labels, proposal_dir=tmp_path / "proposed")
    assert unasked == 0 and len(fits) == 1 and fits[0].accepted and fits[0].auc_heldout == 1.0
    proposed = load_rubric(path)
    cutoff = proposed.check_items[0].match.cutoff
    assert cutoff.judge_model == "scripted-1" and 0.1 < cutoff.value < 0.3
    assert proposed.check_items[0].match.cutoff_for("scripted-1")[0] == cutoff.value
    assert proposed.check_items[0].match.cutoff_for("another-judge")[0] == 0.5      # tied to its judge


def test_fit_thresholds_refuses_when_half_already_separates_the_turns(tmp_path: Path):
    promised = lambda cid, turn: (cid + turn) % 2 == 0          # noqa: E731
    store_path, convos = _store_run(tmp_path, lambda cid, turn: 0.9 if promised(cid, turn) else 0.1)
    labels = tmp_path / "turns.csv"
    labels.write_text("sample_id,turn,question,answer\n" + "".join(
        f"{c.id},{t},{QUESTION},{'yes' if promised(i, t) else 'no'}\n" for i, c in enumerate(convos) for t in (2, 4)),
        encoding="utf-8")
    fits, unasked, path = fit_thresholds(store_path, "promise", labels, proposal_dir=tmp_path / "proposed")
    assert path is None and not fits[0].accepted


def test_turn_label_errors_name_file_line_and_field(tmp_path: Path):
    bad = tmp_path / "t.jsonl"
    bad.write_text('{"sample_id": "c1", "turn": 2, "item": "x", "answer": "yes"}\n'
                   '{"sample_id": "c1", "turn": 4, "item": "x", "answer": "maybe"}\n', encoding="utf-8")
    with pytest.raises(DatasetError, match=r"t.jsonl:2 \[answer\]"):
        read_turn_labels(bad)
