"""A draft rubric proposed by the judge from a service procedure (SOP) a lead pastes or uploads.

The document is untrusted: it reaches the judge fenced inside the one sandboxed prompt environment, never as
template code, and the reply is read against a JSON schema into the studio's form — a proposal the lead edits,
validates and tries; nothing is saved unseen. Asked through the one judge path (judge/ask.py): cached, counted,
re-asked once when the reply cannot be read, unscored with the reason when it still cannot.
"""
from __future__ import annotations

import re
from pathlib import Path

from rubriceval.common.errors import RubricEvalError
from rubriceval.judge.ask import Asked, JudgeRequest, TemplateReask, ask, json_reader
from rubriceval.prompt.compile import reask_template
from rubriceval.prompt.environment import prompt_environment, render_messages
from rubriceval.studio.form import CHECK_FIELDS, CheckSpec, RubricForm

TEMPLATE_DIR = Path(__file__).parent / "templates"
MAX_DOCUMENT_CHARS = 12_000        # a procedure, not a manual: longer texts are cut (and the cut is said)
_PHRASE_LISTS = {"type": "array", "items": {"type": "object", "properties": {
    "id": {"type": "string"}, "phrases": {"type": "array", "items": {"type": "string"}}}, "required": ["id", "phrases"]}}
DRAFT_SCHEMA = {
    "type": "object",
    "properties": {
        "id": {"type": "string"}, "name": {"type": "string"}, "criterion": {"type": "string"},
        "levels": {"type": "object", "properties": {str(k): {"type": "string"} for k in range(1, 6)},
                   "required": [str(k) for k in range(1, 6)]},
        "questions": {"type": "array", "items": {"type": "object", "properties": {
            "id": {"type": "string"}, "ask": {"type": "string"}}, "required": ["id", "ask"]}},
        # one list per kind, named for what it holds: a small judge asked for {type: …} per check wrote the forbidden
        # phrases of an SOP as must_mention
        "required_phrases": _PHRASE_LISTS, "forbidden_phrases": _PHRASE_LISTS,
        "required_links": {"type": "array", "items": {"type": "object", "properties": {
            "id": {"type": "string"}, "url": {"type": "string"}}, "required": ["id", "url"]}},
    },
    "required": ["id", "name", "criterion", "levels", "questions", "required_phrases", "forbidden_phrases",
                 "required_links"],
}


def read_document(path: str | Path) -> str:
    """The text of an uploaded .md/.txt/.docx (a .docx's paragraphs, read with python-docx when installed)."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix in (".md", ".txt", ".markdown"):
        return path.read_text(encoding="utf-8", errors="replace")
    if suffix == ".docx":
        try:
            import docx  # type: ignore[import-not-found]
        except ImportError:
            raise RubricEvalError("reading .docx needs python-docx", file=str(path),
                                  hint="pip install python-docx, or paste the text") from None
        return "\n".join(p.text for p in docx.Document(str(path)).paragraphs)
    raise RubricEvalError(f"cannot read {suffix or 'this file'}: upload .md, .txt or .docx", file=str(path))


def _slug(text: str) -> str:
    slug = re.sub(r"[^a-z0-9_]+", "_", text.lower()).strip("_")
    return slug[:40] or "drafted_rubric"


def _check(data: dict) -> tuple[RubricForm | None, list[str]]:
    levels = data.get("levels") or {}
    missing = [k for k in map(str, range(1, 6)) if not str(levels.get(k, "")).strip()]
    if not str(data.get("criterion", "")).strip() or missing:
        return None, [f"the draft lacks a criterion or level descriptions {missing}"]
    listed = [("must_mention", c, c.get("phrases")) for c in data.get("required_phrases") or []]
    listed += [("must_not_mention", c, c.get("phrases")) for c in data.get("forbidden_phrases") or []]
    listed += [("required_link", c, [c.get("url")]) for c in data.get("required_links") or []]
    checks: list[CheckSpec] = []
    for number, (kind, check, values) in enumerate(listed, start=1):
        values = [str(v).strip() for v in values or [] if v is not None and str(v).strip()]
        check_id = _slug(str(check.get("id", ""))) if isinstance(check, dict) else ""
        if kind in CHECK_FIELDS and values and "\n" not in "".join(values):
            check_id = check_id if check_id != "drafted_rubric" else f"check_{number}"
            while any(c.id == check_id for c in checks):
                check_id = f"{check_id}_{number}"
            checks.append(CheckSpec(id=check_id, type=kind, values=values[:1] if kind == "required_link" else values))
    questions = [(_slug(str(q.get("id", ""))) or f"q{i}", str(q.get("ask", "")).strip())
                 for i, q in enumerate(data.get("questions") or []) if str(q.get("ask", "")).strip()]
    return RubricForm(id=_slug(str(data.get("id", ""))), name=str(data.get("name", "")).strip(),
                      criterion=str(data["criterion"]).strip(),
                      levels={k: str(levels[str(k)]).strip() for k in range(1, 6)},
                      questions=questions, checks=checks), []


async def draft_from_document(document: str, judge, lang: str = "zh") -> tuple[RubricForm | None, Asked]:
    """The judge's proposal for the form (None, with the reason in `Asked`, when it gave none usable)."""
    text = document.strip()
    if not text:
        raise RubricEvalError("paste or upload the procedure to draft from", field="document")
    cut = len(text) > MAX_DOCUMENT_CHARS
    messages = render_messages(prompt_environment(TEMPLATE_DIR), lang, "draft_rubric", system=None,
                               document=text[:MAX_DOCUMENT_CHARS])
    request = JudgeRequest(messages=messages, json_schema=DRAFT_SCHEMA, schema_name="rubric_draft",
                           cache_tag="studio.draft.v2")
    reask = TemplateReask(template=reask_template(lang), variables={"structured": True})
    asked = await ask(judge, request, json_reader(_check), reask=reask)
    form = asked.value if asked.ok else None
    if form is not None:
        form.language = "zh" if lang == "zh" else "en"
        if cut:
            form.description = (f"起草自文档的前 {MAX_DOCUMENT_CHARS} 个字符" if lang == "zh"
                                else f"drafted from the first {MAX_DOCUMENT_CHARS} characters of the document")
    return form, asked
