"""The one defusing step for untrusted text on its way into a judge prompt (the prompt environment's `fence`)."""
from __future__ import annotations

from typing import Any

from rubriceval.safety.control_tokens import neutralise_control_tokens
from rubriceval.safety.delimiters import neutralise_delimiters


def neutralise_untrusted(text: Any) -> str:
    """Control-token and delimiter look-alikes defused; everything else shown as written. Idempotent."""
    return neutralise_delimiters(neutralise_control_tokens(str(text)))
