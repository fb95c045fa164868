"""Writing a round's request files and submitting them, one committed step at a time.

A file is written whole (then registered with all its requests, state `queued`), uploaded (its file id recorded),
then a batch is created from it (its batch id recorded, requests `submitted`). `submit_files` picks up whatever
step a killed process left: a file uploaded but without a recorded batch is first looked up among the provider's
batches by its input file id, so a batch is never created twice. Files for an offline runner (`--batch-file`)
stop after writing: the runner reads them from the directory.
"""
from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from rubriceval.batch.files import RequestFileWriter, WrittenFile
from rubriceval.batch.provider import BatchProvider
from rubriceval.judge.config import JudgeConfig
from rubriceval.store.batches import BatchStore, RequestRow


def write_round(batches: BatchStore, run_id: str, round_no: int, requests: Iterable[tuple[RequestRow, dict]],
                directory: Path, config: JudgeConfig, *, offline: bool) -> int:
    """Write the requests into files split at the configured limits and register each file; returns how many
    requests were written."""
    target = "offline" if offline else "provider"

    def register(written: WrittenFile) -> None:
        file_no = writer.number
        batches.add_file(run_id, file_no, round_no, written.path, written.requests, written.n_bytes, target)
        if offline:
            batches.update_file(run_id, file_no, status="submitted")

    writer = RequestFileWriter(directory, f"{run_id}-round{round_no}", max_requests=config.batch_max_requests,
                               max_bytes=config.batch_max_bytes, on_file=register,
                               first_number=batches.next_file_no(run_id))
    for row, body in requests:
        writer.add(row, body)
    writer.close()
    return writer.written


def submit_files(batches: BatchStore, provider: BatchProvider, run_id: str, config: JudgeConfig) -> list[str]:
    """Upload and create a batch for every written file of the run not submitted yet; returns the new batch ids."""
    created = []
    for batch_file in batches.files(run_id):
        if batch_file.target != "provider" or batch_file.status not in ("written", "uploaded"):
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
