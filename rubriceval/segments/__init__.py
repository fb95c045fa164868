"""Segments (`--by agent_id,skill_group,week`): per-segment tables of a run for reports and gates (spec.py what
`--by` means, values.py which segment a sample is in, read.py the store read, table.py the tables, render.py
Markdown/HTML/Excel, gate.py per-segment gate checks)."""
