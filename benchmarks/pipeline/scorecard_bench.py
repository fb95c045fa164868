"""Issue 25 measurements of the e-commerce scorecard (scorecards/ecommerce_qa_zh.yaml):

  hand   the 10 conversations scored by hand first (datasets/labelled/scorecard_hand_zh.jsonl, committed before any
         run) against the tool's totals, with the embedded local judge (or RUBRICEVAL_JUDGE_* if set). Resumable:
         run it again to finish an interrupted run (the store is out/scorecard_bench.sqlite).
  calls  judge calls and prompt tokens per conversation on the demo conversations: the scorecard vs the same items
         as separate rubrics (one rubric per item: checks-only rubrics need no judge; each question as a checklist
         rubric, or as a holistic 1–5 rubric), from the dry run's exact prompts (judge-independent) — and, with
         --stub, a run against the loopback stub judge to count the calls actually made.

  nice .venv/bin/python benchmarks/pipeline/scorecard_bench.py hand
  .venv/bin/python benchmarks/pipeline/scorecard_bench.py calls [--stub]
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CARD = ROOT / "scorecards" / "ecommerce_qa_zh.yaml"
CONVERSATIONS = ROOT / "datasets" / "demo_conversations_zh.jsonl"
LABELS = ROOT / "datasets" / "labelled" / "scorecard_hand_zh.jsonl"
STORE = ROOT / "out" / "scorecard_bench.sqlite"
RUN = "scorecard-hand10"          # `hand --name …` for another run (e.g. a new scorecard version)


def _labelled_subset(folder: Path) -> Path:
    wanted = [json.loads(line)["sample_id"] for line in LABELS.read_text(encoding="utf-8").splitlines() if line]
    rows = {json.loads(line)["id"]: line for line in CONVERSATIONS.read_text(encoding="utf-8").splitlines() if line}
    path = folder / "hand10.jsonl"
    path.write_text("\n".join(rows[i] for i in wanted) + "\n", encoding="utf-8")
    return path


def hand(run: str = RUN) -> int:
    from rubriceval.cli import main
    from rubriceval.store.runs import RunStore
    from rubriceval.store.scorecards import ScorecardStore

    STORE.parent.mkdir(parents=True, exist_ok=True)
    store = RunStore(STORE)
    if any(r.name == run for r in store.list_runs()):
        if store.run_info(run).status != "complete":
            main(["run", "--resume", run, "--store", str(STORE), "--quiet"])
    else:
        with tempfile.TemporaryDirectory() as tmp:
            data = _labelled_subset(Path(tmp))
            main(["run", str(data), "--scorecards", str(CARD), "--store", str(STORE), "--name", run, "--quiet"])
    verdicts = {v.sample_id: v for v in ScorecardStore(store).verdicts(run)}
    print(f"run {run}, scorecard {ScorecardStore(store).cards(run)[0].version_tag}")
    labels = [json.loads(line) for line in LABELS.read_text(encoding="utf-8").splitlines() if line]
    print(f"judge: {store.run_info(run).config.judge.get('model')}")
    print(f"{'conversation':<28}{'hand':>6}{'tool':>6}   items that differ (hand | tool)")
    exact = within5 = fatal_same = 0
    diffs = []
    for label in labels:
        v = verdicts.get(label["sample_id"])
        tool = None if v is None else v.totals.total
        hand_points = {k: p for k, p in label["points"].items()}
        tool_points = {} if v is None else {p.item: p.points for p in v.totals.items if p.points}
        differ = sorted(set(hand_points) ^ set(tool_points) | {k for k in hand_points if
                                                                tool_points.get(k) != hand_points[k]})
        fatal_same += v is not None and sorted(label["fatal"]) == sorted(v.totals.fatal)
        if tool is not None:
            exact += tool == label["total"]
            within5 += abs(tool - label["total"]) <= 5
            diffs.append(abs(tool - label["total"]))
        detail = "; ".join(f"{k} {hand_points.get(k, 0):+d}|{tool_points.get(k, 0):+d}" for k in differ)
        fatal_note = "" if v is None or sorted(label["fatal"]) == sorted(v.totals.fatal) else \
            f" fatal {label['fatal']}|{v.totals.fatal}"
        print(f"{label['sample_id']:<28}{label['total']:>6}{str(tool):>6}   {detail}{fatal_note}")
    n = len(labels)
    mae = sum(diffs) / len(diffs) if diffs else float("nan")
    print(f"exact total {exact}/{n} · within 5 points {within5}/{n} · mean |hand − tool| {mae:.1f} · "
          f"same fatal items {fatal_same}/{n}")
    return 0


def _items_as_rubrics(card, folder: Path, mode: str) -> Path:
    """Each scorecard item as a rubric of its own: a check as a checks-only rubric (no judge), a question as a
    checklist rubric with that one question, or (mode holistic) a 1–5 judge rubric with the question as criterion."""
    import yaml

    folder.mkdir(parents=True, exist_ok=True)
    levels = {1: "完全没有做到", 2: "大部分没有做到", 3: "部分做到", 4: "基本做到", 5: "完全做到"}
    for item in card.items:
        rubric = {"id": f"item_{item.id}", "name": item.label, "language": card.language, "scope": "conversation",
                  "criterion": item.question or item.label, "score_descriptions": levels}
        when = item.applies_when          # what a rubric's applies_to can say of it (not has_contexts)
        if when is not None and (when.tags or when.intents or (when.pattern and when.roles == ["user"])):
            rubric["applies_to"] = {k: v for k, v in (("tags", when.tags), ("intents", when.intents),
                                                      ("question_pattern", when.pattern)) if v}
        if item.kind == "check":
            rubric["items"] = [{"id": item.id, **item.check}]
            rubric["combine"] = {"rule": "min"}
        elif mode == "checklist":
            rubric["judge_mode"] = "checklist"
            rubric["items"] = [{"id": "checklist", "type": "checklist",
                                "questions": [{"id": "q", "ask": item.question}],
                                "levels": {5: "q", 1: "otherwise"}}]
        else:
            rubric["items"] = [{"id": "judge", "type": "judge"}]
        (folder / f"{rubric['id']}.yaml").write_text(yaml.safe_dump(rubric, allow_unicode=True), encoding="utf-8")
    return folder


def calls(stub: bool) -> int:
    from rubriceval.data.io import read_dataset
    from rubriceval.judge.config import JudgeConfig
    from rubriceval.rubric.loader import load_rubrics
    from rubriceval.run.planning import plan_cost
    from rubriceval.scorecard.loader import load_scorecard

    card = load_scorecard(CARD)
    samples = list(read_dataset(CONVERSATIONS))
    config = JudgeConfig(base_url="http://127.0.0.1:9/v1", model="planning-only", cache=False)
    n = sum(1 for s in samples if s.conversation is not None)
    rows = [("scorecard (one card)", plan_cost(samples, [], [], config, scorecards=[card]))]
    with tempfile.TemporaryDirectory() as tmp:
        for mode in ("checklist", "holistic"):
            rubrics = load_rubrics(_items_as_rubrics(card, Path(tmp) / mode, mode))
            rows.append((f"separate rubrics ({mode})", plan_cost(samples, rubrics, [], config)))
        print(f"{n} demo conversations (datasets/demo_conversations_zh.jsonl); dry-run figures (exact prompts, "
              "token estimate of rubriceval/judge/tokens.py)")
        print(f"{'':<30}{'calls/conv':>11}{'prompt tok/conv':>16}{'completion tok/conv':>20}")
        for label, plan in rows:
            print(f"{label:<30}{plan.calls / n:>11.2f}{plan.prompt_tokens / n:>16.0f}{plan.completion_tokens / n:>20.1f}")
        if stub:
            _stub_counts(card, samples, Path(tmp))
    return 0


def _stub_counts(card, samples, tmp: Path) -> None:
    """The same comparison run against the loopback stub judge: calls actually made (no cache)."""
    from rubriceval.cli import main
    from rubriceval.testing.stub_server import StubServer

    n = sum(1 for s in samples if s.conversation is not None)
    with StubServer() as stub:
        config = tmp / "stub.yaml"
        config.write_text(f"judge: {{base_url: '{stub.base_url}', model: stub, cache: false}}\n")
        runs = [("scorecard (one card)", ["--scorecards", str(CARD)]),
                ("separate rubrics (checklist)", ["--rubrics", str(tmp / "checklist")]),
                ("separate rubrics (holistic)", ["--rubrics", str(tmp / "holistic")])]
        print("stub judge (rubriceval.testing.StubServer), calls made per conversation:")
        for label, args in runs:
            before = stub.stats.calls["chat"]
            main(["run", str(CONVERSATIONS), *args, "--config", str(config), "--store", str(tmp / "stub.sqlite"),
                  "--quiet"])
            print(f"  {label:<30}{(stub.stats.calls['chat'] - before) / n:.2f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", choices=["hand", "calls"])
    parser.add_argument("--stub", action="store_true")
    parser.add_argument("--name", default=RUN, help="the run's name in out/scorecard_bench.sqlite (hand)")
    args = parser.parse_args()
    sys.exit(hand(args.name) if args.what == "hand" else calls(args.stub))
