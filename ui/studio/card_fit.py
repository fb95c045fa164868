"""The scorecard tab's 复核校准 section (issue 44.1): pick the reviewed runs (weeks), see each question item's
reviewed fit with its held-out figures and the proposed next version of the card as a diff, accept it → saved as the
card's next version (leads and admins). The fit is trust/fit_reviews.py's and the proposal
studio/calibration_proposal.py's, as `rubriceval scorecard fit` uses them; nothing is saved before Accept."""
from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import gradio as gr
import pandas as pd

from rubriceval.common.errors import RubricEvalError
from rubriceval.i18n import Lang, t
from rubriceval.studio import versions
from rubriceval.studio.calibration_proposal import (
    FIT_COLUMNS,
    CalibrationProposal,
    accept_proposal,
    current_card,
    fit_rows,
    propose_calibration,
)
from rubriceval.trust.fit_reviews import fit_card, judge_of_run, load_reviewed
from rubriceval.ui.common.wording import headers

if TYPE_CHECKING:
    from rubriceval.ui.studio.actions import Studio
    from rubriceval.ui.studio.app import StudioHandlers
    from rubriceval.ui.studio.card_layout import CardLayout


@dataclass
class FitLayout:
    runs: gr.Dropdown
    propose: gr.Button
    figures: gr.Dataframe
    status: gr.Textbox
    diff: gr.Code
    accept: gr.Button
    proposal: gr.State             # the proposal as JSON ('' while there is none)


def build_fit_section(lang: Lang) -> FitLayout:
    def say(key: str) -> str:
        return t(key, lang)

    gr.Markdown(f"#### {say('studio_fit_title')}")
    with gr.Row():
        runs = gr.Dropdown(label=say("studio_fit_runs"), choices=[], multiselect=True, elem_id="studio-fit-runs",
                           scale=3)
        propose = gr.Button(say("studio_fit_propose"), elem_id="studio-fit-propose", scale=1)
    figures = gr.Dataframe(headers=headers(FIT_COLUMNS, lang), interactive=False, wrap=True,
                           label=say("studio_fit_figures"), elem_id="studio-fit-figures")
    status = gr.Textbox(label=say("studio_fit_status"), show_label=False, interactive=False,
                        elem_id="studio-fit-status")
    diff = gr.Code(label=say("studio_fit_diff"), language=None, interactive=False, elem_id="studio-fit-diff")
    accept = gr.Button(say("studio_fit_accept"), variant="primary", elem_id="studio-fit-accept")
    return FitLayout(runs, propose, figures, status, diff, accept, gr.State(""))


# -- what the events do, without Gradio ----------------------------------------------------------------------------
def propose_fit(studio: Studio, card_id: str | None, runs: list[str] | None, lang: Lang
                ) -> tuple[pd.DataFrame, str, str, str]:
    """(the figures table, the status line, the diff, the proposal as JSON — '' when none) for the picked runs."""
    if not card_id:
        raise RubricEvalError("open a scorecard first", field="scorecard")
    if not runs:
        raise RubricEvalError(t("studio_fit_no_runs", lang), field="runs")
    if studio.card_shelf is None:
        raise RubricEvalError("no scorecards folder", field="scorecards",
                              hint="start the studio with --scorecards DIR (or --versions-in store)")
    reviewed = load_reviewed(studio.store_path, list(runs), card_id)
    current = current_card(studio.card_shelf, card_id, studio.card_folder)
    fit = fit_card(reviewed.card, reviewed.judge, reviewed.verdicts, reviewed.decided, runs=reviewed.runs,
                   current=current, made=_examples_rules(studio, current or reviewed.card, reviewed.judge))
    table = pd.DataFrame(fit_rows(fit, lang), columns=headers(FIT_COLUMNS, lang))
    proposal = propose_calibration(studio.card_shelf, fit)
    if proposal is None:
        return table, t("studio_fit_none", lang), "", ""
    said = t("studio_fit_proposed", lang, old=proposal.from_version, new=proposal.version,
             items=len(proposal.items), judge=fit.judge)
    if proposal.skipped:
        said += "\n" + t("studio_fit_skipped", lang, items=", ".join(proposal.skipped))
    return table, said, proposal.diff, proposal.model_dump_json()


def _examples_rules(studio: Studio, card: Any, judge_name: str) -> dict[str, Any]:
    """The rules the card's examples make on the runs' judge when the studio's judge is that judge (from the judge
    cache after a run); otherwise those items are compared with 0.5."""
    from rubriceval.local.backends import make_judge
    from rubriceval.trust.fit_examples import examples_rules

    waiting = [i for i in card.items if i.question and i.examples and i.calibration_for(judge_name) is None]
    if not waiting or judge_of_run({"model": studio.judge.model, "base_url": studio.judge.base_url}) != judge_name:
        return {}

    async def make() -> dict[str, Any]:
        judge = make_judge(studio.judge, announce=False)
        try:
            return await examples_rules(card, judge)
        finally:
            await judge.close()
    return asyncio.run(make())


def accept_fit(studio: Studio, proposal_json: str, lang: Lang, saved_by: str = "") -> tuple[str, str, str, str]:
    """Save the proposal as the card's next version: (status, the card's new text, its fingerprint, '' — the
    proposal is used up)."""
    if not proposal_json:
        raise RubricEvalError(t("studio_fit_nothing", lang), field="proposal")
    proposal = CalibrationProposal.model_validate_json(proposal_json)
    shelf = studio.card_shelf
    if shelf is None:
        raise RubricEvalError("no scorecards folder", field="scorecards")
    saved = accept_proposal(shelf, proposal, saved_by=saved_by, card_folder=studio.card_folder)
    text = shelf.current(proposal.card)
    return (t("studio_saved", lang, path=saved.path if isinstance(shelf, versions.StoreShelf) else
              f"{proposal.card}.yaml", version=saved.version, tag=saved.version_tag),
            text, versions.fingerprint(text), "")


def wire_fit(ui: FitLayout, cards: CardLayout, h: StudioHandlers, shown: Callable[..., Any],
             fingerprint: gr.State) -> None:
    s, lang = h.studio, h.lang
    ui.runs.focus(lambda: gr.update(choices=s.runs()), None, [ui.runs], api_visibility="private")
    ui.propose.click(shown(lambda card_id, runs: list(propose_fit(s, card_id, runs, lang))),
                     [cards.card_file, ui.runs], [ui.figures, ui.status, ui.diff, ui.proposal],
                     api_name="studio_fit_propose")

    def do_accept(proposal_json: str, request: gr.Request) -> list[str]:
        name = h.require_edit(request)
        return list(accept_fit(s, proposal_json, lang, saved_by=name))

    saved = [ui.status, cards.card_text, fingerprint, ui.proposal]
    ui.accept.click(shown(do_accept, saved, ui.status), [ui.proposal], saved, api_name="studio_fit_accept")
