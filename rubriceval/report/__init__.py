"""Stage 6 — reports: a stored run's summary (computed in SQL), Markdown/HTML/Excel reports, diagnosis, run-to-run
comparison and the CI gate. Reads the store; never judges."""
