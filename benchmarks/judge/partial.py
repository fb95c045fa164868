"""A long benchmark survives being stopped: `<out>.partial.jsonl` keeps every judged item together with what judged
it, and `benchmark-judge … --resume` judges only the items it lacks.

The file: a header line (`PartialHeader`: the benchmark, the judge, the measured rubric versions, the items, and the
prompt fingerprint), then one line per item in the order the items were judged (`PartialLine`: the item's record and
the judging seconds spent so far). The prompt fingerprint hashes the judge-cache key of every call the run makes, as
the dry-run planner lists them (rubriceval/run/planning.py): the exact messages, JSON schema, call options, model,
endpoint, temperature and seed — so any change to a template, a rubric, the few-shot examples or the judge changes it.

Resuming keeps the items only when this invocation's header equals the file's: a partial written with another
prompt, rubric version, judge, mode, few-shot setting or item set is refused, naming what differs (verdicts of two
prompts are never mixed in one result). Without `--resume`, a partial that holds judged items is refused too, so
an hour of judging is never overwritten by accident.
"""
from __future__ import annotations

import hashlib
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Generic, TypeVar

from pydantic import BaseModel, Field, ValidationError

from rubriceval.common.errors import DatasetError
from rubriceval.core.verdict import Verdict
from rubriceval.data.sample import Sample
from rubriceval.judge.config import JudgeConfig
from rubriceval.rubric.schema import Rubric

Record = TypeVar("Record", bound=BaseModel)
FORMAT = 1


class PartialHeader(BaseModel):
    """What judged the items of a partial file: equal headers ⇔ the same judge calls."""

    partial_format: int = FORMAT
    benchmark: str
    judge_mode: str | None
    few_shot: str | None
    options: dict[str, str] = Field(default_factory=dict)        # other settings of the benchmark (e.g. shuffle)
    judge_model: str
    judge_endpoint: str
    rubric_versions: dict[str, str]         # rubric id → version tag of the rubric as measured (mode, examples)
    item_ids: list[str]                      # the items of the run, in order
    prompt_fingerprint: str


class PartialLine(BaseModel, Generic[Record]):
    elapsed_s: float                # judging seconds spent when this item was written (earlier sessions included)
    item: Record


class Resumed(BaseModel, Generic[Record]):
    """The items a partial file already holds (by item id) and the judging seconds they took."""

    items: dict[str, Record] = Field(default_factory=dict)
    elapsed_s: float = 0.0


def partial_header(benchmark: str, pairs: Sequence[tuple[Rubric, Sample]], config: JudgeConfig, *,
                   judge_mode: str | None, few_shot: str | None, options: dict[str, str] | None = None
                   ) -> PartialHeader:
    """This invocation's header: the judge calls it makes, hashed (see the module doc)."""
    from rubriceval.judge.cache import endpoint_identity
    from rubriceval.run.planning import planned_judge_calls

    ids = [sample.id for _, sample in pairs]
    if len(set(ids)) != len(ids):
        raise DatasetError("a resumable benchmark needs unique item ids", field="id")
    # The rubrics are already in the measured mode: the planner must not apply --judge-mode again.
    as_measured = config.model_copy(update={"judge_mode": None})
    digest = hashlib.sha256()
    for rubric, sample in pairs:
        for call in planned_judge_calls([sample], [rubric], [], as_measured):
            digest.update(f"{sample.id}\t{call.item}\t{call.key()}\n".encode())
    return PartialHeader(benchmark=benchmark, judge_mode=judge_mode, few_shot=few_shot, options=options or {},
                         judge_model=config.model, judge_endpoint=endpoint_identity(config.base_url),
                         rubric_versions={r.id: r.version_tag for r, _ in pairs}, item_ids=ids,
                         prompt_fingerprint=digest.hexdigest()[:16])


def _differences(found: PartialHeader, wanted: PartialHeader) -> list[str]:
    out = []
    for name in PartialHeader.model_fields:
        a, b = getattr(found, name), getattr(wanted, name)
        if a == b:
            continue
        if name == "item_ids":
            out.append(f"items: {len(a)} there, {len(b)} now ({len(set(a) ^ set(b))} differ: another --n, seed or "
                       f"data)")
        elif name == "prompt_fingerprint":
            out.append(f"judge prompts: fingerprint {a} there, {b} now")
        else:
            out.append(f"{name}: {a} there, {b} now")
    return out


