"""From low scores to what to fix: the seeds' diagnosis table, plus business-rubric checks and unscored rows.

Read in the seeds' order — recall first, then precision, then correctness — because each layer depends on the one
before: low context recall → knowledge base / embedding model / query rewriting; low context precision → reranking;
low answer correctness or faithfulness with good recall and precision → generation (prompt, temperature, model,
fine-tune). A business rubric whose deterministic checks fail (e.g. the reimbursement link is missing) → prompt or
answer-template fix. Every finding names the samples that drive it, lowest scores first.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field

from rubriceval.core.verdict import Evidence, Verdict
from rubriceval.data.sample import Sample
from rubriceval.i18n import LANGS, Lang, format_number, format_percent
from rubriceval.i18n.report_text import CHECK_ACTIONS, FINDING_TEXT, GENERIC_CHECK_ACTION, UNSCORED_ACTIONS
from rubriceval.report.signal_checks import (
    DISAGREEMENT_GAP,
    MAX_P_YES_ROWS,
    constant_metric,
    cross_check_pairs,
    narrow_questions,
    p_yes_by_question,
)
from rubriceval.report.summary_models import ScorerSummary, Summary

Stage = Literal["retrieval", "generation", "business", "judge"]
STAGE_ORDER: dict[str, int] = {"retrieval": 0, "generation": 1, "business": 2, "judge": 3}
QUESTION_PREVIEW_CHARS = 80


class DiagnosisConfig(BaseModel):
    """Which metrics play which role, and when a score counts as low. Metric roles match by substring, so
    'nonllm_context_recall' counts as a recall metric too."""

    recall_metrics: list[str] = Field(default_factory=lambda: ["context_recall"])
    precision_metrics: list[str] = Field(default_factory=lambda: ["context_precision"])
    generation_metrics: list[str] = Field(default_factory=lambda: ["answer_correctness", "faithfulness"])
    # Per scorer (id or name): "low" means mean below this. Default: the scorer's own pass threshold.
    thresholds: dict[str, float] = Field(default_factory=dict)
    check_fail_rate: float = Field(default=0.2, ge=0, le=1)     # a check failing on this share of rows is a finding
    max_unscored_rate: float = Field(default=0.1, ge=0, le=1)
    n_samples: int = Field(default=5, ge=1)                     # driving samples listed per finding


class DrivingSample(BaseModel):
    sample_id: str
    score: float | None = None
    question: str = ""
    detail: str = ""


class Finding(BaseModel):
    code: str                        # key into i18n.FINDING_TEXT
    stage: Stage
    severity: Literal["high", "medium"]
    scorer: str
    scorer_name: str
    value: float | None = None       # the scorer's mean (or a rate, for check/unscored findings)
    threshold: float | None = None
    title: dict[str, str]            # per language
    explain: dict[str, str]
    actions: dict[str, list[str]]
    samples: list[DrivingSample] = Field(default_factory=list)
    score_digits: int = 2            # how to print the driving samples' scores: rubrics are whole numbers

    def text(self, lang: Lang) -> tuple[str, str, list[str]]:
        return self.title[lang], self.explain[lang], self.actions[lang]


def _role(metric: str, patterns: Sequence[str]) -> bool:
    return any(p in metric for p in patterns)


def _threshold(summary: ScorerSummary, config: DiagnosisConfig) -> float | None:
    for key in (summary.scorer, summary.name):
        if key in config.thresholds:
            return config.thresholds[key]
    return summary.threshold


def _is_low(summary: ScorerSummary, config: DiagnosisConfig) -> bool:
    threshold = _threshold(summary, config)
    return summary.mean is not None and threshold is not None and summary.mean < threshold


def _severity(summary: ScorerSummary) -> Literal["high", "medium"]:
    return "high" if summary.pass_rate is not None and summary.pass_rate < 0.5 else "medium"


def preview_question(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= QUESTION_PREVIEW_CHARS else text[:QUESTION_PREVIEW_CHARS - 1] + "…"


def _texts(code: str, extra_actions: Mapping[str, list[str]] | None = None, **params: Any
           ) -> tuple[dict[str, str], dict[str, str], dict[str, list[str]]]:
    titles: dict[str, str] = {}
    explains: dict[str, str] = {}
    actions: dict[str, list[str]] = {}
    for lang in LANGS:
        entry = FINDING_TEXT[code][lang]
        values = {k: (v[lang] if isinstance(v, dict) else v) for k, v in params.items()}
        titles[lang] = str(entry["title"]).format(**values)
        explains[lang] = str(entry["explain"]).format(**values)
        actions[lang] = list(entry["actions"]) + list((extra_actions or {}).get(lang, []))
    return titles, explains, actions


def _both(render) -> dict[str, str]:
    return {lang: render(lang) for lang in LANGS}


def _score_finding(code: str, stage: Stage, summary: ScorerSummary, config: DiagnosisConfig,
                   samples: list[DrivingSample]) -> Finding:
    threshold = _threshold(summary, config)
    digits = 2
    titles, explains, actions = _texts(code, scorer=summary.name,
                                       value=_both(lambda lang: format_number(summary.mean, digits, lang)),
                                       threshold=_both(lambda lang: format_number(threshold, digits, lang)))
    return Finding(code=code, stage=stage, severity=_severity(summary), scorer=summary.scorer,
                   scorer_name=summary.name, value=summary.mean, threshold=threshold, title=titles,
                   explain=explains, actions=actions, samples=samples,
                   score_digits=0 if summary.kind == "rubric" else 2)


class _Index:
    """Verdicts by scorer and by (sample, scorer), and sample questions, for picking driving samples. A stored run
    answers the same questions in SQL (report/source_diagnosis.py)."""

    def __init__(self, verdicts: Sequence[Verdict], samples: Sequence[Sample] | None):
        self.by_scorer: dict[str, list[Verdict]] = {}
        self.by_key: dict[tuple[str, str], Verdict] = {}
        for v in verdicts:
            self.by_scorer.setdefault(v.scorer, []).append(v)
            self.by_key[(v.sample_id, v.scorer)] = v
        self.questions = {s.id: s.question for s in (samples or [])}
        self.texts = {s.id: (s.question, s.answer, tuple(s.contexts)) for s in (samples or [])}

    def driving(self, verdict: Verdict, detail: str = "") -> DrivingSample:
        return DrivingSample(sample_id=verdict.sample_id, score=verdict.score,
                             question=preview_question(self.questions.get(verdict.sample_id, "")),
                             detail=detail or preview_question(verdict.feedback))

    def lowest(self, scorer: str, threshold: float | None, n: int) -> list[DrivingSample]:
        rows = [v for v in self.by_scorer.get(scorer, []) if v.score is not None
                and (threshold is None or v.score < threshold)]
        rows.sort(key=lambda v: (v.score, v.sample_id))
        return [self.driving(v) for v in rows[:n]]

    def verdict(self, sample_id: str, scorer: str) -> Verdict | None:
        return self.by_key.get((sample_id, scorer))

    def low_despite_retrieval(self, scorer: str, threshold: float | None,
                              retrieval: Sequence[tuple[str, float | None]], n: int) -> list[Verdict]:
        """Rows below threshold whose own retrieval scores all pass first, then by score and sample id."""
        rows = [v for v in self.by_scorer.get(scorer, []) if v.score is not None
                and (threshold is None or v.score < threshold)]

        def retrieval_failed(v: Verdict) -> bool:
            return not all((r := self.by_key.get((v.sample_id, name))) is not None and r.score is not None
                           and (limit is None or r.score >= limit) for name, limit in retrieval)
        return sorted(rows, key=lambda v: (retrieval_failed(v), v.score, v.sample_id))[:n]

    def check_results(self, scorer: str, item_id: str, n: int) -> tuple[int, int, list[tuple[Verdict, Evidence]]]:
        """How often a check item was judged and failed on a rubric's rows, and the first n failures (unscored
        last, then by score and sample id)."""
        judged = [(v, e) for v in self.by_scorer.get(scorer, []) for e in v.evidence
                  if e.item == item_id and e.passed is not None]
        failed = [(v, e) for v, e in judged if e.passed is False]
        failed.sort(key=lambda ve: (ve[0].score is None, ve[0].score or 0, ve[0].sample_id))
        return len(judged), len(failed), failed[:n]

    def unscored(self, scorer: str, n: int) -> list[Verdict]:
        return [v for v in self.by_scorer.get(scorer, []) if v.score is None][:n]

    def disagreements(self, a: str, b: str, gap: float, n: int) -> tuple[int, int, list[tuple[Verdict, Verdict]]]:
        """Rows scored by both scorers, those whose scores differ by ≥ gap, and the n widest (signal_checks.py)."""
        both = [(abs(v.score - w.score), v, w) for v in self.by_scorer.get(a, []) if v.score is not None
                and (w := self.by_key.get((v.sample_id, b))) is not None and w.score is not None]
        far = sorted(((d, v, w) for d, v, w in both if d >= gap), key=lambda p: (-p[0], p[1].sample_id))
        return len(both), len(far), [(v, w) for _, v, w in far[:n]]

    def samples_differ(self, scorer: str) -> bool:
        """Whether the scorer's rows are of samples that differ (by question, answer and contexts, when known)."""
        ids = {v.sample_id for v in self.by_scorer.get(scorer, [])}
        return len({self.texts.get(i, i) for i in ids}) > 1

    def p_yes(self, scorer: str) -> dict[str, list[float]]:
        return p_yes_by_question(v for v in self.by_scorer.get(scorer, [])[:MAX_P_YES_ROWS] if v.score is not None)


