"""A conversation as a chat transcript for the audit app: user and agent bubbles, tool calls and tool results folded
in <details>, each turn's retrieved contexts one click away, and the turns the judge or a check cites highlighted.

What marks a turn:
* a check's evidence naming the turn (cross-turn and per-turn checks): red when it failed, green when it passed,
  with the quoted span marked inside the bubble;
* a per-turn judge score (scope assistant_turn): shown on the bubble, red when below the rubric's threshold;
* the judge's feedback citing the turn ("第3轮", "turn 3", "[3]"), for rubrics scored on the whole conversation;
* the experts' turn-level verdicts, with their reasons.

Every piece of conversation, tool, context, feedback or expert text is untrusted and goes through html.escape
(`ui.common.item_view.esc`); no script runs in the view (folding is plain <details>), so nothing in a transcript can
execute or restyle the app.
"""
from __future__ import annotations

import json
from collections.abc import Sequence

from pydantic import BaseModel, Field

from rubriceval import AuditStore, Conversation, Evidence, Turn, Verdict
from rubriceval.i18n import Lang, evidence_text, t
from rubriceval.report.conversations import feedback_turns
from rubriceval.store.audit_models import AuditItem
from rubriceval.store.turn_audit import ExpertTurnVerdict
from rubriceval.ui.common.item_view import esc, highlight_spans, paragraph_html

TRANSCRIPT_CSS = """
.transcript { display: flex; flex-direction: column; gap: 0.45rem; }
.transcript .cite-summary { font-size: 0.85rem; opacity: 0.85; }
.turn-row { display: flex; }
.turn-row.from-user { justify-content: flex-start; }
.turn-row.from-assistant, .turn-row.from-tool { justify-content: flex-end; }
.turn-row.from-system { justify-content: center; }
.bubble { max-width: 82%; padding: 0.4rem 0.6rem; border-radius: 10px; border: 1px solid var(--border-color-primary);
  background: var(--block-background-fill); }
.from-user .bubble { background: #eef2f7; color: #111827; border-top-left-radius: 2px; }
.from-assistant .bubble { background: #e7f5ee; color: #111827; border-top-right-radius: 2px; }
.from-tool .bubble, .from-system .bubble { background: #f7f3e8; color: #111827; font-size: 0.88rem; }
.bubble.cited { box-shadow: 0 0 0 3px #f59e0b; }
.bubble.cite-ok { box-shadow: 0 0 0 3px #16a34a; }
.bubble.cite-fail { box-shadow: 0 0 0 3px #dc2626; }
.turn-head { font-size: 0.78rem; opacity: 0.8; margin-bottom: 0.15rem; }
.turn-no { font-weight: 700; margin-right: 0.25rem; }
.turn-badge { display: inline-block; margin-left: 0.3rem; padding: 0 0.35rem; border-radius: 4px; font-size: 0.75rem;
  background: #e5e7eb; color: #111827; }
.turn-badge.fail { background: #fecaca; color: #7f1d1d; }
.turn-badge.ok { background: #bbf7d0; color: #14532d; }
.turn-badge.expert { background: #dbeafe; color: #1e3a8a; }
.turn-cites { margin: 0.3rem 0 0 0; padding-left: 1rem; font-size: 0.82rem; }
.turn-cites li.fail { color: #991b1b; }
.turn-cites li.ok { color: #166534; }
.bubble details { margin-top: 0.25rem; font-size: 0.85rem; }
.bubble details pre { white-space: pre-wrap; word-break: break-word; margin: 0.2rem 0; font-size: 0.8rem; }
.bubble details summary { cursor: pointer; }
"""


class Citation(BaseModel):
    """Why a turn is marked: a check's evidence, the judge's score for the turn, or the judge's feedback."""

    source: str                    # check item id, or the judge item
    passed: bool | None = None
    text: str = ""
    score: float | None = None


class TurnMarks(BaseModel):
    citations: list[Citation] = Field(default_factory=list)
    evidence: list[Evidence] = Field(default_factory=list)       # spans to mark inside the turn's text

    @property
    def state(self) -> str:
        """The bubble's highlight: fail beats judge citation beats pass; '' when nothing cites the turn."""
        cites = [c for c in self.citations if not (c.score is not None and c.passed)]   # passing turn scores: quiet
        if any(c.passed is False for c in cites):
            return "cite-fail"
        if any(c.passed is None for c in cites):
            return "cited"
        return "cite-ok" if cites else ""


