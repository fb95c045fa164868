"""One self-contained HTML report per run: inline CSS, charts as inline SVG drawn here, no JavaScript, no network.

All user text (questions, answers, feedback, rubric names) goes through Jinja2 autoescaping; the chart geometry is
computed in Python and drawn by template macros, so labels are escaped like everything else.
"""
from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from markupsafe import Markup

from rubriceval.audit.official import OFFICIAL_KEY
from rubriceval.core.verdict import Verdict
from rubriceval.i18n import MESSAGES, Lang, Message, check_lang, evidence_text, format_number, resay, say, t
from rubriceval.i18n.run_report_text import NOTE_KEYS
from rubriceval.report.charts import column_chart, hbar_chart
from rubriceval.report.conversation_view import conversation_context, example_transcript
from rubriceval.report.cost import run_cost
from rubriceval.report.diagnosis import DiagnosisConfig, Finding
from rubriceval.report.failure_tags import FailureTagReport, failure_tags_html
from rubriceval.report.html_env import template_env
from rubriceval.report.inputs import ReportInputs, read_inputs
from rubriceval.report.official_figures import appeal_flag_lines, official_headline
from rubriceval.report.run_data import RunData
from rubriceval.report.sections import present
from rubriceval.report.segment_views import html_context as segment_html
from rubriceval.report.summary_models import GroupStats, ScorerSummary, Summary

WORST_EXAMPLES = 3
ANSWER_PREVIEW_CHARS = 600


