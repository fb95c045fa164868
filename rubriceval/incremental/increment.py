"""One increment over a growing source: finish an increment a kill left unjudged, read what changed in the source
(first pass: ids, content hashes and end times only), keep the conversations that are closed and new or changed, and
judge them as one run whose period ends at the cutoff (now minus the idle timeout).

The increment's row, its watermark and the files' positions are written in one transaction once its run holds its
samples and before anything is judged: a kill during judging leaves a run that the next increment resumes (its
conversations are not selected again); a kill before that leaves nothing, and the next increment selects them anew.
"""
from __future__ import annotations

import re
import sys
import time
from collections.abc import Sequence
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from rubriceval.common.errors import RubricEvalError
from rubriceval.data.metadata import utc_iso
from rubriceval.data.sample import Sample
from rubriceval.data.segment_spec import TimeSettings
from rubriceval.data.segment_values import SampleKeys, sample_time
from rubriceval.incremental.source import Place, changed_state, read_file, reread, source_files
from rubriceval.incremental.state import FileState, Increment, SourceState

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|m|min|h|d)?\s*$")
_UNITS = {"s": 1, "m": 60, "min": 60, "h": 3600, "d": 86400, None: 60}


class IncrementResult(BaseModel):
    source: str
    run_id: str | None = None             # None: nothing new to judge
    run_name: str | None = None
    period_start: str | None = None
    period_end: str = ""
    n_read: int = 0                       # conversations read this time (the rest of the source was not opened)
    n_new: int = 0
    n_changed: int = 0
    n_unchanged: int = 0
    n_waiting: int = 0
    n_no_time: int = 0                    # without any timestamp: taken as closed
    files_read: int = 0
    files_skipped: int = 0
    resumed: list[str] = Field(default_factory=list)
    totals: dict[str, Any] = Field(default_factory=dict)
    wall_s: float = 0.0

    def line(self) -> str:
        what = f"run {self.run_name}: {self.n_new} new, {self.n_changed} changed judged" if self.run_id else \
            "nothing new to judge"
        return (f"{what}; {self.n_unchanged} unchanged, {self.n_waiting} waiting (younger than the idle timeout)"
                f"; read {self.n_read} conversation(s) from {self.files_read} file(s), {self.files_skipped} "
                f"unchanged file(s) not opened; period {self.period_start or '…'} → {self.period_end}"
                + (f"; resumed {', '.join(self.resumed)}" if self.resumed else "") + f"; wall {self.wall_s:.1f}s")


def parse_duration(text: str | float | int) -> float:
    """'30m', '2h', '1d', '90s' or a number of minutes → seconds."""
    if isinstance(text, (int, float)):
        return float(text) * 60
    match = _DURATION.match(str(text))
    if not match:
        raise RubricEvalError(f"cannot read the duration {text!r}", field="idle-timeout",
                              hint="e.g. 30m, 2h, 1d, 90s (a bare number is minutes)")
    return float(match[1]) * _UNITS[match[2]]


def _keys(sample: Sample) -> SampleKeys:
    turns = sample.conversation.turns if sample.conversation is not None else []
    return SampleKeys(sample.id, sample.metadata, sample.tags, sample.intent,
                      turns[0].timestamp if turns else None, turns[-1].timestamp if turns else None)


def _free_name(store: Any, base: str) -> str:
    name, n = base, 2
    while store.conn.execute("SELECT 1 FROM runs WHERE name = ?", (name,)).fetchone():
        name, n = f"{base}-{n}", n + 1
    return name


def _resume_unfinished(state: SourceState, store: Any, judge: dict[str, Any], progress: bool) -> list[str]:
    """Increments whose run was killed while judging: finish them first (their conversations are watermarked)."""
    import asyncio

    from rubriceval.run.evaluate import rubrics_from_run, run_async

    resumed = []
    for increment in state.increments():
        info = store.run_info(increment.run_id)
        if info.status == "complete":
            continue
        rubrics, metrics = rubrics_from_run(store, increment.run_id)
        print(f"resuming increment {info.name} ({info.n_verdicts} verdicts already stored)", file=sys.stderr)
        asyncio.run(run_async(None, rubrics, metrics, store=store, progress=progress, resume_run=increment.run_id,
                              **judge))
        resumed.append(info.name)
    return resumed


