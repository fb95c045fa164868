"""What a run needs to know about its dataset before judging, gathered while the dataset streams into the store
(one reading of the file): which rubrics apply to some sample, one sample of each kind (single-turn,
conversation) for the metrics' scope, and the dataset hash of the run config."""
from __future__ import annotations

import hashlib

from rubriceval.data.sample import Sample
from rubriceval.rubric.applies import applies
from rubriceval.rubric.schema import Rubric


class DatasetScan:
    def __init__(self, rubrics: list[Rubric]):
        self._waiting = list(rubrics)           # rubrics not yet seen to apply (each is checked until it does)
        self.applied: set[str] = set()
        self.examples: dict[bool, Sample] = {}  # first sample of each kind (is a conversation → sample)
        self._hash = hashlib.sha256()

    def observe(self, sample: Sample, input_hash: str) -> None:
        self._hash.update(input_hash.encode())
        self.examples.setdefault(sample.conversation is not None, sample)
        if self._waiting:
            found = [r for r in self._waiting if applies(r, sample)]
            if found:
                self.applied.update(r.id for r in found)
                self._waiting = [r for r in self._waiting if r.id not in self.applied]

    @property
    def dataset_hash(self) -> str:
        """Hash of the samples' input hashes in order (what RunConfig.dataset_hash has always been)."""
        return self._hash.hexdigest()[:16]

    def unused_rubrics(self, rubrics: list[Rubric]) -> list[str]:
        return [r.id for r in rubrics if r.id not in self.applied]
