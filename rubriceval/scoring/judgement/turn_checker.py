"""A turn checker per evidence kind, fitted on labelled conversations (issue 39, rounds 4–6).

Three rounds showed that the embedded 1.5B judge's per-turn p(yes) ranks upset customers and soothing within one
writer's conversations, but where the classes meet moves from writer to writer, and for promises and other people's
data it barely ranks at all. A linear head over an in-process embedder's vector of each turn (USE-multilingual or
multilingual-e5-small, milliseconds a turn), fitted on the labelled turns of sets written by different hands, ranks
every kind on a writer it did not see (AUC 0.79–1.0 left one writer out, docs/benchmarks.md "Round 4" and "Round 5").
Since round 6 a checker may sum several heads, one per embedder — the two encoders and the embedded judge's own
hidden states (local/embedder.JudgeHiddenBackend) —: their errors differ, and the sum ranks a new writer's
conversations better than any one head ("Round 6").

For one item on one conversation the checker reads:

* the summed head logit of every turn of the party (no gate: a violation without drafted evidence is still scored);
* where the fit found that the judge adds to it (`judge_weight` ≠ 0), the judge's highest per-turn p(yes) in the
  kind's wording — the turns are asked as before; elsewhere the judge is not asked at all;

and stacks them into one probability of the kind's yes, `sigmoid(head_weight · max head logit + judge_weight ·
logit(max p(yes)) + intercept)`, read on the fitted cut-off and undecided band (`calibration`, score "checker").
Everything is fitted by `python -m benchmarks.judge.checker_fit --write` and written to `turn_checkers.yaml` with the
embedders and judge it was fitted for: a checker applies only with every one of its embedders installed (at its
version; the judge's hidden states: its verified model file) and, where it reads the judge, that judge. An item's
own calibration from its reviews still comes first (decide.rule_in_place)."""
from __future__ import annotations

import threading
from collections import OrderedDict
from functools import lru_cache
from pathlib import Path

import yaml
from pydantic import BaseModel, Field

from rubriceval.rubric.calibration import ItemCalibration
from rubriceval.stats.log_odds import logit, sigmoid

FILE = Path(__file__).with_name("turn_checkers.yaml")


class TurnHead(BaseModel):
    """A linear head over one in-process embedder's vector of a turn."""

    # the in-process embedder (local/embedder.py: "local" USE-multilingual, "local-e5" multilingual-e5-small,
    # "local-judge" the embedded judge's hidden states) and its identity at the fit: other weights give other vectors
    embedder_model: str = "local"
    embedder: str
    weights: list[float]                # one weight per embedding dimension
    bias: float

    def logits(self, vectors: list[list[float]]) -> list[float]:
        return [sum(w * x for w, x in zip(self.weights, v)) + self.bias for v in vectors]


class TurnChecker(BaseModel):
    """One evidence kind's fitted checker (see the module docstring)."""

    kind: str
    lang: str
    # a turn's head logit is the sum of these heads' logits (round 6: one per embedder, an ensemble whose errors
    # differ from writer to writer); each applies only with its own embedder installed at the fit's version
    heads: list[TurnHead] = Field(min_length=1)
    judge: str | None = None            # the judge whose p(yes) it reads, in `question`; None: it asks no judge
    question: str | None = None         # the per-turn wording the judge's p(yes) was read in
    head_weight: float
    judge_weight: float = 0.0
    intercept: float
    no_judge_logit: float = -6.0        # the judge feature where no turn was asked
    calibration: ItemCalibration        # the band on the stacked probability (score "checker")
    figures: dict[str, str] = Field(default_factory=dict)   # writer left out → figures on it (the fit's table)

    def installed(self) -> bool:
        """Every head's embedder is installed at the version it was fitted with."""
        return all(h.embedder == embedder_identity(h.embedder_model) for h in self.heads)

    @property
    def reads_judge(self) -> bool:
        return self.judge is not None and self.judge_weight != 0.0

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


@lru_cache(maxsize=4)
def embedder_identity(model: str = "local") -> str | None:
    """An in-process embedder's identity, or None when it is not installed (then its checkers do not apply)."""
    from rubriceval.local.embedder import backend_identity

    return backend_identity(model)


def turn_checker(kind: str, lang: str, judge_model: str | None, question: str | None) -> TurnChecker | None:
    """The shipped checker of this kind for this embedder and judge (the judge and wording it read, where it reads
    one), or None."""
    for entry in shipped():
        if (entry.kind, entry.lang) != (kind, lang) or not entry.installed():
            continue
        if entry.reads_judge and (entry.judge != judge_model or entry.question != question):
            continue
        return entry
    return None


async def head_logits(checker: TurnChecker, texts: list[str]) -> list[float]:
    """The checker's logit of each turn: the sum of its heads' (each embedder runs in a thread: they release the GIL
    inside numpy / the C engine / llama.cpp)."""
    import asyncio

    if not texts:
        return []
    total = [0.0] * len(texts)
    for head in checker.heads:
        vectors = await asyncio.to_thread(embed, head.embedder_model, texts)
        total = [t + x for t, x in zip(total, head.logits(vectors))]
    return [round(x, 4) for x in total]


_VECTORS: OrderedDict[tuple[str, str], list[float]] = OrderedDict()
_VECTORS_KEPT = 4096      # an agent turn is read by up to three kinds' checkers: embedded once (the judge's: ~0.4 s)
_VECTORS_LOCK = threading.Lock()


def embed(model: str, texts: list[str]) -> list[list[float]]:
    """The in-process embedder's vectors (e5's backend also counts tokens: not needed here), each text's computed
    once while it is among the last few thousand asked."""
    from rubriceval.local.embedder import local_backend

    with _VECTORS_LOCK:
        known = {t: _VECTORS[(model, t)] for t in texts if (model, t) in _VECTORS}
    missing = [t for t in dict.fromkeys(texts) if t not in known]
    if missing:
        vectors = local_backend(model).encode(missing)
        vectors = vectors[0] if isinstance(vectors, tuple) else vectors
        known.update(zip(missing, vectors))
        with _VECTORS_LOCK:
            for text in missing:
                _VECTORS[(model, text)] = known[text]
            while len(_VECTORS) > _VECTORS_KEPT:
                _VECTORS.popitem(last=False)
    return [known[t] for t in texts]


def write(entries: list[TurnChecker], path: Path = FILE) -> None:
    """Replace the shipped file (the fit script's --write); a header says where it comes from."""
    header = ("# Written by `python -m benchmarks.judge.checker_fit --write` (issue 39, rounds 4–6): one turn checker per\n"
              "# evidence kind, fitted on the labelled contact-centre sets. Do not edit by hand: refit. Read by\n"
              "# rubriceval/scoring/judgement/turn_checker.py.\n")
    rows = []
    for entry in entries:
        row = entry.model_dump(mode="json", exclude_none=True)
        for head in row["heads"]:
            head["weights"] = [round(w, 6) for w in head["weights"]]
        rows.append(row)
    path.write_text(header + yaml.safe_dump(rows, allow_unicode=True, sort_keys=False, width=200), encoding="utf-8")
    shipped.cache_clear()
