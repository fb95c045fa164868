"""Public human-labelled benchmarks as rubriceval Samples, to measure how well a judge agrees with people.

- SummEval consistency (100 CNN/DM summaries, three expert scores 1–5 each; via SummaC, Apache-2.0 / MIT):
  the document is the context and the summary is the answer, so a faithfulness-style 1–5 rubric applies as is.
- HaluEval general (4,507 ChatGPT answers with a human yes/no hallucination label; MIT): no context is given —
  the judge must rely on its own knowledge — so it measures a binary "does this answer hallucinate?" judge.

Both are in the repository's `benchmarks/judge/data/` (sources and licences in its README.md); every loader also
takes another copy: a file, or a folder holding one of the known file names.
"""
from __future__ import annotations

import gzip
import json
import statistics
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from rubriceval.common.errors import DatasetError
from rubriceval.data.sample import Sample
from rubriceval.data.stream import jsonl_record

SUMMEVAL_INSTRUCTION = "Summarize the document."
SUMMEVAL_SCALE = (1, 5)
HALUEVAL_LABELS = ("yes", "no")   # HaluEval's own wording: "does the response contain a hallucination?"


DATA_DIR = Path(__file__).resolve().parent / "data"
# File names looked for, in order, in the packaged data folder or a folder given by the user (HaluEval's own
# name for the file is general_data.json).
SUMMEVAL_FILE_NAMES = ("summeval.json", "summeval.json.gz")
HALUEVAL_FILE_NAMES = ("halueval_general.json.gz", "halueval_general.json", "general_data.json")


def benchmark_file(path: str | Path | None, names: Sequence[str]) -> Path:
    """The file to read: `path` itself, the first of `names` inside folder `path`, or the packaged copy."""
    folder = DATA_DIR if path is None else Path(path)
    if not folder.is_dir():
        return folder                      # a file, or a missing path that _read_text reports
    for name in names:
        if (folder / name).is_file():
            return folder / name
    raise DatasetError("no benchmark file in this folder", file=str(folder),
                       hint=f"expected one of: {', '.join(names)}")


def _read_text(path: Path) -> str:
    """The file's text; a .gz file is decompressed."""
    if not path.exists():
        raise DatasetError("file not found", file=str(path))
    if path.suffix != ".gz":
        return path.read_text(encoding="utf-8")
    try:
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            return handle.read()
    except (OSError, EOFError, zlib.error) as exc:
        raise DatasetError(f"cannot decompress: {exc}", file=str(path)) from None


def _required_text(record: dict[str, Any], key: str, *, path: Path, line: int | None, where: str) -> str:
    value = record.get(key)
    if not isinstance(value, str) or not value.strip():
        raise DatasetError(f"'{key}' must be a non-empty string, got {value!r}", file=str(path), line=line,
                           field=f"{where}.{key}" if where else key)
    return value


# --------------------------------------------------------------------------------------------------------------
# SummEval consistency
# --------------------------------------------------------------------------------------------------------------

def load_summeval(path: str | Path | None = None) -> list[Sample]:
    """SummEval summaries with their expert consistency scores, in file order (`path`: a file or a folder; default:
    the packaged copy).

    metadata: human_scores (the three experts, 1–5), human_mean (float), human_median (int, the consensus to
    compare an integer judge score against), summac_label (1 = consistent by SummaC's majority rule),
    model_name, cnndm_id.
    """
    path = benchmark_file(path, SUMMEVAL_FILE_NAMES)
    try:
        data = json.loads(_read_text(path))
    except json.JSONDecodeError as exc:
        raise DatasetError(f"invalid JSON: {exc.msg}", file=str(path), line=exc.lineno) from None
    if not isinstance(data, dict) or not data:
        raise DatasetError("expected a non-empty JSON object keyed by summary id", file=str(path))
    samples = []
    for key, record in data.items():
        if not isinstance(record, dict):
            raise DatasetError("each entry must be an object", file=str(path), field=key)
        document = _required_text(record, "document", path=path, line=None, where=key)
        summary = _required_text(record, "claim", path=path, line=None, where=key)
        scores = record.get("annotations")
        low, high = SUMMEVAL_SCALE
        if (not isinstance(scores, list) or not scores
                or not all(isinstance(s, int) and not isinstance(s, bool) and low <= s <= high for s in scores)):
            raise DatasetError(f"'annotations' must be a non-empty list of integers {low}..{high}, got {scores!r}",
                               file=str(path), field=f"{key}.annotations")
        samples.append(Sample(
            id=str(key),
            question=SUMMEVAL_INSTRUCTION,
            answer=summary,
            contexts=[document],
            tags=["summeval"],
            metadata={
                "human_scores": list(scores),
                "human_mean": statistics.fmean(scores),
                # An integer consensus on the scale (the lower middle score when the count is even).
                "human_median": int(statistics.median_low(scores)),
                "summac_label": record.get("label"),
                "model_name": record.get("model_name"),
                "cnndm_id": record.get("cnndm_id"),
            },
        ))
    return samples


