"""Jinja2 prompt templates and few-shot examples of the metric judge calls, zh and en.

Search path: `MetricOptions.template_dir` (or $RUBRICEVAL_METRIC_TEMPLATES) first, then the built-in
`standard_metrics/templates/`. A team replaces one prompt by dropping `<dir>/zh/judge_contexts.j2` there, or
only the examples by dropping `<dir>/zh/examples.yaml`; everything else keeps coming from the built-ins.
"""
from __future__ import annotations

import hashlib
import json
import os
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

import jinja2
import yaml

from rubriceval.errors import ConfigError

BUILTIN_DIR = Path(__file__).parent / "templates"
TEMPLATE_DIR_ENV = "RUBRICEVAL_METRIC_TEMPLATES"
CALL_TEMPLATES = ("extract_statements", "reverse_questions", "judge_contexts", "classify_statements",
                  "answer_validity", "context_usefulness")


def fence(value: Any) -> str:
    """Neutralise delimiter look-alikes inside untrusted text so it cannot close its own block."""
    return str(value).replace("<<<", "‹‹‹").replace(">>>", "›››")


def _tojson(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


class PromptLibrary:
    """Renders the messages of one judge call: a short system message and the task as the user message."""

    def __init__(self, template_dir: str | None = None):
        self.template_dir = template_dir
        if self.template_dir and not Path(self.template_dir).is_dir():
            raise ConfigError("metric template folder not found", file=self.template_dir,
                              hint="template_dir must hold zh/ and/or en/ subfolders with .j2 or examples.yaml")
        search = [self.template_dir, str(BUILTIN_DIR)] if self.template_dir else [str(BUILTIN_DIR)]
        self.loader = jinja2.FileSystemLoader(search)
        self.env = jinja2.Environment(loader=self.loader, undefined=jinja2.StrictUndefined, autoescape=False,
                                      trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=False)
        self.env.filters["fence"] = fence
        self.env.filters["tojson"] = _tojson
        self._examples: dict[str, dict] = {}
        self._fingerprints: dict[str, str] = {}

    def _source(self, name: str) -> str:
        source, _filename, _uptodate = self.loader.get_source(self.env, name)
        return source

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
                                  file=self.loader.get_source(self.env, name)[1],
                                  hint="copy the built-in examples.yaml and edit the values, not the keys")
            self._examples[lang] = data
        return self._examples[lang]

    def render(self, call: str, lang: str, **variables: Any) -> list[dict[str, str]]:
        system = self.env.get_template(f"{lang}/system.j2").render().strip()
        user = self.env.get_template(f"{lang}/{call}.j2").render(**variables).strip()
        return [{"role": "system", "content": system}, {"role": "user", "content": user}]

    def render_text(self, name: str, lang: str, **variables: Any) -> str:
        return self.env.get_template(f"{lang}/{name}.j2").render(**variables).strip()

    def fingerprint(self, lang: str) -> str:
        """Hash of every template and example this language uses: part of each LLM metric's version."""
        if lang not in self._fingerprints:
            digest = hashlib.sha256()
            names = ["_macros.j2", f"{lang}/system.j2", f"{lang}/reask.j2", f"{lang}/examples.yaml"]
            names += [f"{lang}/{call}.j2" for call in CALL_TEMPLATES]
            for name in names:
                digest.update(name.encode())
                digest.update(self._source(name).encode())
            self._fingerprints[lang] = digest.hexdigest()[:10]
        return self._fingerprints[lang]


def prompt_library(template_dir: str | None = None) -> PromptLibrary:
    """The library for a folder (None → $RUBRICEVAL_METRIC_TEMPLATES, else built-ins only), built once."""
    return _library(template_dir or os.environ.get(TEMPLATE_DIR_ENV) or None)


@lru_cache(maxsize=8)
def _library(template_dir: str | None) -> PromptLibrary:
    return PromptLibrary(template_dir)