class PartialFile(Generic[Record]):
    """One run's partial file: `open` checks or starts it, `writer` appends each item as it is judged."""

    def __init__(self, path: str | Path, header: PartialHeader, record: type[Record]):
        """`record`: the model of an item line; its `id` is the item's sample id."""
        self.path, self.header, self.record = Path(path), header, record
        self.line = PartialLine[record]
        self.started = time.perf_counter()
        self.earlier_s = 0.0

    def open(self, resume: bool) -> Resumed[Record]:
        """The items to keep (resume) or none (a new run); the file is (re)written as header + kept items."""
        found = self._read() if self.path.exists() else None
        kept = Resumed[self.record]()
        if found is not None and found.items and not resume:
            raise DatasetError(f"{len(found.items)} items of a stopped run are kept here", file=str(self.path),
                               hint="pass --resume to judge only the missing items, or delete the file to start "
                                    "again")
        if resume and found is None:
            print(f"note: nothing to resume ({self.path} not found): judging every item", file=sys.stderr)
        elif resume:
            kept = found
            print(f"resuming: {len(kept.items)} of {len(self.header.item_ids)} items judged in {self.path} "
                  f"({kept.elapsed_s:.0f} s); judging the other {len(self.header.item_ids) - len(kept.items)}",
                  file=sys.stderr)
        self.earlier_s = kept.elapsed_s
        self.path.parent.mkdir(parents=True, exist_ok=True)
        lines = [self.header.model_dump_json()]
        lines += [self.line(elapsed_s=kept.elapsed_s, item=item).model_dump_json() for item in kept.items.values()]
        self.path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        self.started = time.perf_counter()
        return kept

    def elapsed(self) -> float:
        """Judging seconds of this run, earlier sessions included."""
        return self.earlier_s + time.perf_counter() - self.started

    def writer(self, record: Callable[[Sample, Verdict], Record]) -> Callable[[Sample, Verdict], None]:
        def write(sample: Sample, verdict: Verdict) -> None:
            line = self.line(elapsed_s=round(self.elapsed(), 3), item=record(sample, verdict))
            with self.path.open("a", encoding="utf-8") as handle:
                handle.write(line.model_dump_json() + "\n")
        return write

    def _read(self) -> Resumed[Record]:
        text = self.path.read_text(encoding="utf-8").splitlines()
        if not text:
            return Resumed[self.record]()
        try:
            found = PartialHeader.model_validate_json(text[0])
        except ValidationError:
            raise DatasetError("no header naming the prompts that judged these items (written before partial files "
                               "had one?): they cannot be told apart from another prompt's", file=str(self.path),
                               line=1, hint="delete the file to start again") from None
        differences = _differences(found, self.header)
        if differences:
            raise DatasetError("these items were judged by another configuration — " + "; ".join(differences),
                               file=str(self.path), line=1,
                               hint="delete the file (or use another --out) to judge from the start")
        kept = Resumed[self.record]()
        for number, parsed in _lines(self.path, text, self.line):
            key = parsed.item.id
            if key not in self.header.item_ids:
                raise DatasetError(f"item '{key}' is not one of this run's items", file=str(self.path), line=number)
            kept.items[key] = parsed.item
            kept.elapsed_s = max(kept.elapsed_s, parsed.elapsed_s)
        return kept


def _lines(path: Path, text: list[str], line_type: type[PartialLine]) -> list[tuple[int, PartialLine]]:
    """The item lines after the header, with their line numbers; an incomplete last line (the one being written
    when the run was stopped) is left out with a note, any other unreadable line is an error."""
    out = []
    for number, line in enumerate(text[1:], start=2):
        if not line.strip():
            continue
        try:
            out.append((number, line_type.model_validate_json(line)))
        except ValidationError as exc:
            if number == len(text):
                print(f"note: {path} line {number} is incomplete: that item is judged again", file=sys.stderr)
                break
            raise DatasetError(f"unreadable item: {exc.errors()[0]['msg']}", file=str(path), line=number) from None
    return out


def read_partial(path: str | Path, record: type[Record]) -> tuple[PartialHeader, list[Record], float]:
    """A partial file's header, items (in the order judged) and judging seconds, without checking them against a
    run (for a report of a stopped run: benchmarks/pipeline/judge_modes_report.py)."""
    path = Path(path)
    text = path.read_text(encoding="utf-8").splitlines()
    try:
        header = PartialHeader.model_validate_json(text[0] if text else "")
    except ValidationError:
        raise DatasetError("not a partial benchmark file (no header)", file=str(path), line=1) from None
    parsed = [line for _, line in _lines(path, text, PartialLine[record])]
    return header, [p.item for p in parsed], max((p.elapsed_s for p in parsed), default=0.0)