def summeval_expert_matrix(samples: Sequence[Sample]) -> list[list[float]]:
    """units × experts matrix of SummEval consistency scores, for krippendorff_alpha / fleiss_kappa."""
    return [[float(s) for s in sample.metadata["human_scores"]] for sample in samples]


# --------------------------------------------------------------------------------------------------------------
# HaluEval general
# --------------------------------------------------------------------------------------------------------------

def load_halueval(path: str | Path | None = None) -> list[Sample]:
    """HaluEval general answers, in file order (`path`: a file or a folder; default: the packaged copy).

    metadata: human_label ('yes' = humans found a hallucination, 'no'), hallucinated (bool), hallucination_spans,
    source_id (HaluEval's ID). Sample ids are 'halueval-<ID>'; two rows in the file carry the literal ID "ID",
    so rows whose ID is not a unique number are named by line instead ('halueval-line<N>').
    """
    path = benchmark_file(path, HALUEVAL_FILE_NAMES)
    records: list[tuple[int, dict[str, Any]]] = []
    for lineno, line in enumerate(_read_text(path).splitlines(), start=1):
        record = jsonl_record(line, path, lineno)       # a .gz file is read whole, then line by line
        if record is not None:
            records.append((lineno, record))
    if not records:
        raise DatasetError("the file has no rows", file=str(path))

    id_counts: dict[str, int] = {}
    for _, record in records:
        source_id = str(record.get("ID", ""))
        id_counts[source_id] = id_counts.get(source_id, 0) + 1

    samples = []
    for lineno, record in records:
        query = _required_text(record, "user_query", path=path, line=lineno, where="")
        response = _required_text(record, "chatgpt_response", path=path, line=lineno, where="")
        label = record.get("hallucination")
        if label not in HALUEVAL_LABELS:
            raise DatasetError(f"'hallucination' must be 'yes' or 'no', got {label!r}", file=str(path), line=lineno,
                               field="hallucination")
        spans = record.get("hallucination_spans") or []
        if not isinstance(spans, list):
            raise DatasetError("'hallucination_spans' must be a list", file=str(path), line=lineno,
                               field="hallucination_spans")
        source_id = str(record.get("ID", ""))
        usable_id = source_id.isdigit() and id_counts[source_id] == 1
        samples.append(Sample(
            id=f"halueval-{source_id}" if usable_id else f"halueval-line{lineno}",
            question=query,
            answer=response,
            tags=["halueval"],
            metadata={
                "human_label": label,
                "hallucinated": label == "yes",
                "hallucination_spans": [str(span) for span in spans],
                "source_id": source_id,
            },
        ))
    return samples


def balanced_subsample(samples: Sequence[Sample], n: int, *, seed: int = 0, label_key: str = "human_label",
                       positive: Any = "yes", negative: Any = "no") -> list[Sample]:
    """n samples, half with metadata[label_key] == positive and half == negative, in a seeded shuffled order.

    The order is shuffled (not yes-block then no-block) so that a run stopped part-way still sees both labels.
    The same input order and seed always give the same subsample.
    """
    if n <= 0 or n % 2:
        raise ValueError(f"n must be a positive even number (half yes, half no), got {n}")
    positives = [s for s in samples if s.metadata.get(label_key) == positive]
    negatives = [s for s in samples if s.metadata.get(label_key) == negative]
    half = n // 2
    if half > len(positives) or half > len(negatives):
        raise ValueError(f"cannot take {half} of each label: only {len(positives)} '{positive}' and "
                         f"{len(negatives)} '{negative}' samples (by metadata['{label_key}'])")
    rng = np.random.default_rng(seed)
    chosen = [positives[i] for i in rng.choice(len(positives), size=half, replace=False)]
    chosen += [negatives[i] for i in rng.choice(len(negatives), size=half, replace=False)]
    return [chosen[i] for i in rng.permutation(len(chosen))]
