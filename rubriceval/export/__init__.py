"""Verdicts written back where people look: OpenTelemetry `gen_ai.evaluation.result` events (otel.py) and
Langfuse score records (langfuse.py), each a file; `rubriceval export otel|langfuse RUN --out FILE`."""
