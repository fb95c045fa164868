"""What the HTML report shows of conversations: the per-conversation table, a chart per rubric of where in
conversations its rules fail, and the transcript of a conversation example (instead of its first question and last
answer). Values only: the templates (`_conversations.j2`, `_parts.j2`) escape every text."""
from __future__ import annotations

from typing import Any

from rubriceval.core.verdict import Verdict
from rubriceval.data.sample import Sample
from rubriceval.report.conversation_stream import ConversationSections
from rubriceval.report.conversations import POSITION_BUCKETS, ConversationReport, failing_turns, rubric_names
from rubriceval.report.run_data import RunData

TURN_PREVIEW_CHARS = 400


def _preview(text: str) -> str:
    return text if len(text) <= TURN_PREVIEW_CHARS else text[:TURN_PREVIEW_CHARS - 1] + "…"


def example_transcript(sample: Sample | None, verdict: Verdict) -> list[dict[str, Any]] | None:
    """The numbered turns of a conversation example, the ones where this verdict failed marked; None for a
    single-turn sample."""
    if sample is None or sample.conversation is None:
        return None
    failing: dict[int, list[str]] = {}
    for turn, e in failing_turns(verdict):
        failing.setdefault(turn, []).append(e.item)
    return [{"number": n, "role": turn.role, "content": _preview(turn.content),
             "tool_calls": [call.signature() for call in turn.tool_calls], "n_contexts": len(turn.contexts),
             "failing": list(dict.fromkeys(failing.get(n, [])))}
            for n, turn in sample.conversation.numbered()]


def position_charts(report: ConversationReport | ConversationSections, names: dict[str, str]
                    ) -> list[dict[str, Any]]:
    """One column chart per rubric that fails somewhere: failing turns per relative-position bucket."""
    from rubriceval.report.charts import column_chart

    return [{"scorer": p.scorer, "name": names.get(p.scorer, p.scorer), "total": sum(p.by_bucket),
             "n_conversations": p.n_conversations_failing, "by_turn": sorted(p.by_turn.items()),
             "chart": column_chart(list(POSITION_BUCKETS), p.by_bucket, [False] * len(p.by_bucket), width=300,
                                   height=130)}
            for p in report.positions if sum(p.by_bucket)]


def conversation_context(data: RunData) -> dict[str, Any] | None:
    """The report's conversation section, or None when the run has no conversation samples."""
    report = data.conversation_sections          # streamed: the table's rows are read as the template renders them
    if report.empty:
        return None
    names = rubric_names(data.scorers)
    summaries = {s.scorer: s for s in data.summary.rubrics}
    return {"rows": report.rows, "rubrics": [(r, names.get(r, r), summaries.get(r)) for r in report.rubrics],
            "charts": position_charts(report, names), "buckets": list(POSITION_BUCKETS)}