def distribution_chart(s: ScorerSummary) -> dict[str, Any] | None:
    if s.distribution is not None:
        levels = sorted(s.distribution)
        return column_chart([str(level) for level in levels], [s.distribution[level] for level in levels],
                            [None if s.threshold is None else level >= s.threshold for level in levels])
    if s.histogram is not None:
        edges = [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
        labels = [f"{edges[i]:.1f}–{edges[i + 1]:.1f}" for i in range(5)]
        # A bin passes when its lower edge clears the threshold; the bin holding the threshold stays neutral.
        passing = [None if s.threshold is None else (True if edges[i] >= s.threshold else
                                                     (False if edges[i + 1] <= s.threshold else None))
                   for i in range(5)]
        return column_chart(labels, s.histogram, passing, width=340)
    return None


def _truncate(text: str, limit: int = ANSWER_PREVIEW_CHARS) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


def worst_examples(data: RunData, scorer: str, n: int = WORST_EXAMPLES) -> list[dict[str, Any]]:
    """The lowest-scoring rows of a scorer (ties by sample id) with the sample text, feedback and evidence."""
    threshold = next((s.threshold for s in data.summary.scorers if s.scorer == scorer), None)
    rows = data.lowest(scorer, n)
    samples = data.samples_for([v.sample_id for v in rows])
    return [_example(v, samples.get(v.sample_id), threshold) for v in rows]


def _example(v: Verdict, sample: Any, threshold: float | None) -> dict[str, Any]:
    # Metric verdicts carry no `passed`; judge them against the same threshold the summary uses.
    passed = v.passed if v.passed is not None or threshold is None or v.score is None else v.score >= threshold
    return {
        "sample_id": v.sample_id, "score": v.score, "passed": passed, "feedback": v.feedback,
        "question": sample.question if sample else "", "answer": _truncate(sample.answer) if sample else "",
        "ground_truth": _truncate(sample.ground_truth) if sample else "",
        "evidence": [e.model_dump() for e in v.evidence],
        "tags": list(sample.tags) if sample else [], "intent": sample.intent if sample else "",
        "transcript": example_transcript(sample, v),      # conversations: every turn, not first/last only
        "official": v.details.get(OFFICIAL_KEY),          # a human decision: its source, who, the machine's score
    }


def breakdown_tables(summary: Summary) -> list[dict[str, Any]]:
    """Per dimension (tag, intent): rows = values, columns = scorers, cells = GroupStats."""
    tables = []
    for dimension in ("tag", "intent"):
        groups: list[GroupStats] = [g for g in summary.breakdown if g.dimension == dimension]
        if not groups:
            continue
        values = list(dict.fromkeys(g.value for g in groups))
        cells = {(g.value, g.scorer): g for g in groups}
        scorers = [s for s in summary.scorers if any((v, s.scorer) in cells for v in values)]
        rows = []
        for value in values:
            n_samples = max(g.n_samples for g in groups if g.value == value)
            rows.append({"value": value, "n_samples": n_samples,
                         "cells": [_breakdown_cell(cells.get((value, s.scorer)), s) for s in scorers]})
        tables.append({"dimension": dimension, "scorers": scorers, "rows": rows})
    return tables


def _breakdown_cell(g: GroupStats | None, s: ScorerSummary) -> dict[str, Any] | None:
    if g is None:
        return None
    passed = None if g.mean is None or s.threshold is None else g.mean >= s.threshold
    return {"mean": g.mean, "n_scored": g.n_scored, "n_unscored": g.n_unscored, "pass_rate": g.pass_rate,
            "passed": passed}


def format_time(timestamp: float | None) -> str:
    if timestamp is None:
        return ""
    return dt.datetime.fromtimestamp(timestamp).strftime("%Y-%m-%d %H:%M")


def judge_label(stored: Mapping[str, Any], lang: Lang = "en") -> str:
    """The run's judge as `JudgeConfig.short_name` says it, in `lang`: a model at a URL, '<url> (model not set)', or
    the embedded local judge (a bare 'local' would read like the embedded one)."""
    from rubriceval.judge.config import JudgeConfig

    if not stored:
        return ""
    try:
        config = JudgeConfig.model_validate({k: v for k, v in stored.items() if k in JudgeConfig.model_fields})
    except ValueError:                   # a config written by another version: show what it names
        return str(stored.get("model", ""))
    if config.is_local:
        return t("judge_embedded", lang, model="Qwen2.5-Coder-1.5B")
    if config.model_named:
        return t("judge_at", lang, model=config.model, url=config.base_url)
    return t("judge_no_model", lang, url=config.base_url)


def status_label(status: str | None, lang: Lang = "en") -> str:
    """A run's stored status (running, complete, interrupted, batch …) said in `lang`; an unknown one as stored."""
    key = f"run_status_{status}"
    return t(key, lang) if key in MESSAGES else str(status or "")


def overview_values(summary: Summary, inputs: ReportInputs) -> dict[str, Any]:
    """The overview section: headline figures, the means charts and the per-scorer table."""
    lang = inputs.lang
    rubric_chart = hbar_chart([(s.name, s.mean, s.threshold, format_number(s.mean, 2, lang))
                               for s in summary.rubrics], 1, 5) if summary.rubrics else None
    metric_chart = hbar_chart([(s.name, s.mean, s.threshold, format_number(s.mean, 2, lang))
                               for s in summary.metrics], 0, 1) if summary.metrics else None
    # official scores: how many rows people decided, the judge's figure beside (report/official_figures.py)
    return {"rubric_chart": rubric_chart, "metric_chart": metric_chart,
            "official_headline": official_headline(summary, lang),
            "appeal_flags": appeal_flag_lines(inputs.data.appeal_flags, lang)}   # items agents keep winning appeals on


def scorer_sections(scorers: Sequence[ScorerSummary], inputs: ReportInputs) -> list[dict[str, Any]]:
    """A card per rubric or metric: distribution, worst examples, judge agreement."""
    agreement = inputs.agreement or {}
    return [{"s": s, "chart": distribution_chart(s), "worst": worst_examples(inputs.data, s.scorer),
             "agreement": say(line, inputs.lang) if (line := agreement.get(s.scorer)) is not None else None}
            for s in scorers]


def cost_values(summary: Summary, inputs: ReportInputs) -> dict[str, Any]:
    """Online and Batch API prices of each scorer's tokens and of the total, each judge's at its own prices
    (report/cost.py), when known; a scorer's None: not available (cells "—", and a note says why)."""
    cost = run_cost(inputs.data.info, summary)
    return {"priced": cost.scorers if cost is not None else None,
            "priced_total": cost.total if cost is not None else None}


def page_globals(inputs: ReportInputs) -> dict[str, Any]:
    """What every part of the HTML page reads: language, the run's header figures, the generation time."""
    from rubriceval.report.official_figures import official_note

    data, lang = inputs.data, inputs.lang
    config = data.info.get("config", {})
    return {"lang": lang, "t": lambda key, **kw: t(key, lang, **kw), "say": lambda e: evidence_text(e, lang),
            "run": data.info, "run_name": data.run_name, "created": format_time(data.info.get("created_at")),
            "dataset": config.get("dataset_path", ""), "judge_model": judge_label(config.get("judge") or {}, lang),
            "status": status_label(data.info.get("status"), lang),
            "n_samples": data.n_samples, "summary": data.summary,
            "official_note": lambda s: official_note(s, lang),
            "note": lambda text: resay(text, lang, NOTE_KEYS),      # a note stored in English, said in lang
            "generated_at": dt.datetime.now().strftime("%Y-%m-%d %H:%M")}


class HtmlPage:
    """The page being drawn: one template environment for the page and every section template, with the page's
    globals. Every text is autoescaped by the templates; a section reaches the page as markup only from here."""

    def __init__(self, inputs: ReportInputs):
        self.inputs = inputs
        self.env = template_env()
        self.globals = page_globals(inputs)

    def render(self, template: str, **values: Any) -> str:
        return self.env.get_template(template).render({**self.globals, **values})

    @staticmethod
    def part(html: str) -> Markup:
        """A section as the page places it: ending in one newline (the page puts a blank line between sections)."""
        return Markup(html.rstrip("\n") + "\n")


@dataclass(frozen=True)
class Template:
    """A section drawn by templates/sections/<section id>.html.j2 from the values given (autoescaped there)."""

    values: Callable[[Any, ReportInputs], dict[str, Any]]

    def __call__(self, section: str, data: Any, page: HtmlPage) -> str:
        return page.render(f"sections/{section}.html.j2", **self.values(data, page.inputs))


def _failure_tags(section: str, report: FailureTagReport, page: HtmlPage) -> str:
    return failure_tags_html(report, page.inputs.lang)     # escapes every cell itself (rubric ids, tags: user text)


def _weekly_values(reports: Any, lang: Any) -> dict[str, Any]:
    from rubriceval.report.weekly_views import html_values  # the weekly table (周报): report/weekly.py

    return html_values(reports, lang)


def _auto_accept_values(section: Any, inputs: ReportInputs) -> dict[str, Any]:
    from rubriceval.report.auto_accept import html_values  # automatic acceptance (issue 44)

    return html_values(section, inputs)


# section id (report/sections.py) → how the page draws it
HTML_PARTS: dict[str, Callable[[str, Any, HtmlPage], str]] = {
    "overview": Template(overview_values),
    "breakdown": Template(lambda summary, i: {"breakdowns": breakdown_tables(summary)}),
    "diagnosis": Template(lambda findings, i: {"findings": findings}),
    "rubrics": Template(lambda scorers, i: {"rubric_sections": scorer_sections(scorers, i)}),
    "failure_tags": _failure_tags,
    "segments": Template(lambda tables, i: segment_html(tables, i.names, i.lang)),
    "conversations": Template(lambda sections, i: {"conversation_section": conversation_context(i.data)}),
    "metrics": Template(lambda scorers, i: {"metric_sections": scorer_sections(scorers, i)}),
    "unscored": Template(lambda unscored, i: {"unscored": unscored}),
    "cost": Template(cost_values),
    "scorecards": Template(lambda cards, i: cards.html_values()),
    "auto_accept": Template(_auto_accept_values),
    "weekly": Template(lambda reports, i: _weekly_values(reports, i.lang)),
}


def render_page(inputs: ReportInputs) -> str:
    """One self-contained page: the sections of the registry in its order, inline CSS and SVG, no script."""
    page = HtmlPage(inputs)
    parts = [page.part(draw(section.id, data, page)) for section, draw, data in present(inputs, HTML_PARTS)]
    return page.render("report.html.j2", parts=parts)


def render_html_report(data: RunData, *, lang: Lang | None = None, findings: Sequence[Finding] | None = None,
                       agreement: Mapping[str, Message | str] | None = None,
                       failure_tags: FailureTagReport | None = None, segments: Sequence[Any] = (),
                       scorecards: Any = None) -> str:
    """The page of an already-loaded run with the parts given; `write_html_report` and `rubriceval report` read
    every part from the store (report/inputs.py read_inputs). failure_tags: the experts' failure-tag counts
    (`run_failure_tags`); segments: per-segment tables (`segment_tables`); scorecards: a ScorecardReport
    (report/scorecards.py)."""
    return render_page(ReportInputs(data=data, lang=check_lang(lang) or data.language,
                                    findings=data.findings() if findings is None else findings, agreement=agreement,
                                    failure_tags=failure_tags, segments=segments, scorecards=scorecards))


def write_html_report(store: Any, run: str, path: str | Path, lang: str | None = None, *,
                      agreement: Mapping[str, Message | str] | None = None,
                      metric_thresholds: Mapping[str, float] | None = None,
                      diagnosis: DiagnosisConfig | None = None, by: str | Sequence[Any] | None = None,
                      time: Any = None, machine_only: bool = False) -> Path:
    """Write the report of a stored run to `path` (one HTML file) and return the path: the page `rubriceval report`
    writes (scorecards, failure tags and, with `by`, segments included).

    lang: 'zh' or 'en'; default Chinese when most samples are Chinese. agreement: rubric id → a message such as
    'agreement 0.71 [0.58, 0.80] on 120 audited item(s) — trusted …' (`agreement_lines`), shown under that rubric;
    default: each rubric's agreement measured in the store. by: segments, e.g. 'agent_id,week' (`report --by`),
    counted in the zones of `time` (rubriceval.data.segment_spec.TimeSettings). machine_only: the judge's scores alone.
    """
    inputs = read_inputs(store, run, lang=lang, machine_only=machine_only, by=by, time=time,
                         metric_thresholds=metric_thresholds, diagnosis=diagnosis, agreement=agreement)
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render_page(inputs), encoding="utf-8")
    return out
