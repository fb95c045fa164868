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
from typing import Any

from rubriceval.i18n import Lang, check_lang, format_number, t
from rubriceval.pairwise.summary import pairwise_between_runs
from rubriceval.report.compare_models import DEFAULT_MIN_DROP, Comparison, PairedDelta
from rubriceval.report.run_data import RunData, load_run


def compare_data(a: RunData, b: RunData, *, n_boot: int = 2000, seed: int = 0, confidence: float = 0.95,
                 min_drop: Mapping[str, float] | None = None, lang: Lang | None = None) -> Comparison:
    """Compare two stored runs; `a` is the baseline, `b` the candidate. Read in SQL a scorer at a time
    (report/compare_source.py): memory does not grow with the runs."""
    from rubriceval.report.compare_source import compare_stored

    return compare_stored(a, b, n_boot=n_boot, seed=seed, confidence=confidence,
                          min_drop={**DEFAULT_MIN_DROP, **(min_drop or {})}, lang=lang)


def compare_runs(store: Any, run_a: str, run_b: str, n_boot: int = 2000, seed: int = 0, *,
                 confidence: float = 0.95, min_drop: Mapping[str, float] | None = None,
                 lang: str | None = None, machine_only: bool = False) -> Comparison:
    """Compare run_b (candidate) against run_a (baseline) from one RunStore, on official scores (machine_only: the
    judge's)."""
    a = load_run(store, run_a, breakdown=False, machine_only=machine_only)
    b = load_run(store, run_b, breakdown=False, machine_only=machine_only)
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


def _human_mark(decided: Sequence[str], lang: Lang) -> str:
    """'  ✎ human-decided (appeal · qa_zhao → )' for a row whose official score in either run a person decided."""
    if not any(decided):
        return ""
    return f"  ✎ {t('official_human_decided', lang)} ({' → '.join(d or '–' for d in decided)})"


def format_comparison(comparison: Comparison, lang: str | None = None, max_samples: int = 5) -> str:
    """The comparison as terminal text: the delta table, then worse samples, new unscored rows and the seesaw."""
    from rubriceval.common.tables import text_table

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
            human = _human_mark([c.decided_a, c.decided_b], lang)
            out.append(f"  {c.sample_id}: {c.score_a:.{digits}f} → {c.score_b:.{digits}f}{turns}{human}  "
                       f"{c.question[:40]}")
        if total > max_samples:
            out.append(f"  … +{total - max_samples}")
    if comparison.seesaw_samples:
        out += ["", f"{t('seesaw_samples', lang)} ({max(comparison.seesaw_total, len(comparison.seesaw_samples))})"]
        for s in comparison.seesaw_samples[:max_samples]:
            up = ", ".join(f"{k} {a:g}→{b:g}" for k, (a, b) in s.better.items())
            down = ", ".join(f"{k} {a:g}→{b:g}" for k, (a, b) in s.worse.items())
            human = f"  ✎ {t('official_human_decided', lang)}: {', '.join(s.human)}" if s.human else ""
            out.append(f"  {s.sample_id}: ↑ {up}  ↓ {down}{human}")
    if comparison.new_unscored:
        out += ["", f"{t('new_unscored', lang)} "
                    f"({max(comparison.new_unscored_total, len(comparison.new_unscored))})"]
        for u in comparison.new_unscored[:max_samples * 2]:
            out.append(f"  {u.sample_id} · {names.get(u.scorer, u.scorer)}: {u.unscored_kind} — {u.unscored_reason}")
    for d in comparison.deltas:
        if d.n_pending_a or d.n_pending_b:
            out.append(f"{d.name}: {t('compare_pending', lang, a=d.n_pending_a, b=d.n_pending_b)}")
    for note in comparison.notes + [f"{d.scorer}: {d.note}" for d in comparison.deltas if d.note]:
        out.append(f"note: {note}")
    if comparison.pairwise is not None:
        from rubriceval.pairwise.report import format_pairwise

        out += ["", format_pairwise(comparison.pairwise, lang).rstrip()]
    return "\n".join(out) + "\n"


def delta_chart(deltas: Sequence[PairedDelta], width: int = 560) -> dict[str, Any]:
    """Diverging bars of mean deltas with their CI whiskers, on a symmetric axis around zero."""
    from rubriceval.report.charts import shorten_label

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
    from rubriceval.report.html_env import template_env

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
