"""Fit a conversation rubric's per-turn question cut-off on the DEV half of the labelled conversation set
(benchmarks/judge/data/conversations_zh.jsonl), for the judge that answers it.

The set labels every assistant turn 1–5 (`label.turn_scores`); a turn at level 4 or more is what the rubric's
per-turn checks must pass (share_at_least 4). So for the question of one check (`--item`, e.g. concrete_all of
情绪安抚（多轮）) the judge is asked about EVERY assistant turn of the dev dialogues — also the turns whose text already
matches, for enough yes and no turns — and the cut-off is fitted as `rubriceval calibrate --fit-thresholds` fits it
(rubriceval/trust/fit_cutoff.fit_cutoff: half the turns to fit, proposed only when it beats 0.5 on the other half).
The answers go through the judge cache, so a predicates run on the same dialogues afterwards reuses them.

Run: `nice -n 10 python -m benchmarks.judge.conversation_cutoffs --rubric emotional_soothing_multiturn
--item concrete_all` (prints the fit and the `cutoff:` block to write into the predicate).
"""
from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

from pydantic import BaseModel

from benchmarks.judge.conversations import DATA, RUBRIC_IDS, RUBRICS, load_set
from rubriceval.data.sample import Sample
from rubriceval.judge.config import JudgeConfig
from rubriceval.rubric.loader import load_rubrics
from rubriceval.rubric.predicate import FittedCutoff, Predicate
from rubriceval.trust.fit_cutoff import CutoffFit, fit_cutoff

GOOD_TURN = 4          # a turn at this level or above passes the rubric's per-turn checks


class TurnPoint(BaseModel):
    id: str
    turn: int
    level: int
    p_yes: float | None
    reason: str | None = None


def item_question(rubric_id: str, item_id: str, rubrics_dir: str | Path = RUBRICS) -> Predicate:
    rubric = load_rubrics(rubrics_dir, only=[rubric_id])[0]
    item = next((i for i in rubric.check_items if i.id == item_id), None)
    match = getattr(item, "match", None)
    if match is None or not match.ask:
        raise SystemExit(f"rubric '{rubric_id}' has no check '{item_id}' that asks a question")
    return match


def labelled_turns(samples: list[Sample]) -> list[tuple[Sample, int, int]]:
    """(dialogue, assistant turn, its label level) for every labelled assistant turn."""
    out = []
    for sample in samples:
        scores = sample.metadata["label"].get("turn_scores") or {}
        for number, turn in sample.conversation.numbered():
            if turn.role == "assistant" and str(number) in scores:
                out.append((sample, number, int(scores[str(number)])))
    return out


async def ask_every_turn(config: JudgeConfig, question: str, samples: list[Sample], lang: str = "zh",
                         progress: bool = True) -> list[TurnPoint]:
    """The judge's p(yes) to `question` about every labelled assistant turn, dialogue by dialogue in turn order (the
    prefix cache stays warm)."""
    from rubriceval.local.backends import make_judge
    from rubriceval.scoring.turn_questions import QuestionAsker

    judge = make_judge(config, announce=progress)
    points: list[TurnPoint] = []
    try:
        for sample in samples:
            asker = QuestionAsker(judge, sample.conversation, lang)
            for _, number, level in labelled_turns([sample]):
                await asker.answer(question, number)
                answer = asker.answers.answers[(question, number)]
                points.append(TurnPoint(id=sample.id, turn=number, level=level, p_yes=answer.p_yes,
                                        reason=answer.reason))
                if progress:
                    print(f"  {sample.id} turn {number}: level {level}, p(yes) {answer.p_yes}", file=sys.stderr)
    finally:
        await judge.close()
    return points


def fit(question: str, points: list[TurnPoint], judge_model: str, seed: int = 0
        ) -> tuple[CutoffFit, FittedCutoff | None]:
    answered = [p for p in points if p.p_yes is not None]
    result = fit_cutoff(question, [p.p_yes for p in answered], [p.level >= GOOD_TURN for p in answered], seed=seed)
    if not result.accepted:
        return result, None
    return result, FittedCutoff(value=result.cutoff, judge_model=judge_model, auc=result.auc_heldout,
                                n_train=result.n_train, n_heldout=result.n_heldout,
                                accuracy_heldout=round(result.balanced_accuracy_heldout, 4),
                                accuracy_default_heldout=round(result.balanced_accuracy_default_heldout, 4))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.judge.conversation_cutoffs", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rubric", choices=RUBRIC_IDS, required=True)
    parser.add_argument("--item", required=True, help="the check whose question is fitted")
    parser.add_argument("--split", default="dev", choices=("dev",), help="only the dev half is for fitting")
    parser.add_argument("--data", default=str(DATA))
    parser.add_argument("--rubrics", default=str(RUBRICS))
    parser.add_argument("--config", help="judge YAML (default: the embedded judge)")
    parser.add_argument("--out", default="out/conversation_cutoffs.json")
    args = parser.parse_args(argv)
    from rubriceval.judge.config import load_judge_config

    config = load_judge_config(args.config)
    predicate = item_question(args.rubric, args.item, args.rubrics)
    samples = load_set(args.data, args.split, args.rubric)
    points = asyncio.run(ask_every_turn(config, predicate.ask, samples))
    result, cutoff = fit(predicate.ask, points, config.model)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"command": " ".join(sys.argv), "judge": config.describe(), "fit": result.model_dump(),
                               "cutoff": cutoff.model_dump() if cutoff else None,
                               "points": [p.model_dump() for p in points]}, ensure_ascii=False, indent=2),
                   encoding="utf-8")
    print(result.line())
    if cutoff is not None:
        print("cutoff: " + json.dumps(cutoff.model_dump(), ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