def _retrieval_ok_for_sample(index: _Index, sample_id: str, retrieval: Sequence[ScorerSummary],
                             config: DiagnosisConfig) -> tuple[bool, str]:
    parts, ok = [], True
    for summary in retrieval:
        v = index.verdict(sample_id, summary.scorer)
        threshold = _threshold(summary, config)
        if v is None or v.score is None:
            ok = False
            continue
        parts.append(f"{summary.name} {v.score:.2f}")
        if threshold is not None and v.score < threshold:
            ok = False
    return ok, ", ".join(parts)


def _generation_findings(summary: Summary, index: _Index, config: DiagnosisConfig) -> list[Finding]:
    metrics = summary.metrics
    retrieval = [m for m in metrics if m.mean is not None
                 and _role(m.scorer, config.recall_metrics + config.precision_metrics)]
    retrieval_low = [m for m in retrieval if _is_low(m, config)]
    findings = []
    for m in metrics:
        if not (_role(m.scorer, config.generation_metrics) and _is_low(m, config)):
            continue
        threshold = _threshold(m, config)
        if not retrieval:
            code = "low_generation_unlocated"
            drivers = index.lowest(m.scorer, threshold, config.n_samples)
        elif retrieval_low:
            code = "low_generation_retrieval_first"
            drivers = index.lowest(m.scorer, threshold, config.n_samples)
        else:
            code = "low_generation"
            # The samples that prove it is generation: low answer score although their own retrieval was fine.
            rows = index.low_despite_retrieval(m.scorer, threshold, [(r.scorer, _threshold(r, config))
                                                                     for r in retrieval], config.n_samples)
            drivers = [index.driving(v, _retrieval_ok_for_sample(index, v.sample_id, retrieval, config)[1])
                       for v in rows]
        findings.append(_score_finding(code, "generation", m, config, drivers))
    return findings


