"""`rubriceval trend`: figures per period and segment with CIs, the change against the previous period with an
unpaired test (series.py), text/HTML/Excel (render.py), and the gate on a drop (gate.py)."""
