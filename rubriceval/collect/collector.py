"""Run a question set through a live chatbot and save answers + retrieved contexts, resumably.

Every finished row — success or failure — is appended to the output JSONL and fsynced before the next one is
written, so a crash or Ctrl-C loses at most the calls in flight (see `resumable.py`). On start the existing output
is read back: rows that succeeded for the same id and question are skipped; failed rows are asked again and their
new result replaces the old one. At the end (also after an interruption) the file is rewritten atomically in
question order, one line per id. A failed row keeps answer "" and says why in metadata.error; it is never dropped.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from rubriceval.collect.resumable import Collection, CollectSummary, collect_resumably, read_partial
from rubriceval.collect.retry import ask_with_retries
from rubriceval.collect.targets import AnyTarget, TargetRunner, open_target
from rubriceval.common.errors import DatasetError
from rubriceval.data.io import read_dataset
from rubriceval.data.sample import Sample

# Metadata keys this module owns; stale values from an earlier run are replaced, never merged.
_COLLECT_KEYS = ("latency_s", "error", "target", "attempts")


def read_partial_output(path: Path) -> tuple[dict[str, Sample], list[str]]:
    """Rows of an earlier (possibly interrupted) run: the last line per id wins, in first-seen id order."""
    return read_partial(path, Sample.model_validate)


def _is_done(previous: Sample | None, question: Sample) -> bool:
    return (previous is not None and previous.question == question.question
            and not previous.metadata.get("error"))


def _result_row(question: Sample, *, answer: str, contexts: list[str], latency_s: float, error: str | None,
                target: str, attempts: int, reply_metadata: dict[str, Any] | None = None) -> Sample:
    metadata: dict[str, Any] = {k: v for k, v in question.metadata.items() if k not in _COLLECT_KEYS}
    metadata.update(reply_metadata or {})               # what the target returned with its answer
    metadata.update(latency_s=round(latency_s, 3), error=error, target=target, attempts=attempts)
    return question.model_copy(update={"answer": answer, "contexts": contexts, "metadata": metadata})


async def _ask_with_retries(runner: TargetRunner, question: Sample, *, timeout_s: float, retries: int,
                            backoff_s: float) -> Sample:
    done = await ask_with_retries(lambda: runner.ask(question.question, question.id), timeout_s=timeout_s,
                                  retries=retries, backoff_s=backoff_s)
    return _result_row(question, answer=done.reply.answer if done.reply else "",
                       contexts=done.reply.contexts if done.reply else [], latency_s=done.latency_s,
                       error=done.error, target=runner.description, attempts=done.attempts,
                       reply_metadata=done.reply.metadata if done.reply else None)


async def collect(questions_path: str | Path, target: AnyTarget,
                  out_path: str | Path, *, concurrency: int = 4, timeout_s: float = 60.0, retries: int = 2,
                  progress: bool = True, backoff_s: float = 0.5) -> CollectSummary:
    """Ask every question in `questions_path` of `target` and write the answers to `out_path` (JSONL).

    The input needs a `question` column; id, ground_truth, reference_contexts, tags, intent and metadata are kept.
    Each output row adds answer, contexts and metadata.latency_s / error (None on success) / target / attempts.
    `target` is a config from rubriceval.collect.targets, a CLI string for parse_target, a TargetRunner or a
    Python function (see targets.py for what it may return). Each call is limited to
    `timeout_s`; failures are retried `retries` times with exponential backoff from `backoff_s` (contract
    errors — a reply of the wrong shape, HTTP 4xx — are not retried). Re-running with the same output resumes.
    """
    out = Path(out_path)
    if out.suffix.lower() not in (".jsonl", ".ndjson"):
        raise DatasetError("collect writes JSONL so it can save after every row", file=str(out),
                           hint="use a .jsonl output; convert it afterwards if you need CSV or Excel")
    questions = read_dataset(questions_path, require=("question",))
    runner = open_target(target)

    async def work(question: Sample) -> Sample:
        return await _ask_with_retries(runner, question, timeout_s=timeout_s, retries=retries, backoff_s=backoff_s)

    job = Collection(out=out, items=questions, parse=Sample.model_validate, is_done=_is_done, work=work,
                     record=lambda sample: sample.model_dump())
    # A runner handed in is the caller's to close.
    return await collect_resumably(job, runner, owns_runner=not isinstance(target, TargetRunner),
                                   concurrency=concurrency, progress=progress)
