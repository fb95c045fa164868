"""The robustness set (`data/robustness.jsonl`, built by benchmarks/pipeline/robustness_set.py) and the benign texts the
false-positive rates are measured on: the set's clean answers and its benign texts, the shipped SummEval summaries
and HaluEval answers, and the demo datasets' answers."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import BaseModel, Field

from rubriceval.common.errors import DatasetError
from rubriceval.data.conversation import Conversation, Turn
from rubriceval.data.conversation_io import conversation_sample
from rubriceval.data.sample import Sample

DATA = Path(__file__).resolve().parent / "data" / "robustness.jsonl"
DEMO_DIR = Path(__file__).resolve().parents[2] / "datasets"     # the repository's demo data (not in a wheel)
DEMO_ATTACKS = {"pts-inject"}  # the demo's own prompt-injection row: an attack, not benign text
TAG = "robustness"            # the benchmark rubrics apply to samples with this tag only
Split = Literal["dev", "heldout", "all"]
FAMILIES = ("score_request", "hidden_markup", "fake_completion", "self_assessment", "adversarial_suffix",
            "structured_cheat", "zh_native")


class RobustnessPair(BaseModel):
    """One line of the set: the same answer clean and attacked (`attacked` is None for a benign text)."""

    id: str
    base_id: str
    family: str
    lang: Literal["zh", "en"]
    split: Literal["dev", "heldout"]
    position: str = ""
    question: str = ""
    contexts: list[str] = Field(default_factory=list)
    ground_truth: str = ""
    clean: str
    attacked: str | None = None
    attack: str = ""

    def sample(self, attacked: bool, as_chat: bool = False) -> Sample:
        """The clean answer is one sample per base answer (`z07:clean`), judged once for all its pairs. `as_chat`:
        the same answer as the assistant turn of a two-turn chat (the question, then the answer), for rubrics that
        judge conversations turn by turn (--modes predicates)."""
        sample_id = f"{self.id}:attacked" if attacked else f"{self.base_id}:clean"
        answer = self.attacked if attacked else self.clean
        if as_chat:
            chat = Conversation(id=sample_id, tags=[TAG], reference_outcome=self.ground_truth,
                                metadata={"lang": self.lang},
                                turns=[Turn(role="user", content=self.question),
                                       Turn(role="assistant", content=answer or "", contexts=self.contexts)])
            return conversation_sample(chat)
        return Sample(id=sample_id, question=self.question, answer=answer, contexts=self.contexts,
                      ground_truth=self.ground_truth, tags=[TAG], metadata={"lang": self.lang})


class BenignText(BaseModel):
    corpus: str             # clean_answers, benign_set, summeval, halueval, demo
    id: str
    text: str


def load_set(path: str | Path | None = None, split: Split = "heldout") -> tuple[list[RobustnessPair],
                                                                              list[RobustnessPair]]:
    """(attacked pairs, benign texts) of the split."""
    path = Path(path) if path else DATA
    rows: list[RobustnessPair] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rows.append(RobustnessPair.model_validate(json.loads(line)))
        except (ValueError, TypeError) as exc:
            raise DatasetError(f"not a robustness pair: {str(exc).splitlines()[0]}", file=str(path),
                               line=number) from None
    rows = [r for r in rows if split == "all" or r.split == split]
    return [r for r in rows if r.attacked is not None], [r for r in rows if r.attacked is None]


def benign_texts(pairs: list[RobustnessPair], benign: list[RobustnessPair], *, halueval_n: int = 1000,
                 seed: int = 0) -> list[BenignText]:
    """Every benign text the false-positive rates count, by corpus (HaluEval: a seeded sample of `halueval_n`)."""
    from benchmarks.judge.datasets import load_halueval, load_summeval

    seen: dict[str, str] = {p.base_id: p.clean for p in pairs}
    out = [BenignText(corpus="clean_answers", id=k, text=v) for k, v in seen.items()]
    out += [BenignText(corpus="benign_set", id=b.id, text=b.clean) for b in benign]
    out += [BenignText(corpus="summeval", id=s.id, text=s.answer) for s in load_summeval(None)]
    halueval = load_halueval(None)
    keep = sorted(np.random.default_rng(seed).choice(len(halueval), size=min(halueval_n, len(halueval)),
                                                     replace=False))
    out += [BenignText(corpus="halueval", id=halueval[i].id, text=halueval[i].answer) for i in keep]
    out += [BenignText(corpus="demo", id=f"{path.name}:{i}", text=text)
            for path, i, text in _demo_answers()]
    return [t for t in out if t.text.strip()]


def _demo_answers() -> list[tuple[Path, str, str]]:
    """Answers (and assistant turns) of the demo datasets, when the repository's datasets/ is there."""
    found = []
    for path in sorted(DEMO_DIR.glob("demo_*.jsonl")):
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
            if not line.strip():
                continue
            row = json.loads(line)
            if row.get("id") in DEMO_ATTACKS:
                continue
            texts = [row.get("answer") or ""]
            texts += [t.get("content") or "" for t in row.get("turns") or row.get("messages") or []
                      if isinstance(t, dict) and t.get("role") == "assistant"]
            found += [(path, f"{i}.{j}", t) for j, t in enumerate(texts) if isinstance(t, str) and t.strip()]
    return found
