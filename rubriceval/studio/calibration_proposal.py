"""A reviewed fit (trust/fit_reviews.py) proposed as the card's next version, and accepted as one (issue 44.1).

The proposal is the card file's own text with each proposed item's `calibration:` entry for the fitted judge written
in (an entry for another judge is kept; one for the same judge is replaced — the older version keeps it) and its
`version:` raised, edited on the YAML tree and written back on the file's own lines (studio/form.written_back), so
comments and every other line stay as they are. Nothing is written until it is accepted: accepting saves it exactly as
the studio saves a draft (studio/versions.save_version: the next version, the old one kept in the history, refused when
the file changed since the proposal was made). `rubriceval scorecard fit` and the studio's 复核校准 tab both use it.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel

from rubriceval.common.errors import RubricEvalError
from rubriceval.i18n import Lang, t
from rubriceval.rubric.calibration import ItemCalibration, ItemExample
from rubriceval.scorecard.schema import Scorecard
from rubriceval.studio.form import load_tree, written_back
from rubriceval.studio.scorecards import CardFolder, load_text, scorecard_tag
from rubriceval.studio.versions import (
    SavedVersion,
    Shelf,
    as_shelf,
    diff,
    fingerprint,
    rubric_path,
    save_version,
)
from rubriceval.trust.fit_cutoff import MIN_PER_CLASS
from rubriceval.trust.fit_reviews import CardFit, ItemFit

FIT_COLUMNS = ["item", "current_cutoff", "fitted_cutoff", "heldout", "auc", "reviews", "proposal"]


class CalibrationProposal(BaseModel):
    card: str
    based_on: str                       # the fingerprint of the card text the proposal was made from
    from_version: int
    version: int                        # the version it would be saved as
    text: str                           # the proposed card file
    diff: str
    fit: CardFit
    skipped: list[str] = []             # proposed items the file no longer asks the same question of
    examples: dict[str, list[ItemExample]] = {}     # items whose reviewed examples beat the cut-off (fit_examples)

    @property
    def items(self) -> list[str]:
        proposed = [f.item for f in self.fit.proposed if f.item not in self.skipped]
        return proposed + [i for i in self.examples if i not in proposed]


def current_card(folder: str | Path | Shelf, card_id: str, card_folder: CardFolder | None = None) -> Scorecard | None:
    """The card's version in use now (its file on the shelf), whose cut-offs a fit must beat; None without one."""
    text = as_shelf(folder).current(card_id)
    if not text:
        return None
    where = card_folder or CardFolder.of(folder if isinstance(folder, (str, Path)) else None)
    return load_text(text, rubric_path(".", card_id).name, where)


def _flow(calibration: ItemCalibration) -> Any:
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    data = calibration.model_dump(mode="json", exclude_none=True)
    if data.get("score") == "p_yes":
        data.pop("score")                       # the default: left out, as an author would write it
    if not data.get("note"):
        data.pop("note", None)
    if "undecided" in data:
        band = CommentedSeq(data["undecided"])
        band.fa.set_flow_style()
        data["undecided"] = band
    flow = CommentedMap(data)
    flow.fa.set_flow_style()
    return flow


def _version_number(value: Any) -> int:
    try:
        return int(str(value or 0).strip().strip("'\""))
    except ValueError:
        return 0


def _example_flow(example: ItemExample) -> Any:
    from ruamel.yaml.comments import CommentedMap

    flow = CommentedMap(example.model_dump(mode="json", exclude_none=True, exclude_defaults=True) |
                        {"answer": example.answer})
    flow.fa.set_flow_style()
    return flow


def yaml_with_calibrations(text: str, calibrations: dict[str, ItemCalibration], version: int,
                           name: str = "scorecard.yaml", examples: dict[str, list[ItemExample]] | None = None,
                           judge: str = "") -> str:
    """The card's text with each item's calibration for its judge written in and `version:` set, every other line
    as the file has it. `examples`: items that decide from reviewed examples on `judge` instead (their examples
    written, their calibrations for that judge removed: a calibration for the judge would be read before them)."""
    from ruamel.yaml.comments import CommentedSeq

    tree = load_tree(text, name)
    entries = {str(e.get("id")): e for e in tree.get("items") or [] if hasattr(e, "get")}
    for item_id, chosen in (examples or {}).items():
        entry = entries.get(item_id)
        if entry is None:
            raise RubricEvalError(f"the scorecard has no item '{item_id}'", file=name, field="items")
        entry["examples"] = CommentedSeq([_example_flow(e) for e in chosen])
        kept = [c for c in entry.get("calibration") or [] if not (hasattr(c, "get") and c.get("judge") == judge)]
        if kept:
            entry["calibration"] = CommentedSeq(kept)
        else:
            entry.pop("calibration", None)
    for item_id, calibration in calibrations.items():
        if item_id in (examples or {}):
            continue
        entry = entries.get(item_id)
        if entry is None:
            raise RubricEvalError(f"the scorecard has no item '{item_id}'", file=name, field="items")
        kept = [c for c in entry.get("calibration") or [] if not (hasattr(c, "get") and
                                                                   c.get("judge") == calibration.judge)]
        listed = CommentedSeq([*kept, _flow(calibration)])
        entry["calibration"] = listed
    tree["version"] = version
    return written_back(text, tree)


