"""The labelled conversation set (`benchmarks/judge/data/conversations_zh.jsonl`, issue 28) as a judge
benchmark: per judge mode, how far the shipped conversation rubrics agree with labels fixed from their own level
descriptions, whether the evidence names the right turn, and what it costs.

Modes (each on the same held-out dialogues, with the same judge):
  holistic     the rubric's judge item: one 1–5 judgment of the transcript (身份核验) or one per assistant turn
               (情绪安抚（多轮）, aggregated by its turn_aggregate)
  checklist    yes/no questions about the whole transcript + the declared level rule
  predicates   the check items alone — entities, regex and per-turn yes/no questions — leveled by predicate_levels

Reported per rubric and mode: quadratic-weighted κ with its 95 % bootstrap CI, turn-localisation accuracy (of the
dialogues labelled with a violation turn, the share whose verdict names that turn first: the earliest failing
check's turn in predicates mode, the first turn the feedback cites or the first per-turn score under the threshold
in holistic mode; a checklist answers about the whole transcript and names no turn), and judge calls, prompt
tokens (sent, and processed = sent − reused from the server's prefix cache) and completion tokens per dialogue;
a call the judge cache answered (a check question an earlier mode asked about the same turn) is counted apart, with
no tokens.

Resumable: every verdict is appended to `<out>.partial.jsonl` as it comes, keyed by mode, dialogue, rubric version
and judge; `--resume` keeps those rows (and the judge cache answers repeated calls for free).

Run: `nice rubriceval benchmark-judge conversations --out out/bench_conversations.json --resume`
(or `python -m benchmarks.judge.conversations --out …`). `--split dev|heldout|all` picks the half (default:
the held-out one, which is reported; dev is for looking at and fitting), `--rubric ID` one rubric's dialogues, and
`--data` another labelled set (e.g. `conversations_zh_soothing_v2.jsonl`, a fresh held-out set, `--split all`).
Per-turn question cut-offs are fitted on the dev half by benchmarks/judge/conversation_cutoffs.py.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import time
from itertools import zip_longest
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from benchmarks.judge.conversations_cli import DATA, MODES, RUBRIC_IDS, RUBRICS, SPLITS, add_args  # noqa: F401
from rubriceval.core.verdict import Usage, Verdict
from rubriceval.data.io import read_dataset
from rubriceval.data.sample import Sample
from rubriceval.judge.config import JudgeConfig
from rubriceval.rubric.applies import applies
from rubriceval.rubric.loader import load_rubrics
from rubriceval.rubric.schema import JudgeMode, Rubric
from rubriceval.scoring.judge_mode import with_judge_mode
from rubriceval.stats.agreement import AgreementReport, agreement_report

_TURN_CITED = re.compile(r"第\s*(\d+)\s*轮|\[(\d+)\]|turn\s+(\d+)", re.IGNORECASE)


class ConversationRow(BaseModel):
    mode: str
    id: str
    rubric: str
    version: str
    judge: str
    label: int
    violation_turn: int | None = None
    score: float | None = None
    unscored_kind: str | None = None
    unscored_reason: str | None = None
    named_turn: int | None = None       # the turn the verdict names first (see named_turn)
    usage: Usage = Field(default_factory=Usage)
    seconds: float = 0.0
    turn_questions: list[dict[str, Any]] = Field(default_factory=list)    # (turn, question, p_yes) asked


class ModeSummary(BaseModel):
    rubric: str
    mode: str
    n: int
    n_scored: int
    kappa: float | None
    kappa_ci: tuple[float | None, float | None]
    agreement: AgreementReport | None = None
    localised: int = 0                  # dialogues with a violation turn whose verdict named it
    localisable: int = 0                # dialogues with a violation turn (scored)
    calls_per_dialogue: float = 0.0
    cache_hits_per_dialogue: float = 0.0    # calls answered by the judge cache (a question another mode asked)
    prompt_tokens_per_dialogue: float = 0.0
    processed_prompt_tokens_per_dialogue: float = 0.0
    completion_tokens_per_dialogue: float = 0.0
    seconds_per_dialogue: float = 0.0

    @property
    def localisation(self) -> float | None:
        return self.localised / self.localisable if self.localisable else None


def load_set(path: str | Path = DATA, split: str | None = "heldout", rubric: str | None = None) -> list[Sample]:
    """The labelled dialogues of one split (None or "all": every one), optionally of one rubric."""
    samples = list(read_dataset(str(path)))
    return [s for s in samples if (split in (None, "all") or s.metadata.get("split") == split)
            and (rubric is None or s.metadata["label"]["rubric"] == rubric)]


def interleaved(samples: list[Sample]) -> list[Sample]:
    """The dialogues in an order whose every prefix is balanced: rubrics alternate, and within a rubric the label
    levels take turns (so a run that cannot finish still measures every level of both rubrics)."""
    per_rubric: dict[str, list[Sample]] = {}
    for sample in samples:
        per_rubric.setdefault(sample.metadata["label"]["rubric"], []).append(sample)
    orders = []
    for group in per_rubric.values():
        by_level: dict[int, list[Sample]] = {}
        for sample in group:
            by_level.setdefault(sample.metadata["label"]["score"], []).append(sample)
        queues = [by_level[level] for level in sorted(by_level, reverse=True)]
        order = []
        while any(queues):
            order += [queue.pop(0) for queue in queues if queue]
        orders.append(order)
    return [s for round_ in zip_longest(*orders) for s in round_ if s is not None]


def named_turn(verdict: Verdict, rubric: Rubric) -> int | None:
    """The turn a verdict names first as where the rubric is broken (None: it names none)."""
    if rubric.judge_mode == "predicates":
        check_ids = {item.id for item in rubric.check_items}
        turns = [ev.turn for ev in verdict.evidence if ev.item in check_ids and ev.passed is False and ev.turn]
        return min(turns) if turns else None
    if rubric.judge_mode != "holistic":
        return None
    per_turn = [ev for ev in verdict.evidence if ev.turn and ev.score is not None]
    if per_turn:                         # scope assistant_turn: the first turn scored under the threshold
        low = [ev.turn for ev in per_turn if ev.score < rubric.threshold]
        return min(low) if low else None
    for match in _TURN_CITED.finditer(verdict.feedback or ""):
        return int(next(g for g in match.groups() if g))
    return None


def _row(mode: str, sample: Sample, rubric: Rubric, judge: str, verdict: Verdict, seconds: float
         ) -> ConversationRow:
    label = sample.metadata["label"]
    return ConversationRow(mode=mode, id=sample.id, rubric=rubric.id, version=rubric.version_tag, judge=judge,
                           label=label["score"], violation_turn=label.get("violation_turn"), score=verdict.score,
                           unscored_kind=verdict.unscored_kind, unscored_reason=verdict.unscored_reason,
                           named_turn=named_turn(verdict, rubric) if verdict.score is not None else None,
                           usage=verdict.usage, seconds=round(seconds, 2),
                           turn_questions=list((verdict.details or {}).get("turn_questions", [])))


def rubrics_in_mode(mode: JudgeMode, judge_model: str, rubrics_dir: str | Path = RUBRICS,
                    wanted: tuple[str, ...] = RUBRIC_IDS) -> dict[str, Rubric]:
    rubrics = load_rubrics(rubrics_dir, only=list(wanted))
    moded, notes = with_judge_mode(rubrics, mode, judge_models=[judge_model])
    for rubric in moded:
        if rubric.judge_mode != mode:
            raise SystemExit(f"rubric '{rubric.id}' cannot run in mode {mode}: {notes}")
    return {r.id: r for r in moded}


def _done(partial: Path | None) -> dict[tuple[str, str, str, str], ConversationRow]:
    if partial is None or not partial.exists():
        return {}
    rows = [ConversationRow.model_validate_json(line) for line in partial.read_text(encoding="utf-8").splitlines()
            if line.strip()]
    return {(r.mode, r.id, r.version, r.judge): r for r in rows}


async def run_modes(config: JudgeConfig, modes: list[JudgeMode], *, data: str | Path = DATA,
                    rubrics_dir: str | Path = RUBRICS, partial: Path | None = None, resume: bool = False,
                    progress: bool = True, split: str = "heldout", rubric_id: str | None = None
                    ) -> list[ConversationRow]:
    """Judge every dialogue of the split in each mode, one at a time (the embedded judge's prefix cache stays warm
    within a dialogue), appending each row to `partial` as it comes."""
    from rubriceval.local.backends import make_judge
    from rubriceval.run.runner import judge_rubric

    samples = interleaved(load_set(data, split, rubric_id))
    done = _done(partial) if resume else {}
    if partial is not None and not resume:
        partial.unlink(missing_ok=True)
    judge = make_judge(config, announce=progress)
    rows: list[ConversationRow] = []
    wanted = (rubric_id,) if rubric_id else RUBRIC_IDS
    by_mode = {mode: rubrics_in_mode(mode, config.model, rubrics_dir, wanted) for mode in modes}
    try:
        # Dialogue by dialogue, every mode on each: a run stopped part-way leaves the same dialogues in every mode
        # (and the modes after the first reuse its cached answers to the questions they share).
        for sample in samples:
            for mode in modes:
                rubric = by_mode[mode][sample.metadata["label"]["rubric"]]
                if not applies(rubric, sample):
                    raise SystemExit(f"rubric '{rubric.id}' does not apply to dialogue {sample.id}")
                key = (mode, sample.id, rubric.version_tag, config.model)
                if key in done:
                    rows.append(done[key])
                    continue
                started = time.perf_counter()
                verdict = await judge_rubric(rubric, sample, judge)
                row = _row(mode, sample, rubric, config.model, verdict, time.perf_counter() - started)
                rows.append(row)
                if partial is not None:
                    partial.parent.mkdir(parents=True, exist_ok=True)
                    with partial.open("a", encoding="utf-8") as out:
                        out.write(row.model_dump_json() + "\n")
                if progress:
                    print(f"  {mode} {sample.id}: label {row.label} → {row.score} (turn {row.violation_turn} → "
                          f"{row.named_turn}; {row.usage.calls} calls, {row.seconds:.0f} s)", file=sys.stderr)
    finally:
        await judge.close()
    return rows


def summarise(rows: list[ConversationRow], n_boot: int = 1000, seed: int = 0) -> list[ModeSummary]:
    out = []
    for rubric in dict.fromkeys(r.rubric for r in rows):
        for mode in dict.fromkeys(r.mode for r in rows):
            mine = [r for r in rows if r.rubric == rubric and r.mode == mode]
            if not mine:
                continue
            scored = [r for r in mine if r.score is not None]
            report = agreement_report([int(r.score) for r in scored], [r.label for r in scored],
                                      ids=[r.id for r in scored], name=f"{rubric} {mode}", n_boot=n_boot, seed=seed,
                                      n_unscored=len(mine) - len(scored)) if len(scored) >= 2 else None
            kappa = report.kappa_quadratic if report is not None else None
            localisable = [r for r in scored if r.violation_turn is not None]
            n = len(mine)
            usage = sum((r.usage for r in mine), Usage())
            out.append(ModeSummary(
                rubric=rubric, mode=mode, n=n, n_scored=len(scored),
                kappa=kappa.value if kappa is not None else None,
                kappa_ci=(kappa.ci_low, kappa.ci_high) if kappa is not None else (None, None), agreement=report,
                localised=sum(1 for r in localisable if r.named_turn == r.violation_turn),
                localisable=len(localisable) if mode != "checklist" else 0,
                calls_per_dialogue=usage.calls / n, cache_hits_per_dialogue=usage.cache_hits / n,
                prompt_tokens_per_dialogue=usage.prompt_tokens / n,
                processed_prompt_tokens_per_dialogue=(usage.prompt_tokens - usage.cached_prompt_tokens) / n,
                completion_tokens_per_dialogue=usage.completion_tokens / n,
                seconds_per_dialogue=sum(r.seconds for r in mine) / n))
    return out


def _f(value: float | None, digits: int = 2) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def table(summaries: list[ModeSummary]) -> str:
    lines = ["| rubric | mode | n (scored) | κ [95 % CI] | turn named | calls (+ cache hits) / dialogue | prompt tokens sent "
             "(processed) / dialogue | completion tokens / dialogue | s / dialogue |",
             "|---|---|---|---|---|---|---|---|---|"]
    for s in summaries:
        where = (f"{s.localised}/{s.localisable} ({s.localisation:.0%})" if s.localisable else "n/a")
        lines.append(f"| {s.rubric} | {s.mode} | {s.n} ({s.n_scored}) | {_f(s.kappa)} [{_f(s.kappa_ci[0])}, "
                     f"{_f(s.kappa_ci[1])}] | {where} | {s.calls_per_dialogue:.1f} (+{s.cache_hits_per_dialogue:.1f}) | "
                     f"{s.prompt_tokens_per_dialogue:.0f} ({s.processed_prompt_tokens_per_dialogue:.0f}) | "
                     f"{s.completion_tokens_per_dialogue:.0f} | {s.seconds_per_dialogue:.0f} |")
    return "\n".join(lines)


def run_from_args(args: argparse.Namespace, config: JudgeConfig, command: str) -> int:
    """Run and report from either entry point's options. Modes: --modes, else --judge-mode (the CLI's one-mode
    spelling), else every mode."""
    modes = [m.strip() for m in (args.modes or getattr(args, "judge_mode", None) or ",".join(MODES)).split(",")
             if m.strip()]
    unknown = [m for m in modes if m not in MODES]
    if unknown:
        raise SystemExit(f"unknown mode(s) {', '.join(unknown)} (use {', '.join(MODES)})")
    out = Path(args.out or "out/bench_conversations.json")
    partial = Path(f"{out}.partial.jsonl")
    rows = asyncio.run(run_modes(config, modes, data=args.data or DATA, rubrics_dir=args.rubrics or RUBRICS,
                                 partial=partial, resume=args.resume, split=args.split or "heldout",
                                 rubric_id=args.rubric))
    summaries = summarise(rows)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"command": command, "judge": config.describe(),
                               "summaries": [s.model_dump(mode="json") for s in summaries],
                               "rows": [r.model_dump(mode="json") for r in rows]}, ensure_ascii=False, indent=2),
                   encoding="utf-8")
    print(table(summaries))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.judge.conversations", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_args(parser)
    args = parser.parse_args(argv)
    from rubriceval.judge.config import load_judge_config

    return run_from_args(args, load_judge_config(args.config), " ".join(sys.argv))


if __name__ == "__main__":
    raise SystemExit(main())