def _check_items(definition: Mapping[str, Any]) -> dict[str, str]:
    """item id → check type, for the rubric's deterministic checks."""
    return {item["id"]: item.get("type", "") for item in definition.get("items", [])
            if isinstance(item, Mapping) and item.get("type") not in (None, "judge")}


def _rubric_findings(summary: Summary, scorers: Sequence[Mapping[str, Any]], index: _Index,
                     config: DiagnosisConfig) -> list[Finding]:
    definitions = {row["scorer"]: row.get("definition") or {} for row in scorers}
    findings = []
    for rubric in summary.rubrics:
        checks = _check_items(definitions.get(rubric.scorer, {}))
        check_findings = []
        for item_id, check_type in checks.items():
            n_judged, n_failed, failed = index.check_results(rubric.scorer, item_id, config.n_samples)
            if not n_judged or n_failed / n_judged < config.check_fail_rate:
                continue
            rate = n_failed / n_judged
            drivers = [index.driving(v, preview_question(e.detail or ", ".join(e.missing))) for v, e in failed]
            action = CHECK_ACTIONS.get(check_type, GENERIC_CHECK_ACTION)
            # A checklist is the judge's yes/no answers, not a deterministic check: said as such (issue 32.10).
            code = "rubric_checklist_failing" if check_type == "checklist" else "rubric_check_failing"
            titles, explains, actions = _texts(
                code, extra_actions={lang: [action[lang]] for lang in LANGS},
                scorer=rubric.name, item=item_id, check_type=check_type,
                rate=_both(lambda lang, rate=rate: format_percent(rate, lang)))
            check_findings.append(Finding(
                code=code, stage="business",
                severity="high" if _is_low(rubric, config) or rate >= 0.5 else "medium",
                scorer=rubric.scorer, scorer_name=rubric.name, value=rate, threshold=config.check_fail_rate,
                title=titles, explain=explains, actions=actions, samples=drivers, score_digits=0))
        findings += check_findings
        if not check_findings and _is_low(rubric, config):
            drivers = index.lowest(rubric.scorer, _threshold(rubric, config), config.n_samples)
            findings.append(_score_finding("rubric_low", "business", rubric, config, drivers))
    return findings


