"""Jinja2 prompt templates and few-shot examples of the metric judge calls, zh and en.

Search path: `MetricOptions.template_dir` (or $RUBRICEVAL_METRIC_TEMPLATES) first, then the built-in
`standard_metrics/templates/`. A team replaces one prompt by dropping `<dir>/zh/judge_contexts.j2` there, or
only the examples by dropping `<dir>/zh/examples.yaml`; everything else keeps coming from the built-ins.
"""
from __future__ import annotations

import os
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

import jinja2
import yaml

from rubriceval.common.errors import ConfigError
from rubriceval.prompt.environment import prompt_environment, render_messages, template_source, templates_fingerprint

BUILTIN_DIR = Path(__file__).parent / "templates"
TEMPLATE_DIR_ENV = "RUBRICEVAL_METRIC_TEMPLATES"
CALL_TEMPLATES = ("extract_statements", "reverse_questions", "judge_contexts", "classify_statements",
                  "answer_validity", "context_usefulness")


class PromptLibrary:
    """Renders the messages of one judge call: `<lang>/system.j2` as the system message and the task
    (`<lang>/<call>.j2`) as the user message, through the one prompt environment."""

    def __init__(self, template_dir: str | None = None):
        self.template_dir = template_dir
        if self.template_dir and not Path(self.template_dir).is_dir():
            raise ConfigError("metric template folder not found", file=self.template_dir,
                              hint="template_dir must hold zh/ and/or en/ subfolders with .j2 or examples.yaml")
        self.env = prompt_environment(self.template_dir, BUILTIN_DIR)
        self._examples: dict[str, dict] = {}
        self._fingerprints: dict[str, str] = {}

    def _source(self, name: str) -> str:
        return template_source(self.env, name)[0]

    def examples(self, lang: str, check: Callable[[dict, str], list[str]] | None = None) -> dict:
        """The few-shot examples of a language; `check(data, lang)` lists shape problems (→ ConfigError)."""
        if lang not in self._examples:
            name = f"{lang}/examples.yaml"
            try:
                data = yaml.safe_load(self._source(name)) or {}
            except yaml.YAMLError as exc:
                raise ConfigError(f"invalid YAML in few-shot examples: {exc}", file=name) from None
            problems = check(data, lang) if check else []
            if problems:
                raise ConfigError("few-shot examples do not have the expected shape: " + "; ".join(problems[:5]),
                                  file=template_source(self.env, name)[1],
                                  hint="copy the built-in examples.yaml and edit the values, not the keys")
            self._examples[lang] = data
        return self._examples[lang]

    def render(self, call: str, lang: str, **variables: Any) -> list[dict[str, str]]:
        return render_messages(self.env, lang, call, **variables)

    def template(self, name: str, lang: str) -> jinja2.Template:
        return self.env.get_template(f"{lang}/{name}.j2")

    def fingerprint(self, lang: str) -> str:
        """Hash of every template and example this language uses: part of each LLM metric's version."""
        if lang not in self._fingerprints:
            names = ["_macros.j2", f"{lang}/system.j2", f"{lang}/reask.j2", f"{lang}/examples.yaml"]
            names += [f"{lang}/{call}.j2" for call in CALL_TEMPLATES]
            self._fingerprints[lang] = templates_fingerprint(self.env, names)
        return self._fingerprints[lang]


def prompt_library(template_dir: str | None = None) -> PromptLibrary:
    """The library for a folder (None → $RUBRICEVAL_METRIC_TEMPLATES, else built-ins only), built once."""
    return _library(template_dir or os.environ.get(TEMPLATE_DIR_ENV) or None)


@lru_cache(maxsize=8)
def _library(template_dir: str | None) -> PromptLibrary:
    return PromptLibrary(template_dir)