def turn_marks(verdict: Verdict | None, conversation: Conversation, lang: Lang) -> dict[int, TurnMarks]:
    """Turn number → what cites it in this verdict."""
    marks: dict[int, TurnMarks] = {}
    if verdict is None:
        return marks
    n_turns = len(conversation.turns)
    for e in verdict.evidence:
        if e.turn is None or not 1 <= e.turn <= n_turns:
            continue
        mark = marks.setdefault(e.turn, TurnMarks())
        text = t("cv_judge_turn_score", lang, score=f"{e.score:g}") if e.score is not None else evidence_text(e, lang)
        if e.score is not None and e.detail:
            text += f" — {e.detail}"
        mark.citations.append(Citation(source=e.item, passed=e.passed, text=text, score=e.score))
        mark.evidence.append(e)
    # Per-turn scores are the judge's own citations; only a whole-conversation feedback is searched for turn numbers.
    # The judge items' own feedback, not the verdict's, which also repeats the failed checks' turns.
    judge_feedback = "\n".join(e.detail for e in verdict.evidence if e.turn is None and e.score is not None)
    if not any(e.turn is not None and e.score is not None for e in verdict.evidence):
        for turn in feedback_turns(judge_feedback or verdict.feedback, n_turns):
            marks.setdefault(turn, TurnMarks()).citations.append(
                Citation(source="judge", text=t("cv_cited_by_feedback", lang)))
    return marks


def _tool_calls(turn: Turn, lang: Lang) -> str:
    parts = []
    for call in turn.tool_calls:
        arguments = json.dumps(call.arguments, ensure_ascii=False, indent=1)
        parts.append(f'<details class="tool-call"><summary>{esc(t("cv_tool_call", lang))} <code>{esc(call.name)}'
                     f'</code></summary><pre>{esc(arguments)}</pre></details>')
    return "".join(parts)


def _contexts(turn: Turn, lang: Lang) -> str:
    if not turn.contexts:
        return ""
    items = "".join(f"<li>{paragraph_html(text)}</li>" for text in turn.contexts)
    return (f'<details class="turn-contexts"><summary>{esc(t("cv_turn_contexts", lang, n=len(turn.contexts)))}'
            f'</summary><ol>{items}</ol></details>')


def _badges(mark: TurnMarks, verdicts: Sequence[ExpertTurnVerdict]) -> str:
    out = []
    for c in mark.citations:
        if c.score is not None:
            out.append(f'<span class="turn-badge {"fail" if c.passed is False else "ok"}" title="{esc(c.source)}">'
                       f'{c.score:g}/5</span>')
    for v in verdicts:
        out.append(f'<span class="turn-badge expert" title="{esc(v.reason)}">{esc(v.expert)} {v.score}/5</span>')
    return "".join(out)


def _cites(mark: TurnMarks, verdicts: Sequence[ExpertTurnVerdict], lang: Lang) -> str:
    rows = []
    for c in mark.citations:
        state = "fail" if c.passed is False else "ok" if c.passed else ""
        sign = "✗ " if c.passed is False else "✓ " if c.passed else ""
        rows.append(f'<li class="{state}">{sign}<code>{esc(c.source)}</code> {paragraph_html(c.text)}</li>')
    for v in verdicts:
        said = t("cv_expert_turn_score", lang, expert=v.expert, score=v.score)
        rows.append(f'<li class="expert">{esc(said)}' + (f" — {paragraph_html(v.reason)}" if v.reason else "") + "</li>")
    return f'<ul class="turn-cites">{"".join(rows)}</ul>' if rows else ""


