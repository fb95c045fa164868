"""Issue 43.3: `make demo` shows only rubrics that meet their trust bar on the judge it runs (the embedded one).

For each rubric of the Makefile's DEMO_RUBRICS, in the mode it runs on the embedded judge (DEMO_JUDGE_MODE, or
none: the mode measured best there), a rubric that asks the judge anything must have a measurement on that judge
in that mode (its measured: block) whose κ meets its trust bar — its own `trust: min_kappa`, else the bar the
shipped rubrics set. The demo shipped policy_compliance at κ 0.24 [0.00, 0.42] and closing, never measured."""
from __future__ import annotations

import re
from pathlib import Path

from rubriceval.rubric.loader import load_rubric, load_rubrics
from rubriceval.rubric.measured import best_measured
from rubriceval.scoring.judge_mode import with_judge_mode
from rubriceval.scoring.turn_questions import asks_judge

EMBEDDED = "local"


def make_variable(name: str) -> str:
    found = re.search(rf"^{name} \?=(.*)$", Path("Makefile").read_text(encoding="utf-8"), re.M)
    assert found, name
    return found.group(1).strip()


def shipped_bar() -> float:
    """The κ bar the shipped rubrics that declare one set (for a shipped rubric that declares none)."""
    bars = {r.trust.min_kappa for r in load_rubrics("rubrics") if r.trust is not None}
    assert len(bars) == 1, bars
    return bars.pop()


def test_every_demo_rubric_meets_its_trust_bar_on_the_embedded_judge():
    mode = make_variable("DEMO_JUDGE_MODE") or None
    ids = make_variable("DEMO_RUBRICS").split(",")
    assert ids
    below = []
    for rubric_id in ids:
        rubric = load_rubric(f"rubrics/{rubric_id}.yaml")
        (running,), _ = with_judge_mode([rubric], mode, judge_models=[EMBEDDED])
        if not asks_judge(running):
            continue                    # deterministic checks only: nothing a judge could get wrong
        bar = rubric.trust.min_kappa if rubric.trust is not None else shipped_bar()
        measured = best_measured(rubric.measured, EMBEDDED, {running.judge_mode})
        if measured is None or measured.kappa < bar:
            below.append(f"{rubric_id} in {running.judge_mode}: "
                         f"{measured.line() if measured else 'never measured on this judge'} (bar κ ≥ {bar:g})")
    assert not below, below


def test_readme_describes_the_demo_the_makefile_runs():
    readme = Path("README.md").read_text(encoding="utf-8")
    paragraph = readme[readme.index("The demo judges"):readme.index("## Using a real judge")]
    for rubric_id in make_variable("DEMO_RUBRICS").split(","):
        assert rubric_id in paragraph, rubric_id
    for left_out in ("policy_compliance", "closing"):            # and why they are not shown
        assert left_out in paragraph and "left out" in paragraph
