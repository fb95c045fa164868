"""Writing a round's request files and submitting them, one committed step at a time.

A file is written whole (then registered with all its requests, state `queued`), uploaded (its file id recorded),
then a batch is created from it (its batch id recorded, requests `submitted`). `submit_files` picks up whatever
step a killed process left: a file uploaded but without a recorded batch is first looked up among the provider's
batches by its input file id, so a batch is never created twice. Files for an offline runner (`--batch-file`)
stop after writing: the runner reads them from the directory. A panel's judges write one set of files per
endpoint (rubriceval/batch/endpoints.py), each submitted at its own provider.
"""
from __future__ import annotations

import itertools
from collections.abc import Iterable
from pathlib import Path

from rubriceval.batch.endpoints import Endpoint, RunJudges
from rubriceval.batch.files import RequestFileWriter, WrittenFile
from rubriceval.batch.plan import PlannedRequest
from rubriceval.batch.provider import BatchProvider
from rubriceval.judge.config import JudgeConfig
from rubriceval.store.batches import BatchStore


def write_round(batches: BatchStore, run_id: str, round_no: int, requests: Iterable[PlannedRequest],
                directory: Path, judges: RunJudges, *, offline: bool) -> int:
    """Write the requests into files split at their endpoint's limits, one set of files per endpoint, and register
    each file (with its endpoint, for a panel's run); returns how many requests were written."""
    target = "offline" if offline else "provider"
    numbers = itertools.count(batches.next_file_no(run_id))       # one numbering for all the endpoints' files
    writers: dict[str, RequestFileWriter] = {}

    def writer_for(endpoint: Endpoint) -> RequestFileWriter:
        def register(written: WrittenFile) -> None:
            file_no = writers[endpoint.name].number
            batches.add_file(run_id, file_no, round_no, written.path, written.requests, written.n_bytes, target,
                             endpoint=endpoint.name)
            if offline:
                batches.update_file(run_id, file_no, status="submitted")

        prefix = f"{run_id}-{endpoint.name}-round{round_no}" if endpoint.name else f"{run_id}-round{round_no}"
        return RequestFileWriter(directory, prefix, max_requests=endpoint.config.batch_max_requests,
                                 max_bytes=endpoint.config.batch_max_bytes, on_file=register, numbers=numbers)

    written = 0
    for endpoint_name, row, body in requests:
        if endpoint_name not in writers:
            writers[endpoint_name] = writer_for(judges.endpoint(endpoint_name))
        writers[endpoint_name].add(row, body)
        written += 1
    for writer in writers.values():
        writer.close()
    return written


def submit_files(batches: BatchStore, provider: BatchProvider, run_id: str, config: JudgeConfig,
                 endpoint: str = "") -> list[str]:
    """Upload and create a batch for every written file of the run (of `endpoint`, for a panel's run) not submitted
    yet, at `provider`; returns the new batch ids."""
    created = []
    for batch_file in batches.files(run_id):
        if batch_file.target != "provider" or batch_file.status not in ("written", "uploaded") \
                or batch_file.endpoint != endpoint:
            continue
        existing = None
        input_file_id = batch_file.input_file_id
        if batch_file.status == "written" or input_file_id is None:
            input_file_id = provider.upload(Path(batch_file.path))
            batches.update_file(run_id, batch_file.file_no, input_file_id=input_file_id, status="uploaded")
        else:
            existing = provider.find(input_file_id)       # created before a crash, id not recorded?
        info = existing or provider.create(input_file_id, completion_window=config.batch_completion_window,
                                           metadata={"rubriceval_run": run_id,
                                                     "rubriceval_file": Path(batch_file.path).name})
        batches.update_file(run_id, batch_file.file_no, batch_id=info.id, status="submitted")
        created.append(info.id)
    return created
