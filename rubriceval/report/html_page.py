"""The HTML page of a run's report: one template environment for the page and every section template, with the
page's globals (language, run header, generation time). Every text is autoescaped by the templates; a section's
HTML reaches the page as markup only from here."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from markupsafe import Markup

from rubriceval.report.html_env import template_env

if TYPE_CHECKING:
    from rubriceval.report.compose import ReportInputs


class HtmlPage:
    def __init__(self, inputs: ReportInputs):
        from rubriceval.report.compose import page_globals

        self.inputs = inputs
        self.env = template_env()
        self.globals = page_globals(inputs)

    def render(self, template: str, **values: Any) -> str:
        return self.env.get_template(template).render(**self.globals, **values)

    def section(self, template: str, values: dict[str, Any]) -> Markup:
        """A section template (templates/sections/…) rendered with the page's globals and the section's values."""
        return Markup(self.render(template, **values))

    @staticmethod
    def part(html: str) -> Markup:
        """A section as the page places it: ending in one newline (the page puts a blank line between sections)."""
        return Markup(html.rstrip("\n") + "\n")
