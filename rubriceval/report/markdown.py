"""Short Markdown summary of a run for chat and CI logs, and a CJK-aware plain-text table for terminals."""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from rubriceval.common.tables import markdown_table, text_table
from rubriceval.core.verdict import Usage
from rubriceval.i18n import Lang, Message, check_lang, format_number, format_percent, resay, say, t
from rubriceval.i18n.run_report_text import NOTE_KEYS
from rubriceval.report.conversation_tables import markdown_lines as conversation_lines
from rubriceval.report.cost import RunCost, run_cost
from rubriceval.report.diagnosis import DiagnosisConfig, Finding
from rubriceval.report.failure_tags import FailureTagReport, failure_tags_markdown
from rubriceval.report.inputs import ReportInputs, read_inputs
from rubriceval.report.measured import measured_markdown
from rubriceval.report.official_figures import appeal_flag_lines, official_headline, official_note
from rubriceval.report.run_data import RunData
from rubriceval.report.sections import present
from rubriceval.report.segment_views import markdown_section as segment_markdown
from rubriceval.report.summary_models import Summary

MAX_FINDINGS_IN_MARKDOWN = 5


def summary_table(summary: Summary, lang: Lang = "en") -> str:
    """The per-scorer table for a terminal (what `rubriceval run` prints when it finishes)."""
    headers = [t("scorer", lang), t("kind", lang), t("mean", lang), t("pass_rate", lang), t("threshold", lang),
               t("n_scored", lang), t("n_unscored", lang)]
    table = text_table(headers, _scorer_rows(summary, lang, None), right_align=(2, 3, 4, 5))
    line = f"{t('business_score', lang)}: {format_number(summary.business_score, 2, lang)} / 5"
    if summary.business_score_note:
        line += f" ({resay(summary.business_score_note, lang, NOTE_KEYS)})"
    return f"{table}\n{line}"


def _scorer_rows(summary: Summary, lang: Lang, agreement: Mapping[str, Message | str] | None) -> list[list[str]]:
    rows = []
    for s in summary.scorers:
        digits = 2
        unscored = str(s.n_unscored)
        if s.unscored:
            unscored += " (" + ", ".join(f"{g.kind} {g.count}" for g in s.unscored) + ")"
        name = s.name if s.name == s.scorer else f"{s.name} ({s.scorer})"
        mean = format_number(s.mean, digits, lang)
        if s.n_human or s.n_pending:      # official score: rows people decided, rows pending review (issue 44)
            mean += f" ({official_note(s, lang, digits)})"
        row = [name, t(f"kind_{s.kind}", lang), mean,
               format_percent(s.pass_rate, lang), format_number(s.threshold, 2, lang), str(s.n_scored), unscored]
        if agreement is not None:
            row.append(say(line, lang) if (line := agreement.get(s.scorer)) is not None else "")
        rows.append(row)
    return rows


def usage_line(u: Usage, lang: Lang, cost: RunCost | None = None) -> str:
    """What a run spent, as the report and the end of `rubriceval run` both say it (summed from the stored verdicts).
    With the run's cost figures (`report/cost.py: run_cost`), the same tokens priced online and through the Batch
    API, side by side, each judge's at its own prices."""
    line = (f"{t('calls', lang)} {u.calls} · {t('cache_hits', lang)} {u.cache_hits} · "
            f"tokens {u.prompt_tokens + u.completion_tokens} · ${u.cost_usd:.4f}")
    if cost is not None and cost.total is not None:
        line += f" (online ${cost.total.online_usd:.4f} | batch API ${cost.total.batch_usd:.4f})"
    elif cost is not None:
        line += f" (online | batch API: {t('cost_not_available', lang)})"
    if u.embedding_calls or u.embedding_cache_hits:
        line += (f" · {t('embedding_calls', lang)} {u.embedding_calls} · {t('embedding_cache_hits', lang)} "
                 f"{u.embedding_cache_hits}")
    return line


def overview_lines(summary: Summary, inputs: ReportInputs) -> list[str]:
    """Title, business score, official and appeal notes, the per-scorer table, and the judge panels' agreement."""
    lang, agreement, data = inputs.lang, inputs.agreement, inputs.data
    out = [f"## {t('report_title', lang)} · {data.run_name}", ""]
    headline = [f"**{t('business_score', lang)}**: {format_number(summary.business_score, 2, lang)} / 5"]
    headline += [f"**{name}**: {format_number(mean, 2, lang)}" for name, mean in summary.rag_scores.items()]
    out += [" · ".join(headline), ""]
    if summary.business_score_note:
        out += [f"> {resay(summary.business_score_note, lang, NOTE_KEYS)}", ""]
    if official := official_headline(summary, lang):
        out += [f"> {official}", ""]
    out += [f"> ⚑ {line}" for line in appeal_flag_lines(data.appeal_flags, lang)] + (
        [""] if data.appeal_flags else [])
    headers = [t("scorer", lang), t("kind", lang), t("mean", lang), t("pass_rate", lang), t("threshold", lang),
               t("n_scored", lang), t("n_unscored", lang)]
    if agreement is not None:
        headers.append(t("agreement", lang))
    out += [markdown_table(headers, _scorer_rows(summary, lang, agreement)), ""]
    if summary.n_unscored:
        out += [f"_{t('unscored_note', lang)}_", ""]
    panels = [s for s in summary.rubrics if s.panel is not None]
    if panels:                                         # rubrics judged by a judge panel: do the judges agree?
        out.append(f"**{t('panel_agreement', lang)}**")
        out += [f"- {s.name}: {s.panel.format(lang)}" for s in panels] + [""]  # type: ignore[union-attr]
    return out


