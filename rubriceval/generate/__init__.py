"""Build test sets from documents: chunk them, have a judge write Q/A pairs, keep the ones a critique passes.

The generator (and with it the judge client) is imported on first use, so code that only chunks documents — like
the example RAG bot — stays light.
"""
from __future__ import annotations

from typing import Any

from rubriceval.generate.chunking import Chunk, Document, chunk_documents, load_documents, split_text

_GENERATOR_NAMES = ("CRITERIA", "CriterionScore", "DropReason", "GenerateSummary", "PairOutcome", "generate")

__all__ = ["Chunk", "Document", "chunk_documents", "load_documents", "split_text", *_GENERATOR_NAMES]


def __getattr__(name: str) -> Any:
    if name in _GENERATOR_NAMES:
        from rubriceval.generate import generator

        return getattr(generator, name)
    raise AttributeError(f"module 'rubriceval.generate' has no attribute {name!r}")
