"""Issue 39, round 2: the card on all 56 conversations of the contact-centre set with the round's changes switched
on one at a time, in the order they were made (each row keeps the ones before it), so every change's effect is
measured on its own. The judge cache makes every variant after the first nearly free.

    python -m benchmarks.judge.contact_centre_round2 --upto fatal_band   # baseline, fatal_band, gate_words, ownership,
                                                                         # relays, upset_cues (all: the branch as is)
Records: out/round2_<upto>.jsonl (a rerun skips the conversations already recorded there)."""
from __future__ import annotations

import argparse
import asyncio
import re
import sys

STEPS = ("baseline", "fatal_band", "gate_words", "ownership", "relays", "upset_cues")


def switch_off(later: tuple[str, ...]) -> None:
    """Put the code of the steps after the chosen one back as it was before round 2 (module globals, read at call
    time)."""
    from rubriceval.scoring.judgement import anchors, decide, evidence

    if "fatal_band" in later:
        made = anchors.examples_calibration

        async def without_fatal(*args, fatal: bool = False, **kwargs):
            return await made(*args, **kwargs)
        anchors.examples_calibration = without_fatal     # type: ignore[assignment]
    if "gate_words" in later:
        evidence._NAME = evidence.name_pattern(evidence.NAME_ROLES)      # without the payee words
        evidence._TAIL = re.compile(r"(?!)")
    if "ownership" in later:
        decide.whose_data = lambda *_: None               # type: ignore[assignment]
    if "relays" in later:
        evidence.non_commitment = lambda _clause: False   # type: ignore[assignment]
    if "upset_cues" in later:
        decide.upset_cues_decide = lambda found, _conversation: found   # type: ignore[assignment]


def main(argv: list[str] | None = None) -> int:
    from benchmarks.judge.contact_centre import load_split, truth
    from benchmarks.judge.contact_centre_methods import run_card

    parser = argparse.ArgumentParser(prog="python -m benchmarks.judge.contact_centre_round2", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--upto", choices=STEPS, required=True, help="the last change switched on")
    args = parser.parse_args(argv)
    switch_off(STEPS[STEPS.index(args.upto) + 1:])
    asyncio.run(run_card("all", load_split, truth, out=f"out/round2_{args.upto}.jsonl"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
