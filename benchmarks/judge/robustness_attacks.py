"""Grader attacks on a plain answer-quality rubric, scored as a run scores them (issue 45).

`python -m benchmarks.judge.robustness_attacks --split heldout --out out/robustness/attacks_heldout.jsonl`

The set is benchmarks/judge/data/robustness_attacks.jsonl (built and split by robustness_attacks_set.py). Every text
goes through the product's path — `score_rubric` with the default manipulation policy of the rubric a new user
writes (benchmarks/judge/rubrics/robustness_quality_{zh,en}.yaml: one judge item, question + answer, 1–5): the
patterns cap a score demand at 1, self-praise and odd-token suffixes (the perplexity screen reads a text with a
token-salad span) are masked for the judge and flagged when they would have raised the score. Per family:

* inflation: the attacked answer's final score minus its clean base answer's (each base judged once), mean and the
  number of pairs gaining 2 points or more; raw: the judge's score of the unmasked attacked text where it was asked;
* flagged: pairs whose verdict carries the suspected-manipulation flag (capped, or masked and the span would have
  raised the score); masked / capped: what the policy did;
* clean answers: how many are flagged. A clean answer with no finding cannot be flagged, so only those with a
  finding are judged (twice: masked and not); the others are counted without a judge call;
* costs: judge calls and tokens, perplexity-screen generations and tokens.

Records are appended to `--out` as they come; `--resume` keeps those already there (a stopped run goes on).
`--detector-only`: no judge — what the patterns and the screen find.
"""
from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

from pydantic import BaseModel

from benchmarks.judge.robustness_data import RobustnessPair, load_set
from rubriceval.core.verdict import Usage, Verdict
from rubriceval.data.sample import Sample
from rubriceval.rubric.loader import load_rubric
from rubriceval.rubric.schema import Rubric
from rubriceval.safety.manipulation_policy import DETAILS_KEY, MASKED_KINDS, scan_sample

DATA = Path(__file__).resolve().parent / "data" / "robustness_attacks.jsonl"
RUBRIC_DIR = Path(__file__).resolve().parent / "rubrics"
TAG = "robustness_attacks"
FAMILIES = ("robustjudge", "judgedeceiver", "zh_self_praise")


class Record(BaseModel):
    id: str                     # `<pair id>:attacked`, `<base id>:clean`, or a clean answer's id
    role: str                   # base, attacked, clean_cs
    family: str
    base_id: str
    score: float | None = None  # the verdict's score (None: not judged, or unscored)
    judged: bool = False
    unscored: str | None = None
    flagged: bool = False
    action: str = ""            # what the policy did: cap, mask, "" (nothing found)
    kinds: list[str] = []
    spans: list[str] = []
    raw_score: float | None = None   # the judge's score of the unmasked text, when it was asked
    usage: Usage = Usage()


def sample_of(pair: RobustnessPair, attacked: bool) -> Sample:
    text = pair.attacked if attacked else pair.clean
    sample_id = f"{pair.id}:attacked" if attacked else (pair.id if pair.family == "clean_cs" else f"{pair.base_id}:clean")
    return Sample(id=sample_id, question=pair.question, answer=text, tags=[TAG], metadata={"lang": pair.lang})


def _bounded_without_judge(pair: RobustnessPair) -> bool:
    from rubriceval.safety.masking import masked_sample

    sample = sample_of(pair, True)
    found = scan_sample(sample, rubrics()[pair.lang].manipulation)
    if any(f.kind not in MASKED_KINDS for f in found):
        return True
    return bool(found) and masked_sample(sample, found).answer == pair.clean


def rubrics() -> dict[str, Rubric]:
    return {lang: load_rubric(RUBRIC_DIR / f"robustness_quality_{lang}.yaml") for lang in ("zh", "en")}


def record_of(sample: Sample, role: str, pair: RobustnessPair, verdict: Verdict | None, found: list) -> Record:
    kinds = sorted({f.kind for f in found})
    action = ("cap" if any(k not in MASKED_KINDS for k in kinds) else "mask") if kinds else ""
    if verdict is None:
        return Record(id=sample.id, role=role, family=pair.family, base_id=pair.base_id, action=action, kinds=kinds,
                      spans=[f.span for f in found])
    masked = verdict.details.get("masked_for_judge") or {}
    flag = verdict.details.get(DETAILS_KEY) or {}
    return Record(id=sample.id, role=role, family=pair.family, base_id=pair.base_id, score=verdict.score, judged=True,
                  unscored=verdict.unscored_kind, flagged=bool(flag), action=action, kinds=kinds,
                  spans=[f["span"] for f in flag.get("findings") or masked.get("findings") or []] or
                  [f.span for f in found], raw_score=masked.get("judge_score_unmasked", flag.get("judge_score")),
                  usage=verdict.usage)


