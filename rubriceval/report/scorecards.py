"""Scorecards in the run's report (a section of report/sections.py): a Markdown section, an HTML section (the
report's template environment, autoescaped: transcripts are hostile text) and Excel sheets (one row per conversation,
a column per item: its points, 0 or N/A; streamed like every sheet, cells escaped so no text runs as a formula)."""
from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from typing import Any

from pydantic import BaseModel

from rubriceval.audit.scorecard_official import official_pairs
from rubriceval.i18n import MESSAGES, Lang, evidence_text, format_number, format_percent, t
from rubriceval.report import scorecard_awaiting as awaiting
from rubriceval.report.scorecard_summary import ScorecardSummary, official_summary
from rubriceval.scorecard.schema import Scorecard
from rubriceval.scorecard.verdict import ScorecardVerdict
from rubriceval.store.scorecards import ScorecardStore, scorecard_frame

TRANSCRIPTS_SHOWN = 10


class HumanMark(BaseModel):
    """What the conversation view's "human-decided" badge says, as the other report parts do: the latest human
    act's source (an appeal, a lead's total … or reviewers' item decisions), who, and the judge's own total."""

    source: str                 # official_source_<source> in the catalogue
    by: str
    machine_total: int | None


def human_marks(runs: Any, run_id: str, human: set[tuple[str, str]], machine: Sequence[ScorecardVerdict],
                reviews: Sequence[Any]) -> dict[tuple[str, str], HumanMark]:
    """(sample id, scorecard) → its badge, for the verdicts a person changed. The later of the verdict's decision
    (audit/official.py) and its latest item review names the source, as audit/scorecard_official.with_decision lets
    a review made after a decision stand."""
    if not human:
        return {}
    from rubriceval.audit.official import OfficialScores

    official = OfficialScores.load(runs.conn, run_id)
    judged = {(v.sample_id, v.scorecard): v.totals.total for v in machine}
    marks = {}
    for key in human:
        decision = official.decision(*key)
        mine = [r for r in reviews if (r.sample_id, r.scorecard) == key]
        last = max(mine, key=lambda r: r.created_at) if mine else None
        source: str
        if decision is not None and (last is None or decision.at >= last.created_at):
            source, by = decision.source, decision.by
        else:
            source, by = "review", ", ".join(sorted({r.reviewer for r in mine if r.reviewer})) or "—"
        marks[key] = HumanMark(source=source, by=by, machine_total=judged.get(key))
    return marks


