"""The one defusing step for untrusted text on its way into a judge prompt (the prompt environment's `fence`)."""
from __future__ import annotations

from typing import Any

from rubriceval.safety.control_tokens import neutralise_control_tokens
from rubriceval.safety.delimiters import neutralise_delimiters
from rubriceval.safety.result_markers import neutralise_result_markers


def neutralise_untrusted(text: Any) -> str:
    """Control-token and delimiter look-alikes defused; everything else shown as written. Idempotent."""
    return neutralise_delimiters(neutralise_control_tokens(str(text)))


def fence_untrusted(text: Any) -> str:
    """What a prompt shows of untrusted text: defused as above, and the judge's own result markers (`[RESULT]`,
    reply-schema JSON keys) defused too (rubriceval/safety/result_markers.py). Not for echoing the judge's own reply
    back to it in a re-ask: that reply may carry its markers."""
    return neutralise_result_markers(neutralise_untrusted(text))