def run_increment(source: str | Path, rubrics: Sequence[Any], metrics: Sequence[str], *, store: Any,
                  judge_config: Any, embedder_config: Any = None, panel_config: Any = None,
                  metric_options: Any = None, idle_timeout: str | float = "30m", now: datetime | None = None,
                  name: str | None = None, settings: TimeSettings | None = None, progress: bool = False,
                  workers: int | None = None) -> IncrementResult:
    """Judge what is new or changed in `source` since the last increment (see the module docstring)."""
    import asyncio

    from rubriceval.run.evaluate import run_async, start_run

    started = time.perf_counter()
    settings = settings or TimeSettings()
    path = Path(source)
    key = str(path.resolve())
    cutoff = (now or datetime.now(timezone.utc)) - timedelta(seconds=parse_duration(idle_timeout))
    state = SourceState(store.conn, key)
    judge = dict(judge_config=judge_config, embedder_config=embedder_config, panel_config=panel_config,
                 metric_options=metric_options, workers=workers)
    result = IncrementResult(source=key, period_end=utc_iso(cutoff))
    result.resumed = _resume_unfinished(state, store, judge, progress)
    previous = state.increments()
    result.period_start = previous[-1].period_end if previous else None

    # first pass: what each conversation read is (id → place, hash, still open?), nothing else kept
    files = state.files()
    latest: dict[str, tuple[Place, str, bool]] = {}
    new_states: list[FileState] = []
    for file in source_files(path):
        change = changed_state(file, files.get(str(file)))
        if change is None:
            result.files_skipped += 1
            continue
        now_state, from_start = change
        result.files_read += 1
        for item in read_file(file, files.get(str(file)), now_state, from_start):
            result.n_read += 1
            end = sample_time(_keys(item.sample), "", settings, end=True)
            if end is None:
                result.n_no_time += 1
            latest[item.sample.id] = (Place(item.file, item.where, item.line), item.sample.input_hash(),
                                      end is not None and end > cutoff)
        new_states.append(now_state)
    by_path = {s.path: s for s in new_states}
    known = state.hashes(list(latest))
    chosen: list[Place] = []
    judged: list[tuple[str, str]] = []
    for cid, (place, digest, waiting) in latest.items():
        if waiting:
            by_path[place.file].pending.append((place.where, place.line or 0))
            result.n_waiting += 1
            continue
        old = known.get(cid)
        if old == digest:
            result.n_unchanged += 1
            continue
        if old is None:
            result.n_new += 1
        else:
            result.n_changed += 1
        chosen.append(place)
        judged.append((cid, digest))
    if result.n_no_time:
        print(f"note: {result.n_no_time} conversation(s) carry no timestamp: taken as closed", file=sys.stderr)
    if not chosen:
        state.record(None, [], new_states)
        result.wall_s = time.perf_counter() - started
        return result

    # second pass: the chosen conversations again, straight into the run's dataset
    run_name = _free_name(store, name or f"{path.stem}-{cutoff.strftime('%Y%m%dT%H%M%SZ')}")
    run_id, used = start_run(reread(chosen), list(rubrics), list(metrics), store=store, judge_config=judge_config,
                             embedder_config=embedder_config, name=run_name, dataset_path=key,
                             panel_config=panel_config, metric_options=metric_options)
    state.record(Increment(run_id=run_id, source=key, label=result.period_end[:16] + "Z",
                           period_start=result.period_start, period_end=result.period_end, n_new=result.n_new,
                           n_changed=result.n_changed, n_waiting=result.n_waiting, n_unchanged=result.n_unchanged),
                 judged, new_states)
    run_id, totals = asyncio.run(run_async(None, used, list(metrics), store=store, progress=progress,
                                           resume_run=run_id, **judge))
    result.run_id, result.run_name = run_id, run_name
    result.totals = totals.as_dict() if totals else {}
    result.wall_s = time.perf_counter() - started
    return result
