"""`rubriceval validate`: a rubric's knowledge file (`knowledge:`) must exist and read as passages, because
`unless_context` / `only_if_context`, the per-turn questions and the judge and checklist items read it as the context
a chat export lacks — a file that is missing would otherwise surface only when the first conversation is judged. The
finding names the rubric
file and the line of `knowledge:`; the message names the knowledge file (and its line, for a bad JSONL row)."""
from __future__ import annotations

from rubriceval.common.errors import RubricEvalError
from rubriceval.data.knowledge import load_knowledge
from rubriceval.rubric.schema import ChecklistItem, JudgeItem, Rubric


def knowledge_findings(rubric: Rubric) -> list[tuple]:
    """(severity, message, *field path) for a knowledge file that cannot be used."""
    if not rubric.knowledge:
        return []
    try:
        load_knowledge(rubric.knowledge, relative_to=rubric.source_file)
    except RubricEvalError as exc:
        where = (exc.file or rubric.knowledge) + (f":{exc.line}" if exc.line else "")
        where += f" [{exc.field}]" if exc.field and exc.field != "knowledge" else ""
        message = exc.message if "knowledge" in exc.message else f"knowledge file: {exc.message}"
        return [("error", f"{where}: {message} (a relative path is read beside the rubric file)", "knowledge")]
    if not any(isinstance(item, (JudgeItem, ChecklistItem)) or getattr(item, "unless_context", None)
               or getattr(item, "only_if_context", None) or getattr(getattr(item, "match", None), "ask", None)
               for item in rubric.items):
        return [("warning", "nothing reads the knowledge file: it is read by unless_context / only_if_context "
                            "and shown to per-turn questions (ask:) and to judge and checklist items", "knowledge")]
    return []
