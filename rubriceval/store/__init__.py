"""Stage 5 — the store: runs, datasets, verdicts, audits, team reviews, appeals and official scores on SQLite or
PostgreSQL (db.py says what differs). Append-only where people decide; official scores are derived, never
overwritten."""
from rubriceval.store.runs import RunConfig, RunInfo, RunStore

__all__ = ['RunStore', 'RunConfig', 'RunInfo']
