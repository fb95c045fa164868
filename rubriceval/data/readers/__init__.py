"""Readers of what production systems emit, each turning one export format into Conversations whose metadata
follows data/metadata.py: otel.py (OTLP/JSON GenAI spans), langfuse.py (Langfuse trace and session exports);
formats.py tells them apart. Flat chat-log exports are read by data/chatlog.py, question/answer datasets and
conversation JSONL by data/io.py."""
