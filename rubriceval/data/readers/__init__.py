"""Readers of what production systems emit, each turning one export format into Conversations whose metadata
follows data/metadata.py: otel.py (OTLP/JSON GenAI spans), langfuse.py (Langfuse trace and session exports).
Flat chat-log exports are read by data/chatlog.py."""
