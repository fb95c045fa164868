"""Stage 2 — compiled prompts: a rubric and a sample become the judge's messages, through the one sandboxed Jinja
environment (environment.py); answers and transcripts enter as fenced data, never as template code."""