def diagnosis_lines(findings: Sequence[Finding], inputs: ReportInputs) -> list[str]:
    """The first findings, each with its first action and the samples driving it."""
    lang = inputs.lang
    if not findings:
        return []
    out = [f"**{t('diagnosis', lang)}**"]
    for finding in list(findings)[:MAX_FINDINGS_IN_MARKDOWN]:
        title, _, actions = finding.text(lang)
        ids = ", ".join(d.sample_id for d in finding.samples[:3])
        line = f"- {title}"
        if actions:
            line += f" → {actions[0]}"
        if ids:
            line += f" ({t('driving_samples', lang)}: {ids})"
        out.append(line)
    return out + [""]


def cost_lines(summary: Summary, inputs: ReportInputs) -> list[str]:
    return [usage_line(summary.usage, inputs.lang, run_cost(inputs.data.info, summary)), ""]


def gate_lines(gate: Any, inputs: ReportInputs) -> list[str]:
    lang = inputs.lang
    return [f"**{t('gate', lang)}**: {t('gate_passed' if gate.passed else 'gate_failed', lang)}",
            *(f"- {'✅' if c.passed else '❌'} `{c.name}` — {c.reason}" for c in gate.checks), ""]


def _failure_tags(report: FailureTagReport, inputs: ReportInputs) -> list[str]:
    return [failure_tags_markdown(report, inputs.lang)]


def _segments(tables: Sequence[Any], inputs: ReportInputs) -> list[str]:
    return [segment_markdown(tables, inputs.names, inputs.lang), ""]


def _weekly(reports: Sequence[Any], inputs: ReportInputs) -> list[str]:
    from rubriceval.report.weekly_views import markdown as weekly_markdown  # the weekly table (周报)

    return weekly_markdown(reports, inputs.lang)


def _auto_accept(section: Any, inputs: ReportInputs) -> list[str]:
    from rubriceval.report.auto_accept import markdown_lines  # automatic acceptance (issue 44)

    return markdown_lines(section, inputs)


# section id (report/sections.py) → its lines in the summary
MARKDOWN_PARTS: dict[str, Callable[[Any, ReportInputs], list[str]]] = {
    "overview": overview_lines,
    "diagnosis": diagnosis_lines,
    "measured": lambda lines, i: measured_markdown(lines, i.lang),
    "failure_tags": _failure_tags,
    "segments": _segments,
    "conversations": lambda sections, i: conversation_lines(i.data, i.lang),
    "cost": cost_lines,
    "scorecards": lambda cards, i: [cards.markdown()],
    "auto_accept": _auto_accept,
    "weekly": lambda reports, i: _weekly(reports, i),
    "gate": gate_lines,
}


def render_summary(inputs: ReportInputs) -> str:
    """The short summary for chat and CI logs: the sections of the registry in its order."""
    lines = [line for _, lines_of, data in present(inputs, MARKDOWN_PARTS) for line in lines_of(data, inputs)]
    return "\n".join(lines).rstrip() + "\n"


def render_markdown(data: RunData, *, lang: Lang | None = None, findings: Sequence[Finding] | None = None,
                    agreement: Mapping[str, Message | str] | None = None, gate: Any = None,
                    failure_tags: FailureTagReport | None = None, segments: Sequence[Any] = (),
                    scorecards: Any = None) -> str:
    """The Markdown text of an already-loaded run with the parts given; `markdown_summary` and `rubriceval report`
    read every part from the store (report/inputs.py read_inputs). `gate`: a GateResult to end with.
    `failure_tags`: the experts' failure-tag counts (`run_failure_tags`). `segments`: per-segment tables
    (`report --by`). scorecards: a ScorecardReport (report/scorecards.py)."""
    return render_summary(ReportInputs(data=data, lang=check_lang(lang) or data.language,
                                       findings=data.findings() if findings is None else findings,
                                       agreement=agreement, failure_tags=failure_tags, segments=segments,
                                       scorecards=scorecards, gate=gate))


def markdown_summary(store: Any, run: str, *, lang: str | None = None,
                     agreement: Mapping[str, Message | str] | None = None,
                     metric_thresholds: Mapping[str, float] | None = None,
                     diagnosis: DiagnosisConfig | None = None, gate: Any = None,
                     by: str | Sequence[Any] | None = None, time: Any = None, machine_only: bool = False) -> str:
    """The Markdown summary `rubriceval report` writes of a stored run (business score, per-scorer table, top
    findings, cost; scorecards, failure tags and, with `by`, segments), ending with `gate` when given."""
    return render_summary(read_inputs(store, run, lang=lang, machine_only=machine_only, by=by, time=time,
                                      metric_thresholds=metric_thresholds, diagnosis=diagnosis, agreement=agreement,
                                      gate=gate))
