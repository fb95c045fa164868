"""Embeddings through one interface: hosted OpenAI-compatible endpoints or the embedded local model."""
from rubriceval.embed.client import (
                                     BackendBatch,
                                     BackendError,
                                     EmbeddingBackend,
                                     EmbeddingClient,
                                     EmbeddingResponse,
                                     EmbedStats,
                                     OpenAIEmbeddingBackend,
)
from rubriceval.embed.config import EmbedderConfig, load_embedder_config

__all__ = ["BackendBatch", "BackendError", "EmbedderConfig", "EmbeddingBackend", "EmbeddingClient", "EmbeddingResponse",
           "EmbedStats", "OpenAIEmbeddingBackend", "load_embedder_config"]
