"""The report's side of the one catalogue: it lives in `rubriceval.i18n` (report, audit app and evidence share it);
these names stay importable from here."""
from __future__ import annotations

from rubriceval.i18n import LANGS, Lang, check_lang, detect_language, format_number, format_percent, t  # noqa: F401
from rubriceval.i18n.catalogue import MESSAGES  # noqa: F401
from rubriceval.i18n.report_text import CHECK_ACTIONS, FINDING_TEXT, GENERIC_CHECK_ACTION, UNSCORED_ACTIONS  # noqa: F401
