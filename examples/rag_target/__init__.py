"""Example target for `rubriceval collect`: a small BM25 customer-service RAG bot over docs/ (see bot.py)."""
