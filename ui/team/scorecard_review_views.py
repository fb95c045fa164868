"""What the team app's scorecard review tab shows: the views shared with the audit app (ui/common/scorecard_view.py),
named here for the team app's modules."""
from __future__ import annotations

from rubriceval.ui.common.scorecard_view import item_choices, verdict_html, verdict_key, verdicts_frame

__all__ = ["item_choices", "verdict_html", "verdict_key", "verdicts_frame"]
