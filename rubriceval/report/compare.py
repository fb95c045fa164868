"""Compare two runs sample by sample: did the change help, and what did it break?

Deltas are computed on paired samples (same sample id, scored in both runs), with a seeded paired-bootstrap
confidence interval, so a change is called better/worse only when the interval excludes zero. Because one
optimization often moves metrics in opposite directions (the seeds' 跷跷板效应, seesaw effect), the comparison also
lists, per scorer, the samples whose score dropped — with both scores — and the samples that improved on one scorer
while getting worse on another. When the two runs were also compared pairwise (`rubriceval pairwise RUN_A RUN_B`),
the comparison carries those win rates too.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, Field

from rubriceval.pairwise.summary import PairwiseSummary, pairwise_between_runs
from rubriceval.report.aggregate import RunData, load_run
from rubriceval.i18n import Lang, check_lang, format_number, t

Direction = Literal["better", "worse", "unclear", "undefined"]
# A per-sample drop smaller than this is not listed as "worse": rubric scores are whole levels, and metric scores
# from LLM extraction wobble by a few hundredths between runs.
DEFAULT_MIN_DROP: dict[str, float] = {"rubric": 1.0, "metric": 0.05}
BOOTSTRAP_CELLS_PER_BATCH = 2_000_000   # bounds memory: replicates × paired samples per batch
PREVIEW_CHARS = 300


class PairedDelta(BaseModel):
    scorer: str
    name: str
    kind: Literal["rubric", "metric"]
    n_paired: int                    # samples scored in both runs
    n_only_a: int = 0                # scored only in the baseline run (unscored or absent in the candidate)
    n_only_b: int = 0
    mean_a: float | None = None      # on the paired samples
    mean_b: float | None = None
    delta: float | None = None       # mean(b − a) over paired samples
    ci_low: float | None = None
    ci_high: float | None = None
    direction: Direction = "undefined"
    n_better: int = 0
    n_worse: int = 0
    n_same: int = 0
    version_a: str = ""
    version_b: str = ""
    note: str | None = None

    @property
    def version_changed(self) -> bool:
        return bool(self.version_a and self.version_b and self.version_a != self.version_b)


class SampleChange(BaseModel):
    sample_id: str
    scorer: str
    question: str = ""
    score_a: float
    score_b: float
    delta: float
    answer_a: str = ""
    answer_b: str = ""
    feedback_a: str = ""
    feedback_b: str = ""
    # Conversations: the first turn where each run's verdict failed (a check or a per-turn judge score).
    first_failing_turn_a: int | None = None
    first_failing_turn_b: int | None = None


class NewUnscored(BaseModel):
    sample_id: str
    scorer: str
    question: str = ""
    score_a: float | None = None     # None: the pair did not exist in the baseline
    unscored_kind: str
    unscored_reason: str


class SeesawSample(BaseModel):
    sample_id: str
    question: str = ""
    better: dict[str, tuple[float, float]] = Field(default_factory=dict)   # scorer → (a, b)
    worse: dict[str, tuple[float, float]] = Field(default_factory=dict)


class Comparison(BaseModel):
    run_a: str                        # names
    run_b: str
    run_a_id: str
    run_b_id: str
    language: Lang
    deltas: list[PairedDelta]
    worse: dict[str, list[SampleChange]] = Field(default_factory=dict)       # scorer → samples that dropped
    new_unscored: list[NewUnscored] = Field(default_factory=list)
    # How many there are (the lists above show the first compare_source.LISTED of each on a large run).
    worse_total: dict[str, int] = Field(default_factory=dict)
    new_unscored_total: int = 0
    seesaw_total: int = 0
    seesaw_up: list[str] = Field(default_factory=list)    # scorers significantly better …
    seesaw_down: list[str] = Field(default_factory=list)  # … while these are significantly worse
    seesaw_samples: list[SeesawSample] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    pairwise: PairwiseSummary | None = None    # win rates of a stored pairwise comparison of the two runs
    n_boot: int
    seed: int
    confidence: float

    @property
    def seesaw(self) -> bool:
        return bool(self.seesaw_up and self.seesaw_down)

    def get(self, scorer: str) -> PairedDelta:
        for d in self.deltas:
            if d.scorer == scorer:
                return d
        matches = [d for d in self.deltas if d.name == scorer]
        if len(matches) == 1:
            return matches[0]
        raise KeyError(scorer)


def paired_bootstrap_ci(diffs: Sequence[float], n_boot: int = 2000, seed: int = 0,
                        confidence: float = 0.95) -> tuple[float | None, float | None]:
    """Percentile interval of the mean paired difference, resampling samples (pairs) with replacement."""
    d = np.asarray(diffs, dtype=float)
    n = len(d)
    if n < 2 or n_boot < 1:
        return None, None
    rng = np.random.default_rng(seed)
    batch = max(1, BOOTSTRAP_CELLS_PER_BATCH // n)
    means = []
    remaining = n_boot
    while remaining > 0:
        size = min(batch, remaining)
        means.append(d[rng.integers(0, n, size=(size, n))].mean(axis=1))
        remaining -= size
    replicates = np.concatenate(means)
    alpha = (1 - confidence) / 2
    low, high = np.quantile(replicates, [alpha, 1 - alpha])
    return float(low), float(high)


def _direction(delta: float | None, low: float | None, high: float | None) -> Direction:
    if delta is None:
        return "undefined"
    if low is not None and low > 0:
        return "better"
    if high is not None and high < 0:
        return "worse"
    return "unclear"


def _preview(text: str) -> str:
    return text if len(text) <= PREVIEW_CHARS else text[:PREVIEW_CHARS - 1] + "…"


def compare_data(a: RunData, b: RunData, *, n_boot: int = 2000, seed: int = 0, confidence: float = 0.95,
                 min_drop: Mapping[str, float] | None = None, lang: Lang | None = None) -> Comparison:
    """Compare two stored runs; `a` is the baseline, `b` the candidate. Read in SQL a scorer at a time
    (report/compare_source.py): memory does not grow with the runs."""
    from rubriceval.report.compare_source import compare_stored

    return compare_stored(a, b, n_boot=n_boot, seed=seed, confidence=confidence,
                          min_drop={**DEFAULT_MIN_DROP, **(min_drop or {})}, lang=lang)


def compare_runs(store: Any, run_a: str, run_b: str, n_boot: int = 2000, seed: int = 0, *,
                 confidence: float = 0.95, min_drop: Mapping[str, float] | None = None,
                 lang: str | None = None) -> Comparison:
    """Compare run_b (candidate) against run_a (baseline) from one RunStore."""
    a, b = load_run(store, run_a, breakdown=False), load_run(store, run_b, breakdown=False)
    comparison = compare_data(a, b, n_boot=n_boot, seed=seed, confidence=confidence, min_drop=min_drop,
                              lang=check_lang(lang))
    comparison.pairwise = pairwise_between_runs(store.path, [a.run_id, b.run_id], n_boot=n_boot, seed=seed)
    return comparison


# -- rendering -------------------------------------------------------------------------------------------------------

def _signed(value: float | None, lang: Lang, digits: int = 2) -> str:
    return t("not_available", lang) if value is None else f"{value:+.{digits}f}"


def _ci_text(d: PairedDelta, lang: Lang) -> str:
    if d.ci_low is None or d.ci_high is None:
        return t("not_available", lang)
    return f"[{d.ci_low:+.2f}, {d.ci_high:+.2f}]"


def format_comparison(comparison: Comparison, lang: str | None = None, max_samples: int = 5) -> str:
    """The comparison as terminal text: the delta table, then worse samples, new unscored rows and the seesaw."""
    from rubriceval.report.markdown import text_table

    lang = check_lang(lang) or comparison.language
    headers = [t("scorer", lang), f"{t('baseline', lang)}", f"{t('candidate', lang)}", t("delta", lang),
               t("ci95", lang), t("n_paired", lang), t("n_better", lang), t("n_worse", lang), t("result", lang)]
    rows = [[d.name if d.name == d.scorer else f"{d.name} ({d.scorer})", format_number(d.mean_a, 2, lang),
             format_number(d.mean_b, 2, lang), _signed(d.delta, lang), _ci_text(d, lang), str(d.n_paired),
             str(d.n_better), str(d.n_worse), t(f"verdict_{d.direction}", lang)] for d in comparison.deltas]
    out = [f"{t('compare_title', lang)}: {comparison.run_a} → {comparison.run_b}", "",
           text_table(headers, rows, right_align=(1, 2, 3, 5, 6, 7))]
    if comparison.seesaw:
        out += ["", f"⚠ {t('seesaw', lang)}: {t('seesaw_explain', lang)} "
                    f"{t('went_up', lang)} {', '.join(comparison.seesaw_up)}; "
                    f"{t('went_down', lang)} {', '.join(comparison.seesaw_down)}"]
    names = {d.scorer: d.name for d in comparison.deltas}
    for scorer, changes in comparison.worse.items():
        digits = 0 if next(d.kind for d in comparison.deltas if d.scorer == scorer) == "rubric" else 2
        total = comparison.worse_total.get(scorer, len(changes))
        out += ["", f"{t('worse_samples', lang)} · {names.get(scorer, scorer)} ({total})"]
        for c in changes[:max_samples]:
            turns = (f"  [{t('cv_first_failing_turn', lang)} {c.first_failing_turn_a or '–'} → "
                     f"{c.first_failing_turn_b or '–'}]" if c.first_failing_turn_a or c.first_failing_turn_b else "")
            out.append(f"  {c.sample_id}: {c.score_a:.{digits}f} → {c.score_b:.{digits}f}{turns}  {c.question[:40]}")
        if total > max_samples:
            out.append(f"  … +{total - max_samples}")
    if comparison.seesaw_samples:
        out += ["", f"{t('seesaw_samples', lang)} ({max(comparison.seesaw_total, len(comparison.seesaw_samples))})"]
        for s in comparison.seesaw_samples[:max_samples]:
            up = ", ".join(f"{k} {a:g}→{b:g}" for k, (a, b) in s.better.items())
            down = ", ".join(f"{k} {a:g}→{b:g}" for k, (a, b) in s.worse.items())
            out.append(f"  {s.sample_id}: ↑ {up}  ↓ {down}")
    if comparison.new_unscored:
        out += ["", f"{t('new_unscored', lang)} "
                    f"({max(comparison.new_unscored_total, len(comparison.new_unscored))})"]
        for u in comparison.new_unscored[:max_samples * 2]:
            out.append(f"  {u.sample_id} · {names.get(u.scorer, u.scorer)}: {u.unscored_kind} — {u.unscored_reason}")
    for note in comparison.notes + [f"{d.scorer}: {d.note}" for d in comparison.deltas if d.note]:
        out.append(f"note: {note}")
    if comparison.pairwise is not None:
        from rubriceval.pairwise.report import format_pairwise

        out += ["", format_pairwise(comparison.pairwise, lang).rstrip()]
    return "\n".join(out) + "\n"


def delta_chart(deltas: Sequence[PairedDelta], width: int = 560) -> dict[str, Any]:
    """Diverging bars of mean deltas with their CI whiskers, on a symmetric axis around zero."""
    from rubriceval.report.html import shorten_label

    label_w, text_w, row_h = 170, 110, 24
    extent = max([abs(x) for d in deltas for x in (d.delta, d.ci_low, d.ci_high) if x is not None] + [1e-9])
    plot_w = width - label_w - text_w
    zero = label_w + plot_w / 2

    def x(v: float) -> float:
        return zero + (plot_w / 2 - 4) * v / extent

    rows = []
    for i, d in enumerate(deltas):
        color = {"better": "#2e7d32", "worse": "#c62828"}.get(d.direction, "#8a94a3")
        bar_x = bar_w = None
        if d.delta is not None:
            bar_x, bar_w = min(zero, x(d.delta)), max(1.0, abs(x(d.delta) - zero))
        rows.append({"label": shorten_label(d.name, label_w - 12), "full_label": d.name, "y": 4 + i * row_h,
                     "bar_x": bar_x, "bar_w": bar_w, "color": color,
                     "ci_x0": None if d.ci_low is None else x(d.ci_low),
                     "ci_x1": None if d.ci_high is None else x(d.ci_high),
                     "text": "" if d.delta is None else f"{d.delta:+.2f}"})
    return {"width": width, "height": 4 + len(deltas) * row_h + 16, "rows": rows, "zero_x": zero,
            "label_w": label_w, "text_x": label_w + plot_w + 8}


def render_compare_html(comparison: Comparison, lang: str | None = None) -> str:
    from rubriceval.report.html import template_env

    lang_ = check_lang(lang) or comparison.language
    rubrics = [d for d in comparison.deltas if d.kind == "rubric"]
    metrics = [d for d in comparison.deltas if d.kind == "metric"]
    context = {
        "lang": lang_, "t": lambda key, **kw: t(key, lang_, **kw), "c": comparison,
        "rubric_chart": delta_chart(rubrics) if rubrics else None,
        "metric_chart": delta_chart(metrics) if metrics else None,
        "names": {d.scorer: d.name for d in comparison.deltas},
        "digits": {d.scorer: 0 if d.kind == "rubric" else 2 for d in comparison.deltas},
        "signed": lambda v: _signed(v, lang_), "ci_text": lambda d: _ci_text(d, lang_),
    }
    return template_env().get_template("compare.html.j2").render(**context)


def write_compare_html(comparison: Comparison, path: str | Path, lang: str | None = None) -> Path:
    """Write the comparison as one self-contained HTML page."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render_compare_html(comparison, lang), encoding="utf-8")
    return out
