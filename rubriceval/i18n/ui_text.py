"""Audit app wording (labels, buttons, status lines, validation messages) in Chinese and English; part of the one
catalogue (`rubriceval.i18n`)."""
from __future__ import annotations

UI_TEXT: dict[str, dict[str, str]] = {
}