class ScorecardReport:
    """Every scorecard of one run, read once for the three outputs."""

    def __init__(self, runs: Any, run: str, lang: Lang | None = None, *, machine_only: bool = False):
        store = ScorecardStore(runs)
        self.runs, self.run_id = runs, runs.resolve(run)
        self.cards: list[Scorecard] = store.cards(self.run_id)
        # official totals: a human decision (an accepted appeal, reviewers' item decisions) replaces the machine's
        # (audit/scorecard_official.py); machine_only: as the judge scored them
        pairs = official_pairs(runs, self.run_id, machine_only=machine_only) if self.cards else []
        self.verdicts: list[ScorecardVerdict] = [v for v, _ in pairs]
        self.human = {(v.sample_id, v.scorecard) for v, human in pairs if human}
        from rubriceval.audit.scorecard_reviews import ReviewStore

        reviews = ReviewStore(runs).reviews(self.run_id) if self.cards else []
        machine = store.verdicts(self.run_id) if self.human else []
        summaries = [official_summary(c, pairs, machine, reviews, machine_only=machine_only) for c in self.cards]
        self.marks = human_marks(runs, self.run_id, self.human, machine, reviews)
        # A scorecard that scored no sample of this run (its scope is the other kind) is left out.
        kept = [(c, s) for c, s in zip(self.cards, summaries) if s.n]
        self.cards, self.summaries = [c for c, _ in kept], [s for _, s in kept]
        self.lang: Lang = lang or (self.cards[0].language if self.cards else "en")

    def __bool__(self) -> bool:
        return bool(self.cards)

    def mine(self, card: Scorecard) -> list[ScorecardVerdict]:
        return [v for v in self.verdicts if v.scorecard == card.id and v.version == card.version_tag]

    # -- Markdown ---------------------------------------------------------------------------------------------------
    def markdown(self) -> str:
        from rubriceval.common.tables import markdown_table

        lang = self.lang
        out = [f"## {t('sc_title', lang)}"]
        for card, s in zip(self.cards, self.summaries):
            out += ["", f"### {t('sc_card', lang, name=card.name, id=card.id, version=card.version_tag)}", "",
                    *_headline(s, lang), ""]
            out.append(markdown_table([t("sc_band", lang), t("sc_conversations", lang)],
                                      [[band, str(n)] for band, n in s.distribution()]))
            out += ["", f"**{t('sc_fatal_first', lang)}**", ""]
            out.append(markdown_table([t("sc_conversation", lang), t("sc_fatal_items", lang)],
                                      [[f.sample_id, ", ".join(f.items)] for f in s.fatal])
                       if s.fatal else t("sc_no_fatal", lang))
            out += ["", f"**{t('sc_dimensions', lang)}**", ""]
            out.append(markdown_table([t("sc_dimension", lang), t("sc_mean_subtotal", lang),
                                       t("sc_dim_clamped", lang)],
                                      [[d.name, format_number(d.mean, 1, lang), str(d.n_clamped)]
                                       for d in s.dimensions]))
            out += ["", f"**{t('sc_items', lang)}**", ""]
            out.append(markdown_table(_item_headers(lang), _item_rows(s, lang)))
            if s.awaiting:                    # issues 39, 44: counted apart, never averaged
                out += ["", f"**{t('aw_list', lang)}**", "",
                        markdown_table(awaiting.awaiting_headers(lang), awaiting.awaiting_rows(s, _names(card), lang))]
            if rows := awaiting.how_rows(s):
                out += ["", f"**{t('how_title', lang)}**", "", markdown_table(awaiting.how_headers(s, lang), rows)]
        return "\n".join(out) + "\n"

    # -- HTML -------------------------------------------------------------------------------------------------------
    def html_values(self) -> dict[str, Any]:
        """The values of the section's template (templates/sections/scorecards.html.j2)."""
        lang = self.lang
        sections = []
        for card, s in zip(self.cards, self.summaries):
            sections.append({"card": card, "s": s, "headline": _headline(s, lang), "rows": _item_rows(s, lang),
                             "top": s.top_deductions(), "views": self._views(card),
                             "awaiting_headers": awaiting.awaiting_headers(lang),
                             "awaiting_rows": awaiting.awaiting_rows(s, _names(card), lang),
                             "how_headers": awaiting.how_headers(s, lang), "how_rows": awaiting.how_rows(s)})
        return {"sections": sections, "item_headers": _item_headers(lang)}

    def html(self) -> str:
        """The section on its own (the report page draws it through report/html.py HTML_PARTS)."""
        from rubriceval.report.html_env import template_env

        lang = self.lang
        return template_env().get_template("sections/scorecards.html.j2").render(
            **self.html_values(), lang=lang, t=lambda key, **p: t(key, lang, **p))

    def _views(self, card: Scorecard) -> list[dict[str, Any]]:
        """The conversations with deductions, lowest totals first (fatal ones first of all), each turn with the
        deductions it is cited by; a conversation a person decided is listed too (its deduction may be gone), with
        its badge."""
        labels = {i.id: i for i in card.items}
        docked = [v for v in self.mine(card) if any(p.points < 0 for p in v.totals.items) or v.totals.fatal
                  or v.totals.total is None or (v.sample_id, v.scorecard) in self.marks]
        # fatal first, then what people decided (a reader looks for those), then the lowest totals
        docked.sort(key=lambda v: (not v.totals.fatal, (v.sample_id, v.scorecard) not in self.marks,
                                   -1 if v.totals.total is None else v.totals.total))
        docked = docked[:TRANSCRIPTS_SHOWN]
        samples = _samples(self.runs, self.run_id, [v.sample_id for v in docked])
        views = []
        for v in docked:
            points = {p.item: p.points for p in v.totals.items}
            by_turn: dict[int, list[str]] = {}
            whole: list[str] = []
            for o in v.outcomes:
                if o.status not in ("hit", "unscored") and not o.awaiting_review:
                    continue
                item = labels[o.item]
                tag = (f"{item.label} ({t('sc_cell_undecided', self.lang)})" if o.status == "undecided" else
                       f"{item.label} ({t('scr_status_pending_' + o.status, self.lang)})" if o.awaiting_review else
                       f"{item.label} ({t('sc_fatal', self.lang)})" if item.fatal and o.status == "hit" else
                       f"{item.label} ({t('sc_unscored', self.lang)}: {o.reason})" if o.status == "unscored" else
                       f"{item.label} {points.get(o.item, 0):+d}")
                turns = sorted({e.turn for e in o.evidence if e.turn})
                for turn in turns:
                    by_turn.setdefault(turn, []).append(tag)
                if not turns:
                    detail = "; ".join(said for e in o.evidence if (said := evidence_text(e, self.lang)))
                    whole.append(tag + (f" — {detail}" if detail else ""))
            sample = samples.get(v.sample_id)
            transcript = [{"n": n, "role": role_label(turn.role, self.lang), "text": turn.content,
                           "marks": by_turn.get(n, [])}
                          for n, turn in sample.conversation.numbered()] if sample and sample.conversation else []
            views.append({"sample_id": v.sample_id, "total": v.totals.total, "fatal": v.totals.fatal,
                          "total_text": awaiting.total_text(v.totals, self.lang),
                          "reason": v.totals.unscored_reason, "whole": whole, "turns": transcript,
                          "official": self.marks.get((v.sample_id, v.scorecard)),
                          "answer": sample.answer if sample and not sample.conversation else ""})
        return views

    # -- Excel ------------------------------------------------------------------------------------------------------
    def sheets(self, taken: set[str]) -> Iterator[tuple[str, Iterator[list[Any]]]]:
        """A sheet per scorecard (name, rows): its figures on top, then one row per conversation with a column per
        item. The rows are plain (the figures above the table are not a header); text is escaped by the writer."""
        for card, s in zip(self.cards, self.summaries):
            name = _sheet_name(card.id, taken)
            taken.add(name)
            yield name, self._sheet_rows(card, s)

    def _sheet_rows(self, card: Scorecard, s: ScorecardSummary) -> Iterator[list[Any]]:
        lang = self.lang
        for line in _headline(s, lang):
            yield [line]
        for line in awaiting.how_lines(s, lang):        # how each judgement item was decided (issue 39)
            yield [line]
        yield [t("sc_sheet_rows", lang)]
        yield []
        frame = scorecard_frame(card, self.mine(card))
        names = {i.id: i.label for i in card.items}
        yield [names.get(c) or _column_name(c, lang) for c in frame.columns]
        for row in frame.itertuples(index=False):
            yield [None if _missing(value) else _cell(_plain(value), lang) for value in row]


