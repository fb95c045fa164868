"""What the rubric files' `measured:` blocks say about the run's judge: for each rubric, the agreement with people
measured for the judge and mode the run used, or that none was measured (rubriceval/rubric/measured.py)."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from rubriceval.i18n import Lang, t
from rubriceval.rubric.measured import Measurement


def _measurements(definition: Mapping[str, Any]) -> list[Measurement]:
    try:
        return [Measurement.model_validate(m) for m in definition.get("measured") or []]
    except ValidationError:          # a definition stored by another version: say nothing rather than guess
        return []


def measured_lines(scorers: Sequence[Mapping[str, Any]], judge: Mapping[str, Any], lang: Lang) -> list[str]:
    """One line per rubric of the run that carries measurements: the figure on the run's judge in the mode it ran
    (the largest n when several rows were measured), else what was measured and on which judges."""
    model = str(judge.get("model") or "")
    lines: list[str] = []
    for scorer in scorers:
        definition = scorer.get("definition") or {}
        if scorer.get("kind") != "rubric" or not (measured := _measurements(definition)):
            continue
        mode = definition.get("judge_mode") or "holistic"
        same = [m for m in measured if m.judge == model and m.base_mode == mode]
        name = definition.get("name") or scorer.get("scorer")
        if same:
            best = max(same, key=lambda m: m.n)
            lines.append(f"- {name}: " + t("measured_line", lang, mode=best.mode, judge=best.judge,
                                             kappa=f"{best.kappa:.2f}", low=f"{best.ci[0]:.2f}",
                                             high=f"{best.ci[1]:.2f}", n=best.n, dataset=best.dataset,
                                             date=best.date.isoformat()))
        else:
            judges = ", ".join(dict.fromkeys(m.judge for m in measured))
            judged = f"{model or '?'} / {mode}"
            lines.append(f"- {name}: " + (f"未在本次的裁判与模式（{judged}）上实测；实测过的裁判：{judges}"
                                          if lang == "zh" else
                                          f"not measured on this run's judge and mode ({judged}); measured on "
                                          f"{judges}"))
    return lines


def measured_markdown(lines: Sequence[str], lang: Lang) -> list[str]:
    """The report's Markdown section of these lines (none when no rubric of the run carries measurements)."""
    return [f"**{t('measured_title', lang)}**", *lines, ""] if lines else []


def measured_section(scorers: Sequence[Mapping[str, Any]], judge: Mapping[str, Any], lang: Lang) -> list[str]:
    """The report's Markdown section (empty when no rubric of the run carries measurements)."""
    return measured_markdown(measured_lines(scorers, judge, lang), lang)
