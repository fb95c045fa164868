"""A pairwise summary as terminal/Markdown-friendly text: one table of win rates per rubric and pair, then the
Bradley–Terry ranking of each rubric when three or more versions were compared."""
from __future__ import annotations

from rubriceval.i18n import Lang, format_number, t
from rubriceval.pairwise.summary import PairStats, PairwiseSummary


def _rate(p: PairStats, lang: Lang) -> str:
    if p.win_rate is None:
        return t("not_available", lang)
    text = f"{p.win_rate:.2f}"
    if p.ci_low is not None and p.ci_high is not None:
        text += f" [{p.ci_low:.2f}, {p.ci_high:.2f}]"
    return text


def _unscored(p: PairStats) -> str:
    if not p.n_unscored:
        return "0"
    return f"{p.n_unscored} (" + ", ".join(f"{kind} {n}" for kind, n in sorted(p.unscored_by_kind.items())) + ")"


def format_pairwise(summary: PairwiseSummary, lang: Lang = "zh") -> str:
    from rubriceval.common.tables import text_table

    headers = [t("scorer", lang), t("pairwise_pair", lang), t("pairwise_n", lang), t("pairwise_wins_b", lang),
               t("pairwise_ties", lang), t("pairwise_wins_a", lang), f"{t('pairwise_win_rate', lang)} "
               f"({t('ci95', lang)})", t("pairwise_inconsistent", lang), t("pairwise_unscored", lang)]
    rows = [[p.scorer, f"{p.version_b} vs {p.version_a}", str(p.n_scored), str(p.wins_b), str(p.ties),
             str(p.wins_a), _rate(p, lang), str(p.n_inconsistent), _unscored(p)] for p in summary.pairs]
    out = [f"{t('pairwise_title', lang)}: {summary.comparison}",
           f"{t('pairwise_versions', lang)}: {', '.join(summary.versions)}", "",
           text_table(headers, rows, right_align=(2, 3, 4, 5, 7)), "", t("pairwise_explain", lang)]
    for scorer, fit in summary.rankings.items():
        out += ["", f"{t('pairwise_ranking', lang)} · {scorer}"]
        if fit.strengths is None:
            out.append(f"  {fit.note}")
            continue
        strength = dict(zip(fit.versions, fit.strengths))
        out += [f"  {rank}. {label}  {t('pairwise_strength', lang)} {format_number(strength[label], 3, lang)}"
                for rank, label in enumerate(fit.ranking, start=1)]
        if fit.note:
            out.append(f"  note: {fit.note}")
    out += [f"note: {note}" for note in summary.notes]
    out += [f"note: {p.scorer} {p.version_b} vs {p.version_a}: {p.note}" for p in summary.pairs if p.note]
    return "\n".join(out) + "\n"
