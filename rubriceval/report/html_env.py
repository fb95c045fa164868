"""The Jinja environment of the HTML reports (autoescaped, strict), one for every page."""
from __future__ import annotations

from pathlib import Path

import jinja2

from rubriceval.i18n import (
    format_number,
    format_percent,
)

TEMPLATES = Path(__file__).parent / "templates"


def template_env() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.globals.update(fmt=format_number, pct=format_percent)
    return env