def _column_name(column: str, lang: Lang) -> str:
    """scorecard_frame's own columns (sample_id, total, dim:服务 …) as the sheet's language says them."""
    if column.startswith("dim:"):
        return t("sc_col_dimension", lang, dimension=column[4:])
    key = f"sc_col_{column}"
    return t(key, lang) if key in MESSAGES else column


def _cell(value: Any, lang: Lang) -> Any:
    """An item cell's word ("fatal", "unscored") or the clamped flag, said in the sheet's language."""
    if isinstance(value, bool):
        return t("sc_cell_true" if value else "sc_cell_false", lang)
    if value in ("fatal", "unscored", "undecided", "pending"):
        return t(f"sc_cell_{value}", lang)
    return value


def _plain(value: Any) -> Any:
    """A frame's cell as a Python value (numpy scalars written as numbers, not as their repr)."""
    return value.item() if hasattr(value, "item") and not isinstance(value, (str, bytes)) else value


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and value != value)


def _sheet_name(card_id: str, taken: Collection[str]) -> str:
    base = "".join(ch for ch in f"scorecard {card_id}" if ch not in "[]:*?/\\")[:31]
    name, n = base, 2
    while name in taken:
        name, n = f"{base[:28]}-{n}", n + 1
    return name


def _headline(s: ScorecardSummary, lang: Lang) -> list[str]:
    lines = [t("sc_counts", lang, n=s.n, scored=s.n_scored, unscored=s.n_unscored, fatal=len(s.fatal),
               fatal_rate=format_percent(s.fatal_rate, lang)),
             t("sc_total_stats", lang, base=s.base, mean=format_number(s.mean, 1, lang),
               median=format_number(s.median, 1, lang), min=format_number(s.min, 0, lang),
               max=format_number(s.max, 0, lang))]
    if s.pass_total is not None:
        lines.append(t("sc_pass", lang, pass_total=s.pass_total, rate=format_percent(s.pass_rate, lang)))
    if waiting := awaiting.awaiting_line(s, lang):
        lines.append(waiting)
    if s.n_clamped:
        lines.append(t("sc_clamped", lang, n=s.n_clamped, base=s.base))
    if s.unscored_reasons:
        lines.append(t("sc_unscored_reasons", lang) + ": " + "; ".join(f"{why} ×{n}"
                                                                      for why, n in s.unscored_reasons.items()))
    if s.note:
        lines.append(t("sc_version_note", lang, note=s.note))
    if s.machine_only:
        lines.append(t("official_machine_only", lang))
    elif s.n_human:                  # official totals: how many conversations people decided, the judge's beside
        lines.append(t("official_scorecard_line", lang, n=s.n_human, mean=format_number(s.machine_mean, 1, lang),
                       fatal=format_percent(s.machine_fatal_rate, lang)))
    u = s.usage
    lines.append(t("sc_usage", lang, calls=u.calls, cached=u.cache_hits, tokens=u.prompt_tokens + u.completion_tokens,
                   cost=f"{u.cost_usd:.4f}"))
    below = s.untrusted()
    if below:
        lines.append(t("sc_untrusted", lang) + ": " + "; ".join(f"{i.name} ({i.trust.untrusted_said(lang) if i.trust else ''})"
                                                           for i in below))
    return lines


