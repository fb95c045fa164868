"""Embeddings through one interface: hosted OpenAI-compatible endpoints or the embedded local model."""
from rubriceval.embed.client import (BackendBatch, BackendError, EmbeddingBackend, EmbeddingClient, EmbeddingResponse,
                                     EmbedStats, OpenAIEmbeddingBackend)

__all__ = ["BackendBatch", "BackendError", "EmbeddingBackend", "EmbeddingClient", "EmbeddingResponse", "EmbedStats",
           "OpenAIEmbeddingBackend"]
