"""The corrected dataset: which samples the experts' corrections changed, and the export as a new version."""
from __future__ import annotations

from pathlib import Path

from rubriceval.data.io import write_dataset
from rubriceval.data.sample import Sample
from rubriceval.store.audit import AuditStore
from rubriceval.store.audit_models import ExportSummary


def changed_samples(store_path: str | Path, run: str) -> list[Sample]:
    """Samples whose expert corrections change what a scorer reads (input_hash differs from the judged row).

    For `rubriceval run --rescore-changed`: re-score exactly these rows.
    """
    with AuditStore(store_path) as store:
        return [corrected for original, corrected in store.corrected_samples(run)
                if corrected.input_hash() != original.input_hash()]


def export_corrected_dataset(store_path: str | Path, run: str, out_path: str | Path) -> ExportSummary:
    """Write the run's dataset with the experts' corrections as a new version (.jsonl, .csv or .xlsx).

    Corrected rows carry provenance in metadata: edited_by, edited_at, previous values, source run and dataset.
    """
    with AuditStore(store_path) as store:
        pairs = store.corrected_samples(run)
    samples = [corrected for _, corrected in pairs]
    path = write_dataset(samples, out_path)
    n_corrected = sum(1 for original, corrected in pairs if corrected is not original)
    return ExportSummary(path=str(path), n_samples=len(samples), n_corrected=n_corrected)