def _names(card: Scorecard) -> dict[str, str]:
    return {i.id: i.label for i in card.items}


def _item_headers(lang: Lang) -> list[str]:
    return [t(k, lang) for k in ("sc_item", "sc_dimension", "sc_points", "sc_kind", "sc_hits", "sc_decided",
                                 "sc_hit_rate", "sc_na", "sc_unscored", "sc_points_total", "sc_precision",
                                 "sc_recall", "sc_trust")]


def _rate_ci(rate: float | None, ci: tuple, n: int, lang: Lang) -> str:
    if rate is None:
        return ""
    low, high = ci
    return f"{format_percent(rate, lang)} [{format_percent(low, lang)}, {format_percent(high, lang)}] (n={n})"


def _item_rows(s: ScorecardSummary, lang: Lang) -> list[list[str]]:
    rows = []
    for i in sorted(s.items, key=lambda i: (-(i.hit_rate or 0), i.item)):
        points = t("sc_fatal", lang) if i.fatal else f"{i.points:+d}"
        tr = i.trust
        trust = "" if tr is None or tr.bar is None else ("⚠ " + tr.untrusted_said(lang) if tr.untrusted else "✓")
        hit_rate = format_percent(i.hit_rate, lang)
        if i.n_human:                 # a person changed this item's outcome somewhere: say so, the judge's beside
            machine = format_percent(i.machine_hit_rate, lang)
            hit_rate += f" ({t('official_scorer_note', lang, n=i.n_human, machine=machine)})"
        rows.append([i.name, i.dimension, points, t(f"sc_kind_{i.kind}", lang), str(i.n_hit), str(i.n_decided),
                     hit_rate, str(i.n_na), str(i.n_unscored), f"{i.points_total:+d}",
                     _rate_ci(tr.precision, tr.precision_ci, tr.confirmed + tr.rejected, lang) if tr else "",
                     _rate_ci(tr.recall, tr.recall_ci, tr.confirmed + tr.missed, lang) if tr else "", trust])
    return rows


def _samples(runs: Any, run_id: str, ids: Sequence[str]) -> dict[str, Any]:
    from rubriceval.data.sample import Sample

    if not ids:
        return {}
    with runs.lock:
        rows = runs.conn.execute(f"SELECT sample_json FROM run_samples WHERE run_id=? AND sample_id IN "
                                 f"({','.join('?' * len(ids))})", (run_id, *ids)).fetchall()
    samples = [Sample.model_validate_json(r[0]) for r in rows]
    return {s.id: s for s in samples}


def role_label(role: str, lang: Lang) -> str:
    """A transcript turn's speaker as the page's language says it (客服 / 用户); an unknown role as stored."""
    key = f"ev_role_{role}"
    return t(key, lang) if key in MESSAGES else role
