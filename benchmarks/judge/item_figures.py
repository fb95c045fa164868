"""One judgement item's figures on labelled conversations, counted one way for every contact-centre benchmark
(contact_centre_methods.py's tables, kind_fit.py's band search): each conversation is decided violated, not, or
undecided, against its label; recall and precision on the decided ones; a silent pass is a labelled violation
decided clear."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Figures:
    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0
    undecided: int = 0
    undecided_true: int = 0          # of the undecided, labelled violations

    def add(self, violated: bool | None, labelled: bool) -> None:
        """One conversation: decided violated / not (None: undecided), against its label."""
        if violated is None:
            self.undecided += 1
            self.undecided_true += labelled
        elif labelled:
            self.tp += violated
            self.fn += not violated
        else:
            self.fp += violated
            self.tn += not violated

    @property
    def n(self) -> int:
        return self.tp + self.fp + self.fn + self.tn + self.undecided

    @property
    def silent(self) -> int:
        return self.fn

    @property
    def recall(self) -> float | None:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else None

    @property
    def precision(self) -> float | None:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else None

    @property
    def undecided_share(self) -> float | None:
        return self.undecided / self.n if self.n else None