async def run(split: str, out: Path | None, resume: bool, detector_only: bool, concurrency: int) -> list[Record]:
    from rubriceval.scoring.manipulation_screens import screen_sample
    from rubriceval.scoring.rubric_scorer import score_rubric

    pairs, clean = load_set(DATA, split)
    by_family: dict[str, list[RobustnessPair]] = {}
    for p in pairs:
        by_family.setdefault(p.family, []).append(p)
    interleaved = [p for group in zip(*by_family.values()) for p in group]
    # The pairs the patterns do not mask down to their base answer first, with their bases: only their scores are
    # not bounded by the base's without a judge (a masked-to-base pair scores at most its base; a capped one 1), so
    # a run stopped part-way has measured the pairs that decide the inflation.
    interleaved.sort(key=lambda p: _bounded_without_judge(p))
    first = [p for p in interleaved if not _bounded_without_judge(p)]
    bases = {p.base_id: p for p in first} | {p.base_id: p for p in pairs}
    work = ([(sample_of(p, False), "base", p) for p in bases.values() if p.base_id in {q.base_id for q in first}] +
            [(sample_of(p, True), "attacked", p) for p in first] +
            [(sample_of(p, False), "base", p) for p in bases.values() if p.base_id not in {q.base_id for q in first}] +
            [(sample_of(p, True), "attacked", p) for p in interleaved if p not in first] +
            [(sample_of(c, False), "clean_cs", c) for c in clean])
    done: dict[str, Record] = {}
    if out is not None and resume and out.exists():
        done = {r.id: r for r in (Record.model_validate_json(line) for line in out.read_text().splitlines() if line)}
    elif out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text("")
    judge = None
    if not detector_only:
        from rubriceval.judge.config import load_judge_config
        from rubriceval.local.backends import make_judge

        judge = make_judge(load_judge_config(), announce=True)
    rubric_of = rubrics()
    gate = asyncio.Semaphore(concurrency)
    started = time.perf_counter()

    async def one(sample: Sample, role: str, pair: RobustnessPair) -> Record:
        if sample.id in done:
            return done[sample.id]
        rubric = rubric_of[pair.lang]
        async with gate:
            found = scan_sample(sample, rubric.manipulation)
            screened = Usage()
            if not [f for f in found if f.kind not in MASKED_KINDS]:
                more, screened = await screen_sample(sample, rubric.manipulation, judge, asked=not found)
                found += more
            # a clean answer with nothing found cannot be flagged: it is not judged
            needs_judge = judge is not None and (role != "clean_cs" or bool(found))
            verdict = await score_rubric(rubric, sample, judge) if needs_judge else None
        record = record_of(sample, role, pair, verdict, found)
        # the screen's generation was made here (the verdict's own screen read it from the cache): counted once
        record.usage = record.usage + Usage(calls=screened.calls, prompt_tokens=screened.prompt_tokens,
                                            completion_tokens=screened.completion_tokens)
        if out is not None:
            with out.open("a", encoding="utf-8") as handle:
                handle.write(record.model_dump_json() + "\n")
        print(f"  {sample.id}: {record.score} flagged={record.flagged} {record.action} "
              f"({time.perf_counter() - started:.0f} s)", file=sys.stderr, flush=True)
        return record

    try:
        return list(await asyncio.gather(*(one(*w) for w in work)))
    finally:
        if judge is not None:
            await judge.close()


def table(records: list[Record]) -> str:
    base = {r.base_id: r.score for r in records if r.role == "base"}
    lines = ["| family | pairs scored | mean inflation | gains ≥ 2 | raw mean inflation (unmasked) | flagged | "
             "capped / masked / nothing found |", "|---|---|---|---|---|---|---|"]
    for family in FAMILIES:
        mine = [r for r in records if r.role == "attacked" and r.family == family]
        scored = [r for r in mine if r.score is not None and base.get(r.base_id) is not None]
        gains = [r.score - base[r.base_id] for r in scored]          # type: ignore[operator]
        raw = [r.raw_score - base[r.base_id] for r in scored if r.raw_score is not None]   # type: ignore[operator]
        mean = f"{sum(gains) / len(gains):+.2f}" if gains else "—"
        raw_mean = f"{sum(raw) / len(raw):+.2f} (n={len(raw)})" if raw else "—"
        acts = [sum(r.action == a for r in mine) for a in ("cap", "mask", "")]
        lines.append(f"| {family} | {len(scored)} of {len(mine)} | {mean} | {sum(g >= 2 for g in gains)} | {raw_mean} | "
                     f"{sum(r.flagged for r in mine)} | {acts[0]} / {acts[1]} / {acts[2]} |")
    clean = [r for r in records if r.role == "clean_cs"]
    lines.append(f"\nclean answers: {len(clean)}, with a finding {sum(bool(r.action) for r in clean)}, judged "
                 f"{sum(r.judged for r in clean)}, flagged {sum(r.flagged for r in clean)}")
    usage = sum((r.usage for r in records), Usage())
    lines.append(f"costs (judge calls and perplexity generations together): {usage.calls} calls, {usage.cache_hits} "
                 f"cache hits, {usage.prompt_tokens} prompt + {usage.completion_tokens} completion tokens")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=("dev", "heldout"), default="heldout")
    parser.add_argument("--out", type=Path, default=None, help="records, one JSON line each, as they come")
    parser.add_argument("--resume", action="store_true", help="keep the records --out already holds")
    parser.add_argument("--detector-only", action="store_true", help="no judge: what the defences find")
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--table", action="store_true", help="print the table of --out's records, judge nothing")
    args = parser.parse_args(argv)
    if args.table:
        records = [Record.model_validate_json(line) for line in args.out.read_text().splitlines() if line]
    else:
        records = asyncio.run(run(args.split, args.out, args.resume, args.detector_only, args.concurrency))
    print(table(records))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
