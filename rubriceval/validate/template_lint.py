"""Lint for criterion text that is template source (the rubric's and every judge or checklist item's own).

Each one is parsed, its names checked, and then rendered in the prompt sandbox exactly as compile and run render
it, with a placeholder sample: an unsafe expression (`{{ sample.__class__.__mro__ }}`) fails `validate`, not only
the run. Checklist question text is never template source (the prompt shows it as a value), so it is not rendered.
"""
from __future__ import annotations

from rubriceval.data.conversation import Conversation, Turn
from rubriceval.data.sample import Sample
from rubriceval.prompt.compile import CRITERION_VARIABLES, criterion_placeholders
from rubriceval.prompt.environment import PromptTemplateError, TextOrigin, is_template_source, render_untrusted_source
from rubriceval.rubric.schema import ChecklistItem, JudgeItem, Rubric

PLACEHOLDER = "…"


class _AnyKey(dict):
    """Metadata holding every key a criterion may read: datasets differ in what they carry."""

    def __missing__(self, key: str) -> str:
        return PLACEHOLDER


def placeholder_sample() -> Sample:
    """A sample with every field filled, built without validation so its metadata answers any key."""
    turns = [Turn(role="user", content=PLACEHOLDER), Turn(role="assistant", content=PLACEHOLDER)]
    return Sample.model_construct(
        id="placeholder", question=PLACEHOLDER, answer=PLACEHOLDER, contexts=[PLACEHOLDER],
        ground_truth=PLACEHOLDER, reference_contexts=[PLACEHOLDER], tags=[PLACEHOLDER], intent=PLACEHOLDER,
        metadata=_AnyKey(), conversation=Conversation(id="placeholder", turns=turns))


def criterion_texts(rubric: Rubric) -> list[tuple[tuple, str]]:
    """(field path, text) of every criterion a prompt renders."""
    texts: list[tuple[tuple, str]] = [(("criterion",), rubric.criterion)]
    texts += [(("items", index, "criterion"), item.criterion) for index, item in enumerate(rubric.items)
              if isinstance(item, (JudgeItem, ChecklistItem)) and item.criterion]
    return texts


def template_findings(rubric: Rubric) -> list[tuple]:
    """(severity, message, *field path) for criterion text the prompt sandbox would refuse or could not fill."""
    out: list[tuple] = []
    for path, text in criterion_texts(rubric):
        if not is_template_source(text):
            continue
        try:
            unknown = criterion_placeholders(text) - CRITERION_VARIABLES
        except Exception as exc:  # jinja2 TemplateSyntaxError
            out.append(("error", f"template syntax error in criterion: {exc}", *path))
            continue
        if unknown:
            out.append(("error", f"placeholder(s) {sorted(unknown)} cannot be filled; use {{{{ sample.<field> }}}}",
                        *path))
            continue
        try:     # lint names the file, line and field itself
            render_untrusted_source(text, TextOrigin(field="criterion"), sample=placeholder_sample(), rubric=rubric)
        except PromptTemplateError as exc:
            message = exc.message + (f" (hint: {exc.hint})" if exc.hint else "")
            if exc.unfilled:
                out.append(("warning", f"{message}; checked with a placeholder sample: a sample lacking this "
                            "value fails", *path))
            else:
                out.append(("error", message, *path))
    return out
