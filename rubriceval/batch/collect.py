"""Reading batch results back: poll the provider, download output and error files, store each line's reply.

Each result line becomes an `Answer` for its custom_id, stored at most once (the first reply wins), so reading a
file twice — after a crash, or `collect` run again — changes nothing:

* HTTP 200: the completion is stored as it came; it is read into a verdict later, by the same client code as an
  online reply (rubriceval/batch/replay.py).
* a line that is not a valid result line but still shows its custom_id: a final error, so that judgment is
  unscored with the reason ("malformed batch output line N: …"); a line without one is counted as unattributed.
* HTTP 400/401/403/404/422: a final error (asking again will not help), unscored with the provider's message.
* anything else (429, 5xx, batch_expired, batch_cancelled, no line at all for a request of a finished batch):
  failed, asked again in the next round or online (`--finish-online`).
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel

from rubriceval.batch.files import OutputLine, iter_output_lines
from rubriceval.batch.provider import BatchProvider
from rubriceval.judge.pricing import usd
from rubriceval.store.batches import TERMINAL, Answer, BatchFile, BatchStore

FINAL_STATUSES = (400, 401, 403, 404, 422)
CHUNK = 2000


class IngestCounts(BaseModel):
    lines: int = 0
    answered: int = 0              # requests that got their reply now (a re-read line counts 0)
    final_errors: int = 0          # lines settled as an error (unscored with the reason)
    retryable: int = 0             # lines saying the request failed (asked again later)
    malformed: int = 0             # lines that are not valid result lines
    unattributed: int = 0          # of those, lines without a custom_id

    def add(self, other: IngestCounts) -> None:
        for name in IngestCounts.model_fields:
            setattr(self, name, getattr(self, name) + getattr(other, name))


# custom_id → the batch price (USD per 1M tokens in/out) of the judge that request was for: one price for a file
# from one endpoint; an offline output file of a panel's run may hold any judge's lines (plan.prices_by_custom_id).
Prices = Callable[[str], tuple[float, float]]


def answer_for(line: OutputLine, prices: Prices) -> Answer | None:
    """The stored answer for one result line, priced at `prices(custom_id)`; None when the line names no
    request."""
    if line.custom_id is None:
        return None
    if line.malformed or (line.status_code in FINAL_STATUSES):
        return Answer(custom_id=line.custom_id, reply={"error": line.error, "error_kind": "provider_error"},
                      error=line.error)
    if line.status_code != 200 or line.body is None:
        return Answer(custom_id=line.custom_id, error=line.error or "no completion")
    given = line.body.get("usage")
    usage = given if isinstance(given, dict) else {}
    prompt_tokens = int(usage.get("prompt_tokens") or 0)
    completion_tokens = int(usage.get("completion_tokens") or 0)
    return Answer(custom_id=line.custom_id, reply={"completion": line.body}, prompt_tokens=prompt_tokens,
                  completion_tokens=completion_tokens,
                  cost_usd=usd(prompt_tokens, completion_tokens, prices(line.custom_id)))


def ingest(batches: BatchStore, run_id: str, path: Path, prices: Prices) -> IngestCounts:
    """Store every result line of one output or error file (streamed; a chunk of lines per transaction)."""
    counts = IngestCounts()
    pending: list[Answer] = []
    for line in iter_output_lines(path):
        counts.lines += 1
        counts.malformed += line.malformed
        answer = answer_for(line, prices)
        if answer is None:
            counts.unattributed += 1
            continue
        if answer.reply is None:
            counts.retryable += 1
        elif "error" in answer.reply:
            counts.final_errors += 1
        pending.append(answer)
        if len(pending) >= CHUNK:
            counts.answered += batches.save_answers(run_id, pending)
            pending = []
    counts.answered += batches.save_answers(run_id, pending)
    return counts


def poll(batches: BatchStore, provider: BatchProvider, run_id: str, endpoint: str = ""
         ) -> list[tuple[BatchFile, str]]:
    """Ask the provider about every submitted batch of the run (of `endpoint`, for a panel's run) not collected
    yet; store and return the states."""
    states = []
    for batch_file in batches.files(run_id):
        if batch_file.target != "provider" or batch_file.batch_id is None or batch_file.collected \
                or batch_file.endpoint != endpoint:
            continue
        info = provider.retrieve(batch_file.batch_id)
        batches.update_file(run_id, batch_file.file_no, status=info.status, counts=info.request_counts,
                            output_file_id=info.output_file_id, error_file_id=info.error_file_id)
        states.append((batch_file.model_copy(update={"output_file_id": info.output_file_id,
                                                     "error_file_id": info.error_file_id}), info.status))
    return states


def refresh_provider_files(batches: BatchStore, provider: BatchProvider, run_id: str, directory: Path,
                           prices: tuple[float, float], endpoint: str = "") -> IngestCounts:
    """Poll every submitted batch of the run (of `endpoint`); read the results of those that finished, once, each
    reply priced at `prices` (that endpoint's batch price)."""
    counts = IngestCounts()
    for batch_file, status in poll(batches, provider, run_id, endpoint):
        if status in TERMINAL:
            counts.add(_read_results(batches, provider, run_id, batch_file, batch_file.output_file_id,
                                     batch_file.error_file_id, directory, lambda _custom_id: prices))
            leftover = "expired" if status in ("expired", "cancelled") else "failed"
            batches.close_file(run_id, batch_file.file_no, leftover,
                               f"batch {batch_file.batch_id} {status} without a result for this request")
            batches.update_file(run_id, batch_file.file_no, collected=True)
    return counts


def _read_results(batches: BatchStore, provider: BatchProvider, run_id: str, batch_file: BatchFile,
                  output_file_id: str | None, error_file_id: str | None, directory: Path,
                  prices: Prices) -> IngestCounts:
    counts = IngestCounts()
    stem = Path(batch_file.path).stem
    for file_id, suffix in ((output_file_id, "output"), (error_file_id, "errors")):
        if file_id:
            local = provider.download(file_id, directory / f"{stem}.{suffix}.jsonl")
            counts.add(ingest(batches, run_id, local, prices))
    return counts


def collect_offline(batches: BatchStore, run_id: str, source: Path, prices: Prices) -> IngestCounts:
    """Read an offline runner's output (a JSONL file, or every JSONL file of a directory but this run's request
    files). A request file whose requests appear in the output is settled: its requests without a line failed."""
    ours = {Path(f.path).resolve() for f in batches.files(run_id)}
    if source.is_dir():
        outputs = sorted(p for p in source.glob("*.jsonl") if p.resolve() not in ours)
    else:
        outputs = [source]
    counts = IngestCounts()
    for path in outputs:
        counts.add(ingest(batches, run_id, path, prices))
    for batch_file in batches.files(run_id):
        if batch_file.target == "offline" and not batch_file.collected and batches.settled(run_id, batch_file.file_no):
            batches.close_file(run_id, batch_file.file_no, "failed", "no line for this request in the offline output")
            batches.update_file(run_id, batch_file.file_no, status="completed", collected=True)
    return counts