def _bubble(number: int, turn: Turn, mark: TurnMarks, verdicts: Sequence[ExpertTurnVerdict], lang: Lang) -> str:
    role = t(f"cv_role_{turn.role}", lang)
    speaker = f" · {esc(turn.speaker)}" if turn.speaker else ""
    call_id = f" <code>{esc(turn.tool_call_id)}</code>" if turn.tool_call_id else ""
    head = (f'<div class="turn-head"><span class="turn-no">[{number}]</span>{esc(role)}{speaker}{call_id}'
            f"{_badges(mark, verdicts)}</div>")
    if turn.role == "tool":        # a tool result is machine output: folded, like the call that asked for it
        body = f'<details class="tool-result"><summary>{esc(role)}</summary><pre>{esc(turn.content)}</pre></details>'
    elif turn.content:
        body = f'<div class="turn-text">{highlight_spans(turn.content, mark.evidence)}</div>'
    else:
        body = "" if turn.tool_calls else f'<div class="turn-text"><i>{esc(t("cv_empty_turn", lang))}</i></div>'
    body += _tool_calls(turn, lang) + _contexts(turn, lang) + _cites(mark, verdicts, lang)
    state = mark.state or ("cited" if verdicts else "")
    return (f'<div class="turn-row from-{turn.role}" id="turn-{number}" data-turn="{number}">'
            f'<div class="bubble {turn.role} {state}">{head}{body}</div></div>')


def transcript_html(conversation: Conversation, verdict: Verdict | None, lang: Lang,
                    turn_verdicts: Sequence[ExpertTurnVerdict] = (), marks: dict[int, TurnMarks] | None = None,
                    summary: bool = True) -> str:
    """The whole conversation as bubbles, with the turns this verdict cites marked and the experts' turn verdicts.
    `marks`: what cites each turn when it is not a rubric verdict (a scorecard's deductions, scorecard_view.py).
    `summary=False` leaves out the line naming the cited turns (a blind view, or one with no verdict to cite)."""
    marks = turn_marks(verdict, conversation, lang) if marks is None else marks
    by_turn: dict[int, list[ExpertTurnVerdict]] = {}
    for v in turn_verdicts:
        by_turn.setdefault(v.turn, []).append(v)
    cited = [n for n, m in sorted(marks.items()) if m.state]
    links = "、".join(f'<a href="#turn-{n}">{n}</a>' for n in cited) if lang == "zh" else ", ".join(
        f'<a href="#turn-{n}">{n}</a>' for n in cited)
    line = (t("cv_cited_turns", lang, turns=links) if cited else esc(t("cv_no_cited_turns", lang)))
    bubbles = "".join(_bubble(n, turn, marks.get(n, TurnMarks()), by_turn.get(n, []), lang)
                      for n, turn in conversation.numbered())
    return (f'<div class="transcript" data-conversation="{esc(conversation.id)}">'
            + (f'<div class="cite-summary">{line}</div>' if summary else "") + f'{bubbles}</div>')


def item_lang(item: AuditItem) -> Lang:
    """The catalogue's rule when the app names no language: the data's language."""
    return "zh" if item.sample.language == "zh" else "en"


def conversation_panel(item: AuditItem, lang: Lang, turn_verdicts: Sequence[ExpertTurnVerdict] = ()) -> str:
    """The left pane of the audit item for a conversation: meta line, transcript, expected outcome. The panel names
    its item (data-item), so opening another rubric on the same conversation always changes the HTML."""
    sample = item.sample
    conversation = sample.conversation
    assert conversation is not None
    meta = (f'<div class="audit-meta">{esc(item.run_name)} · <code>{esc(sample.id)}</code> · '
            f'{esc(t("cv_turns", lang))} {len(conversation.turns)}'
            + (f" · <b>{esc(sample.intent)}</b>" if sample.intent else "")
            + "".join(f' <span class="tag">{esc(tag)}</span>' for tag in sample.tags) + "</div>")
    parts = [meta, f'<section class="audit-sec"><h4>{esc(t("cv_transcript", lang))}</h4>'
                   f"{transcript_html(conversation, item.verdict, lang, turn_verdicts)}</section>"]
    if conversation.reference_outcome:
        parts.append(f'<section class="audit-sec"><h4>{esc(t("ground_truth", lang))}</h4>'
                     f'<div class="audit-body">{paragraph_html(conversation.reference_outcome)}</div></section>')
    return (f'<div class="audit-panel conversation-panel" data-item="{esc(sample.id)}|{esc(item.verdict.scorer)}">'
            f'{"".join(parts)}</div>')


def item_conversation_panel(store: AuditStore, item: AuditItem, lang: Lang | None = None) -> str:
    """conversation_panel of an opened item with the experts' turn verdicts read from the store, in the app's
    language (else the data's)."""
    verdicts = store.turn_verdicts(item.run_id, sample_id=item.sample.id, scorer=item.verdict.scorer)
    return conversation_panel(item, lang or item_lang(item), verdicts)
