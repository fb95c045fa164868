"""SummEval and HaluEval per judge mode (`rubriceval benchmark-judge summeval|halueval --judge-mode … --few-shot …`).

* **Few-shot per level.** The benchmark rubrics ship without examples, so `--few-shot per_level|all` takes them
  from the benchmark's own labelled items that are *not* measured in this run (never an item the judge is scored
  on): SummEval one summary per expert-consensus level 1–5 (with the three experts' scores in its feedback);
  HaluEval one hallucinated answer (level 1, feedback quoting the spans the annotators marked) and one clean
  answer (level 5) — its labels are yes/no, so those are the only levels a label supports. The judge prompt
  shows an example's question and answer (not the SummEval article: examples carry no contexts in the prompt).
* **Fitted weights.** `checklist_fitted` fits the ordinal model on the checklist's p(yes) (saved with
  `--answers`, or asked now), 2-fold cross-fitted, stratified by label: every item is predicted by a model that
  never saw it. SummEval's label is the experts' consensus 1–5; HaluEval's is 1 (hallucinated) or 5 (not), so the
  model is a logistic one there, thresholded as the rubric's `threshold` reads it. The declared rule's score is
  kept beside each item (`rule_score`) and its agreement reported on the same items.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from rubriceval.common.errors import DatasetError
from rubriceval.data.sample import Sample
from rubriceval.rubric.schema import Example, FewShot, Rubric
from rubriceval.trust.fit_weights import cross_fitted_levels

if TYPE_CHECKING:
    from benchmarks.judge.results import BenchmarkItem, BenchmarkResult

EXAMPLE_MAX_CHARS = 700       # short examples: they are part of every prompt of the run
SPAN_CHARS = 120
HALLUCINATED_LEVEL, CLEAN_LEVEL = 1, 5


def _pick(candidates: list[Sample], rng: np.random.Generator) -> Sample | None:
    short = [s for s in candidates if len(s.answer) <= EXAMPLE_MAX_CHARS] or candidates
    return short[int(rng.integers(len(short)))] if short else None


def level_examples(kind: str, rubric: Rubric, pool: list[Sample], measured: set[str], seed: int) -> list[Example]:
    """One example per level the labels support, from `pool` minus the measured items (see the module doc)."""
    rng = np.random.default_rng(seed + 1)
    held_out = [s for s in pool if s.id not in measured]
    examples: list[Example] = []
    if kind == "summeval":
        for level in range(1, 6):
            chosen = _pick([s for s in held_out if s.metadata["human_median"] == level], rng)
            if chosen is None:
                continue
            scores = ", ".join(map(str, chosen.metadata["human_scores"]))
            examples.append(Example(question=chosen.question, answer=chosen.answer, score=level,
                                    feedback=f"Three experts scored this summary {scores} against its article: "
                                             f"{rubric.score_descriptions[level]}"))
        return examples
    bad = _pick([s for s in held_out if s.metadata["hallucinated"] and s.metadata["hallucination_spans"]], rng)
    good = _pick([s for s in held_out if not s.metadata["hallucinated"]], rng)
    if bad is not None:
        spans = "; ".join(f"“{span[:SPAN_CHARS]}”" for span in bad.metadata["hallucination_spans"][:3])
        examples.append(Example(question=bad.question, answer=bad.answer, score=HALLUCINATED_LEVEL,
                                feedback=f"Annotators marked hallucinated content: {spans}. "
                                         f"{rubric.score_descriptions[HALLUCINATED_LEVEL]}"))
    if good is not None:
        examples.append(Example(question=good.question, answer=good.answer, score=CLEAN_LEVEL,
                                feedback=f"Annotators found no hallucination. {rubric.score_descriptions[CLEAN_LEVEL]}"))
    return examples


def with_examples(rubric: Rubric, few_shot: FewShot, examples: list[Example]) -> Rubric:
    changed = Rubric.model_validate({**rubric.model_dump(), "few_shot": few_shot,
                                     "examples": [e.model_dump() for e in examples]})
    changed.source_file = rubric.source_file
    return changed


def fit_label(kind: str, item: BenchmarkItem) -> int:
    if kind == "summeval":
        return int(item.human)
    return HALLUCINATED_LEVEL if item.human == "yes" else CLEAN_LEVEL


def cross_fit_items(kind: str, rubric: Rubric, items: list[BenchmarkItem], seed: int) -> list[BenchmarkItem]:
    """Each item's score from a model fitted on the other fold (items without p(yes) stay unscored)."""
    questions = [q.id for item in rubric.checklist_items for q in item.questions]
    index = [i for i, item in enumerate(items) if item.p_yes and item.judge_score is not None]
    out = [item.model_copy(update={"rule_score": item.judge_score}) for item in items]
    if len(index) < 4:
        raise DatasetError(f"only {len(index)} items have checklist answers: too few to cross-fit weights")
    levels = cross_fitted_levels([items[i].p_yes for i in index], [fit_label(kind, items[i]) for i in index],
                                 questions, seed=seed)
    for i, level in zip(index, levels):
        out[i] = out[i].model_copy(update={"judge_score": float(level)})
    return out


def saved_answers(path: str | Path, kind: str, samples: list[Sample]) -> BenchmarkResult:
    """A saved checklist result of this benchmark covering exactly these items, in this order."""
    from benchmarks.judge.results import BenchmarkResult

    saved = BenchmarkResult.model_validate_json(Path(path).read_text(encoding="utf-8"))
    if saved.kind != kind:
        raise DatasetError(f"a {saved.kind} result cannot serve {kind}", file=str(path), field="kind")
    if saved.judge_mode != "checklist":
        raise DatasetError(f"a {saved.judge_mode or 'holistic'} result has no checklist answers", file=str(path),
                           field="judge_mode")
    if [item.id for item in saved.items] != [s.id for s in samples]:
        raise DatasetError("the saved items are not this run's items (other data, --n or seed)", file=str(path))
    return saved