def propose_calibration(folder: str | Path | Shelf, fit: CardFit,
                        examples: dict[str, list[ItemExample]] | None = None) -> CalibrationProposal | None:
    """The card's next version with the fit's proposed calibrations — and `examples`, the reviewed examples that beat
    the cut-off on held-out reviews (trust/fit_examples.py) — (None: nothing to propose). An item whose question the
    file now words differently is skipped (its calibration was fitted for the question asked)."""
    examples = dict(examples or {})
    if not fit.proposed and not examples:
        return None
    shelf = as_shelf(folder)
    text = shelf.current(fit.card)
    name = rubric_path(".", fit.card).name
    if not text:
        raise RubricEvalError(f"no scorecard '{fit.card}' to propose a version of", file=name,
                              hint="give the scorecards folder the card is saved in")
    tree = load_tree(text, name)
    asked = {str(e.get("id")): str(e.get("question") or "") for e in tree.get("items") or [] if hasattr(e, "get")}
    questions = {f.item: f.question for f in fit.items}
    skipped = [i for i in [*(f.item for f in fit.proposed), *examples] if asked.get(i) != questions.get(i)]
    calibrations = {item: c for item, c in fit.calibrations().items() if item not in skipped}
    examples = {item: e for item, e in examples.items() if item not in skipped}
    if not calibrations and not examples:
        return None
    old = _version_number(tree.get("version"))
    version = max([old, *shelf.versions(fit.card)]) + 1
    proposed = yaml_with_calibrations(text, calibrations, version, name, examples, fit.judge)
    return CalibrationProposal(card=fit.card, based_on=fingerprint(text), from_version=old, version=version,
                               text=proposed, diff=diff(text, proposed, name, (f"v{old}", f"v{version}")), fit=fit,
                               skipped=sorted(set(skipped)), examples=examples)


def accept_proposal(folder: str | Path | Shelf, proposal: CalibrationProposal, *, saved_by: str = "",
                    card_folder: CardFolder | None = None) -> SavedVersion:
    """Save the proposal as the card's next version (refused when the file changed since it was proposed)."""
    where = card_folder or CardFolder.of(folder if isinstance(folder, (str, Path)) else None)
    return save_version(folder, proposal.text, based_on=proposal.based_on, saved_by=saved_by,
                        validate=lambda text, name: scorecard_tag(text, name, where))


def _outcome(fit: ItemFit, lang: Lang) -> str:
    if fit.fit is None:
        return t("studio_fit_row_none", lang)
    if fit.accepted:
        return t("studio_fit_row_proposed", lang)
    if not fit.fit.enough:
        return t("studio_fit_row_few", lang, n=MIN_PER_CLASS)
    return t("studio_fit_row_worse", lang, current=f"{fit.current:g}", fitted=f"{fit.fit.balanced_accuracy_heldout:.2f}",
             old=f"{fit.fit.balanced_accuracy_default_heldout:.2f}")


def fit_rows(fit: CardFit, lang: Lang = "en") -> list[list[str]]:
    """The studio's table of a reviewed fit, one row per question item (FIT_COLUMNS), said in `lang`."""
    rows = []
    for item in fit.items:
        source = t("studio_fit_source_default", lang) if item.current_source == "default" else item.current_source
        found = item.fit if item.fit is not None and item.fit.enough else None
        rows.append([item.item, f"{item.current:g} ({source})",
                     f"{found.cutoff:.3f}" if found else "–",
                     f"{found.balanced_accuracy_heldout:.2f} / {found.balanced_accuracy_default_heldout:.2f}"
                     if found else "–",
                     f"{found.auc_heldout:.2f}" if found and found.auc_heldout is not None else "–",
                     f"{found.n_train} / {found.n_heldout} / {item.n_unasked}" if found else
                     f"{item.n_answers} / – / {item.n_unasked}",
                     _outcome(item, lang)])
    return rows
