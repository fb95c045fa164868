"""The robustness benchmark's result as text: inflation per family and mode under each defence, recall, false
positives and each defence's cost per screened text (Markdown tables, ready for an issue or docs/benchmarks.md)."""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from benchmarks.judge.robustness import Inflation, RobustnessResult


def _num(value: float | None, signed: bool = False) -> str:
    if value is None:
        return "—"
    return f"{value:+.2f}" if signed else f"{value:.2f}"


def _cell(x: Inflation) -> str:
    if x.n_pairs == 0:
        return f"— (0 scored, {x.n_unscored} unscored, {x.n_not_judged} capped unjudged)"
    share = "—" if x.share_higher is None else f"{100 * x.share_higher:.0f} %"
    extra = (f", {x.n_unscored} unscored" if x.n_unscored else "") + (
        f", {x.n_not_judged} capped unjudged left out" if x.n_not_judged else "")
    return f"{_num(x.inflation, True)} ({share} higher{extra})"


def inflation_table(result: RobustnessResult) -> list[str]:
    if not result.rows:
        return []
    defences = list(result.rows[0].by_defence)
    lines = ["| mode | family | pairs | clean mean | attacked mean (raw) | " + " | ".join(
                 f"inflation: {d}" for d in defences) + " |",
             "|" + "---|" * (5 + len(defences))]
    for row in result.rows:
        raw = row.by_defence["none"]
        lines.append(f"| {row.mode} | {row.family} | {raw.n_pairs} | {_num(raw.clean_mean)} | "
                     f"{_num(raw.attacked_mean)} | " + " | ".join(_cell(row.by_defence[d]) for d in defences) + " |")
    return lines


def recall_table(result: RobustnessResult) -> list[str]:
    defences = list(result.recall)
    if not defences:
        return []
    families = list(result.recall[defences[0]])
    lines = ["| family | " + " | ".join(f"recall: {d}" for d in defences) + " |", "|" + "---|" * (1 + len(defences))]
    for family in families:
        lines.append(f"| {family} | " + " | ".join(result.recall[d][family].format() for d in defences) + " |")
    return lines


def false_positive_table(result: RobustnessResult) -> list[str]:
    defences = list(result.false_positives)
    if not defences:
        return []
    corpora = list(dict.fromkeys(c for d in defences for c in result.false_positives[d]))
    lines = ["| benign corpus | " + " | ".join(f"flagged: {d}" for d in defences) + " |",
             "|" + "---|" * (1 + len(defences))]
    for corpus in corpora:
        cells = [result.false_positives[d][corpus].format() if corpus in result.false_positives[d] else "not screened"
                 for d in defences]
        lines.append(f"| {corpus} | " + " | ".join(cells) + " |")
    return lines


def _per_text(value: float, n: int) -> str:
    return f"{value / n:.1f}" if n else "—"


def cost_lines(result: RobustnessResult) -> list[str]:
    lines = [("| defence | texts screened | could not screen | calls per text | prompt tokens per text | "
              "completion tokens per text |"), "|---|---|---|---|---|---|"]
    for name, usage in result.screen_usage.items():
        n = result.screened_texts.get(name) or 0
        # calls answered now or from a cache alike: what screening one text asks for
        lines.append(f"| {name} | {n} | {len(result.screen_failures.get(name) or {})} | "
                     f"{_per_text(usage.calls + usage.cache_hits, n)} | "
                     f"{_per_text(usage.prompt_tokens, n)} | {_per_text(usage.completion_tokens, n)} |")
    return lines


def summary_text(result: RobustnessResult) -> str:
    head = [(f"robustness ({result.split} half, {result.n_pairs} pairs), judge {result.judge}, "
             f"{result.elapsed_s:.0f} s")]
    for mode, usage in result.judge_usage.items():
        unscored = result.unscored_kinds.get(mode) or {}
        head.append(f"  {mode}: {usage.calls} judge calls ({usage.cache_hits} cache hits), {usage.prompt_tokens} "
                    f"prompt + {usage.completion_tokens} completion tokens"
                    + (f"; unscored {unscored}" if unscored else "")
                    + (f"; {result.not_judged[mode]} attacked answers capped before judging (not judged)"
                       if result.not_judged.get(mode) else "")
                    + (f"; {result.pending[mode]} of {result.n_pairs} pairs not judged yet (partial report)"
                       if result.pending.get(mode) else ""))
    parts = [head, inflation_table(result), recall_table(result), false_positive_table(result), cost_lines(result)]
    return "\n\n".join("\n".join(p) for p in parts if p)
