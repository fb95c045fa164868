"""What `evaluate()` accepts as a dataset, turned into Samples: a file path, a list of Samples or dicts, a pandas
DataFrame, a Ragas `EvaluationDataset` or list of `SingleTurnSample`/`MultiTurnSample`, a Hugging Face `Dataset`
or its column dict (`to_dict()`), with Ragas's column names or ours.

Nothing here imports Ragas or `datasets`: objects are read by their shape (`.samples`, `.to_list()`, `.to_dict()`,
`.model_dump()`, attributes `user_input`, `response`, `retrieved_contexts`, `reference`). Rows go through the same
normalisation as a file's rows, so the same data judged from a list or from a JSONL file gets the same verdicts;
a bad row raises DatasetError naming the input, the row and the field. A row without an `id` gets one made from
its content (`Sample.content_id`): stable from run to run; repeated content gets -2, -3 ….
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from rubriceval.common.errors import DatasetError
from rubriceval.data.conversation import Conversation, is_conversation_record
from rubriceval.data.conversation_io import conversation_sample, parse_conversation
from rubriceval.data.io import DatasetStream, normalise_record
from rubriceval.data.sample import Sample

# Attributes read from an object that is neither a dict nor a pydantic model (a Ragas sample lookalike).
_SAMPLE_ATTRIBUTES = ("id", "user_input", "response", "retrieved_contexts", "reference", "reference_contexts",
                      "question", "answer", "contexts", "ground_truth", "tags", "intent", "metadata")


def dataset_samples(dataset: Any) -> DatasetStream | list[Sample]:
    """A file path → a DatasetStream (read as a stream); any in-memory form → a list of Samples."""
    if isinstance(dataset, (str, Path)):
        return DatasetStream(dataset)
    source, rows = _rows(dataset)
    samples: list[Sample] = []
    seen: dict[str, int] = {}
    for position, row in enumerate(rows, start=1):
        sample = _sample(row, source=source, position=position)
        count = seen.get(sample.id, 0) + 1
        seen[sample.id] = count
        if count > 1:
            if not _generated(row):
                raise DatasetError(f"duplicate id '{sample.id}'", file=source, line=position, field="id")
            sample = sample.model_copy(update={"id": f"{sample.id}-{count}"})
        samples.append(sample)
    if not samples:
        raise DatasetError("the dataset has no rows", file=source)
    return samples


def _rows(dataset: Any) -> tuple[str, Iterable[Any]]:
    """(how errors name the input, its rows): the container's shape decides how rows are read."""
    kind = f"<{type(dataset).__name__}>"
    if hasattr(dataset, "iterrows") and hasattr(dataset, "to_dict"):             # pandas DataFrame
        return kind, dataset.to_dict("records")
    if isinstance(dataset, Mapping):                                              # HF-style column dict
        return "<dict of columns>", _transposed(dataset, kind)
    if hasattr(dataset, "samples") and not callable(dataset.samples):             # Ragas EvaluationDataset
        return kind, list(dataset.samples)
    if hasattr(dataset, "to_list"):                                               # HF Dataset, Ragas dataset
        return kind, dataset.to_list()
    if hasattr(dataset, "to_dict"):
        return kind, _transposed(dataset.to_dict(), kind)
    if isinstance(dataset, Iterable) and not isinstance(dataset, (str, bytes)):
        return "<list>", list(dataset)
    raise DatasetError(f"cannot read a dataset from a {type(dataset).__name__}", field="dataset",
                       hint="pass a file path, a list of dicts or Samples, a pandas DataFrame, a Ragas "
                            "EvaluationDataset or a Hugging Face Dataset")


def _transposed(columns: Mapping[str, Any], kind: str) -> list[dict[str, Any]]:
    """{'user_input': [...], 'response': [...]} → one dict per row; every column must have the same length."""
    lists = {str(name): list(values) for name, values in columns.items()}
    lengths = {name: len(values) for name, values in lists.items()}
    if len(set(lengths.values())) > 1:
        raise DatasetError(f"columns of different lengths: {lengths}", file=kind, field="dataset")
    n = next(iter(lengths.values()), 0)
    return [{name: values[i] for name, values in lists.items()} for i in range(n)]


def _record(row: Any) -> dict[str, Any] | Sample | Conversation:
    """A row as a plain dict (a Sample or Conversation is kept as it is)."""
    if isinstance(row, (Sample, Conversation)):
        return row
    if isinstance(row, Mapping):
        data = dict(row)
    elif hasattr(row, "model_dump"):                                              # Ragas samples are pydantic
        data = row.model_dump()
    else:
        data = {name: getattr(row, name) for name in _SAMPLE_ATTRIBUTES if hasattr(row, name)}
        if not data:
            raise DatasetError(f"a row must be a dict, a Sample or a Ragas-style sample, not {type(row).__name__}",
                               field="dataset")
    # A Ragas model dumps its unset fields as None, a DataFrame's empty cells are NaN: both are left out (so a
    # `question` column's gap does not hide that row's `user_input`); numpy arrays (HF datasets) become lists.
    return {str(k): (v.tolist() if hasattr(v, "tolist") and not isinstance(v, str) else v)
            for k, v in data.items() if v is not None and not (isinstance(v, float) and math.isnan(v))}


def _generated(row: Any) -> bool:
    record = _record(row)
    given = record.id if isinstance(record, (Sample, Conversation)) else record.get("id")
    return given in (None, "")


def _sample(row: Any, *, source: str, position: int) -> Sample:
    record = _record(row)
    if isinstance(record, Sample):
        return record
    if isinstance(record, Conversation):
        return conversation_sample(record)
    if is_conversation_record(record):
        return conversation_sample(parse_conversation(record, file=source, line=position, position=position))
    data = normalise_record(record, path=Path(source), line=position)
    if data.get("question") in (None, ""):
        raise DatasetError("missing required field 'question' (or Ragas's 'user_input')", file=source,
                           line=position, field="question", hint=f"fields found: {sorted(record)}")
    try:
        return Sample.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        raise DatasetError(error["msg"], file=source, line=position,
                           field=".".join(str(p) for p in error["loc"])) from None