def _unscored_findings(summary: Summary, index: _Index, config: DiagnosisConfig) -> list[Finding]:
    findings = []
    for s in summary.scorers:
        rate = s.unscored_rate
        if rate is None or rate <= config.max_unscored_rate or not s.unscored:
            continue
        kinds = [g.kind for g in s.unscored]
        drivers = [index.driving(v, preview_question(v.unscored_reason or ""))
                   for v in index.unscored(s.scorer, config.n_samples)]
        titles, explains, actions = _texts(
            "many_unscored", extra_actions={lang: [UNSCORED_ACTIONS.get(k, UNSCORED_ACTIONS["error"])[lang]
                                                   for k in kinds] for lang in LANGS},
            scorer=s.name, top_kind=kinds[0], rate=_both(lambda lang, rate=rate: format_percent(rate, lang)))
        findings.append(Finding(code="many_unscored", stage="judge", severity="high" if rate >= 0.3 else "medium",
                                scorer=s.scorer, scorer_name=s.name, value=rate, threshold=config.max_unscored_rate,
                                title=titles, explain=explains, actions=actions, samples=drivers,
                                score_digits=0 if s.kind == "rubric" else 2))
    return findings


def _cross_check_findings(summary: Summary, index: _Index, config: DiagnosisConfig) -> list[Finding]:
    """LLM and non-LLM retrieval metrics that contradict each other on samples (signal_checks.py)."""
    by_scorer = {m.scorer: m for m in summary.metrics}
    findings = []
    for llm, other in cross_check_pairs(by_scorer):
        n_both, n_far, pairs = index.disagreements(llm, other, DISAGREEMENT_GAP, config.n_samples)
        if not n_far:
            continue
        drivers = [index.driving(v, f"{llm} {v.score:.2f} / {other} {w.score:.2f}") for v, w in pairs]
        titles, explains, actions = _texts("retrieval_cross_check", scorer=llm, other=other, count=n_far,
                                           gap=f"{DISAGREEMENT_GAP:g}")
        findings.append(Finding(code="retrieval_cross_check", stage="retrieval",
                                severity="high" if n_far / n_both >= 0.2 else "medium", scorer=llm,
                                scorer_name=by_scorer[llm].name, value=n_far / n_both, threshold=DISAGREEMENT_GAP,
                                title=titles, explain=explains, actions=actions, samples=drivers))
    return findings


def _no_signal_findings(summary: Summary, index: _Index) -> list[Finding]:
    """Metrics constant over differing samples, checklist questions whose p(yes) stays in a narrow band."""
    findings = []
    for m in summary.metrics:
        if constant_metric(m, index.samples_differ(m.scorer)):
            titles, explains, actions = _texts("no_signal_metric", scorer=m.name, count=m.n_scored,
                                               value=format_number(m.min, 2, "en"))
            findings.append(Finding(code="no_signal_metric", stage="judge", severity="high", scorer=m.scorer,
                                    scorer_name=m.name, value=m.min, title=titles, explain=explains,
                                    actions=actions))
    for rubric in summary.rubrics:
        for q in narrow_questions(index.p_yes(rubric.scorer)):
            titles, explains, actions = _texts("no_signal_question", scorer=rubric.name, item=q.item, count=q.n,
                                               low=f"{q.low:.2f}", high=f"{q.high:.2f}")
            findings.append(Finding(code="no_signal_question", stage="judge", severity="high",
                                    scorer=rubric.scorer, scorer_name=rubric.name, value=q.high - q.low,
                                    title=titles, explain=explains, actions=actions, score_digits=0))
    return findings


def diagnose(summary: Summary, verdicts: Sequence[Verdict], scorers: Sequence[Mapping[str, Any]] = (),
             samples: Sequence[Sample] | None = None, config: DiagnosisConfig | None = None, *,
             index: Any = None) -> list[Finding]:
    """Findings in the order to work on them: retrieval, generation, business rules, then the evaluation itself.

    scorers: `RunStore.scorers(run)` rows; needed to know which rubric items are deterministic checks.
    index: what answers the questions about the rows (default: an index of `verdicts` and `samples` in memory; a
    stored run passes its SQL index and no verdicts).
    """
    config = config or DiagnosisConfig()
    index = index if index is not None else _Index(verdicts, samples)
    findings: list[Finding] = []
    for patterns, code in ((config.recall_metrics, "low_context_recall"),
                           (config.precision_metrics, "low_context_precision")):
        for m in summary.metrics:
            if _role(m.scorer, patterns) and _is_low(m, config):
                drivers = index.lowest(m.scorer, _threshold(m, config), config.n_samples)
                findings.append(_score_finding(code, "retrieval", m, config, drivers))
    findings += _cross_check_findings(summary, index, config)
    findings += _generation_findings(summary, index, config)
    findings += _rubric_findings(summary, scorers, index, config)
    findings += _no_signal_findings(summary, index)
    findings += _unscored_findings(summary, index, config)
    return sorted(findings, key=lambda f: STAGE_ORDER[f.stage])   # stable: keeps recall before precision
