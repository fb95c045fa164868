"""Expert corrections as pure functions: the latest ground truth and context relevance marks applied to a sample,
and the provenance stamped into a corrected sample (the item view, the export and re-scoring share them)."""
from __future__ import annotations

from typing import Any

from rubriceval.data.sample import Sample
from rubriceval.store.audit_models import GROUND_TRUTH_FIELD, ContextMark, GroundTruthEdit, iso_time


def context_marks(edits: list[GroundTruthEdit]) -> dict[int, ContextMark]:
    """The latest relevance mark per retrieved context index."""
    marks: dict[int, ContextMark] = {}
    for edit in edits:
        if edit.field.startswith("context:"):
            marks[int(edit.field.split(":", 1)[1])] = ContextMark(relevant=bool(edit.after), editor=edit.editor,
                                                                  edited_at=edit.edited_at)
    return marks


def apply_corrections(original: Sample, edits: list[GroundTruthEdit]) -> Sample:
    """The sample with the latest ground truth; contexts marked relevant join reference_contexts, irrelevant leave.

    Why reference_contexts: it is the field the context precision/recall metrics compare retrieval against, so an
    expert's relevance mark changes the sample's input_hash and the row is re-scored.
    """
    if not edits:
        return original
    ground_truth = original.ground_truth
    for edit in edits:
        if edit.field == GROUND_TRUTH_FIELD:
            ground_truth = edit.after
    reference = list(original.reference_contexts)
    marks = context_marks(edits)
    for index, mark in sorted(marks.items()):
        text = original.contexts[index]
        if mark.relevant and text not in reference:
            reference.append(text)
        elif not mark.relevant and text in reference:
            reference = [r for r in reference if r != text]
    metadata = dict(original.metadata)
    if marks:
        metadata["context_relevance"] = {str(i): m.relevant for i, m in sorted(marks.items())}
    return original.model_copy(update={"ground_truth": ground_truth, "reference_contexts": reference,
                                       "metadata": metadata})


def with_provenance(corrected: Sample, original: Sample, edits: list[GroundTruthEdit], *, run_name: str,
                    run_id: str, dataset_path: str = "", dataset_hash: str = "") -> Sample:
    """Stamp who changed what, when, from which value and run, into the corrected sample's metadata."""
    latest = max(edits, key=lambda e: (e.edited_at, e.edit_id))
    editors = sorted({e.editor for e in edits})
    previous: dict[str, Any] = {}
    if corrected.ground_truth != original.ground_truth:
        previous["ground_truth"] = original.ground_truth
    if corrected.reference_contexts != original.reference_contexts:
        previous["reference_contexts"] = original.reference_contexts
    metadata = {
        **corrected.metadata,
        "edited_by": ", ".join(editors),
        "edited_at": iso_time(latest.edited_at),
        "previous": previous,
        "source_run": run_name,
        "source_run_id": run_id,
        "source_dataset": dataset_path,
        "source_dataset_hash": dataset_hash,
        "corrections": [{"field": e.field, "before": e.before, "after": e.after, "edited_by": e.editor,
                         "edited_at": iso_time(e.edited_at)} for e in edits],
    }
    return corrected.model_copy(update={"metadata": metadata})
