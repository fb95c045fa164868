"""What each studio event does, without Gradio: the form's values in, what the page shows out.

The form travels as its field values (ui/studio/form_values.FORM_FIELDS order); `form_of` turns them into a
RubricForm and `studio/form.yaml_from_form` into the YAML that is validated, tried and saved — the page never holds
a second representation of a rubric. Opening, validating and saving: ui/studio/rubric_editing.py.
"""
from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from contextlib import closing
from pathlib import Path
from typing import Any, Literal

import pandas as pd

from rubriceval.common.errors import RubricEvalError
from rubriceval.data.sample import Sample
from rubriceval.i18n import Lang, t
from rubriceval.judge.config import JudgeConfig
from rubriceval.local.backends import make_judge
from rubriceval.rubric.schema import Rubric
from rubriceval.store.audit import AuditStore
from rubriceval.store.location import is_server_url
from rubriceval.store.runs import RunStore
from rubriceval.studio import trial, versions
from rubriceval.studio.drafting import draft_from_document, read_document
from rubriceval.studio.scorecards import CardFolder
from rubriceval.studio.workbench import pasted_sample, pick_samples, preview, try_checks
from rubriceval.ui.common.wording import headers
from rubriceval.ui.studio.card_actions import CardActions
from rubriceval.ui.studio.form_values import FORM_FIELDS, form_of, values_of
from rubriceval.ui.studio.rubric_editing import RubricEditing

__all__ = ["FORM_FIELDS", "Studio", "form_of", "values_of"]

VersionsIn = Literal["files", "store"]

RESULT_COLUMNS = ["sample_id", "score", "feedback", "evidence", "calls", "prompt_tokens"]
CHECK_COLUMNS = ["check", "type", "passed", "evidence", "turn"]
CANDIDATE_COLUMNS = ["id", "question", "answered", "agreement", "polarity", "kept"]


class Studio(RubricEditing, CardActions):
    """One studio over a rubrics folder and a run store; the judge tries drafts. Versions are kept in the folders
    (`versions_in="files"`) or in the run store (`"store"`: a server setup; the folders, if any, only seed it)."""

    def __init__(self, rubrics_dir: str | Path, store_path: str | Path, judge: JudgeConfig,
                 scorecards_dir: str | Path | None = None, versions_in: VersionsIn = "files"):
        self.rubrics_dir, self.store_path, self.judge = Path(rubrics_dir), str(store_path), judge
        self.scorecards_dir = Path(scorecards_dir) if scorecards_dir else None
        self.versions_in = versions_in
        self.card_folder = CardFolder.of(self.scorecards_dir)
        self.lang: Lang = "en"          # the page's: what a refused draft's validation report is said in
        if versions_in == "store":
            seed = self.rubrics_dir if self.rubrics_dir.is_dir() else None
            self.rubric_shelf: versions.Shelf = versions.StoreShelf(store_path, "rubric", seed)
            self.card_shelf: versions.Shelf | None = versions.StoreShelf(store_path, "scorecard", self.scorecards_dir)
        else:
            self.rubric_shelf = versions.FolderShelf(self.rubrics_dir)
            self.card_shelf = versions.FolderShelf(self.scorecards_dir) if self.scorecards_dir else None

    def where(self, saved: versions.SavedVersion, item_id: str) -> str:
        """What a save message names: the file, or the store's row."""
        return saved.path if self.versions_in == "store" else f"{item_id}.yaml"

    # -- files --------------------------------------------------------------------------------------------------------
    def rubric_files(self) -> list[str]:
        return self.rubric_shelf.ids()

    # -- samples ------------------------------------------------------------------------------------------------------
    def runs(self) -> list[tuple[str, str]]:
        if not is_server_url(self.store_path) and not Path(self.store_path).is_file():
            return []
        with closing(RunStore(self.store_path)) as store:
            return [(r.name, r.run_id) for r in store.list_runs()
                    if not r.name.startswith(trial.TRIAL_PREFIX)]

    def samples(self, run: str | None) -> list[Sample]:
        if not run:
            return []
        with closing(RunStore(self.store_path)) as store:
            return store.samples(run)

    def sample(self, run: str | None, sample_id: str | None) -> Sample | None:
        return next((s for s in self.samples(run) if s.id == sample_id), None)

    # -- trying -------------------------------------------------------------------------------------------------------
    def test_checks(self, values: tuple[Any, ...], base_text: str, pasted: str, run: str | None,
                    sample_id: str | None) -> pd.DataFrame:
        rubric = self.rubric(values, base_text)
        sample = pasted_sample(pasted) if (pasted or "").strip() else self.sample(run, sample_id)
        if sample is None:
            raise RubricEvalError("paste an answer or pick a sample", field="sample")
        named = {item.id: item.description.strip() for item in rubric.items}
        rows = [[f"{named[c.item]}（{c.item}）" if named.get(c.item) else c.item, c.type,
                 {True: "✔", False: "✘", None: "?"}[c.passed], trial.quoting(c.detail, c.span), c.turn]
                for c in try_checks(rubric, sample)]
        return pd.DataFrame(rows, columns=headers(CHECK_COLUMNS, self.lang))

    def preview(self, values: tuple[Any, ...], base_text: str, run: str | None, sample_id: str | None) -> str:
        sample = self.sample(run, sample_id)
        if sample is None:
            raise RubricEvalError("pick a sample to preview the prompt for", field="sample")
        return preview(self.rubric(values, base_text), sample)

    def picked(self, rubric: Rubric, run: str | None, rule: str, n: float, tag: str) -> list[Sample]:
        samples = self.samples(run)
        if not samples:
            raise RubricEvalError("pick a stored run to take samples from", field="run")
        failing: set[str] = set()
        if rule == "failing":
            with closing(RunStore(self.store_path)) as store:
                failing = {v.sample_id for v in store.verdicts(run) if v.passed is False}
        return pick_samples(samples, rubric, rule, int(n or 5), tag=tag or "", failing=failing)  # type: ignore[arg-type]

    def plan(self, values: tuple[Any, ...], base_text: str, run: str | None, rule: str, n: float, tag: str) -> str:
        rubric = self.rubric(values, base_text)
        samples = self.picked(rubric, run, rule, n, tag)
        return trial.plan_text(trial.plan_trial(rubric, samples, self.judge), len(samples), self.lang)

    def try_draft(self, values: tuple[Any, ...], base_text: str, run: str | None, rule: str, n: float, tag: str
                  ) -> Iterator[tuple[pd.DataFrame, str, list[str]]]:
        """(results so far, the trial run's id, its sample ids) after each verdict."""
        rubric = self.rubric(values, base_text)
        samples = self.picked(rubric, run, rule, n, tag)
        rows: list[list[Any]] = []
        store = RunStore(self.store_path)
        loop = asyncio.new_event_loop()
        try:
            agen = trial.run_trial(store, rubric, samples, self.judge)
            while True:
                try:
                    row = loop.run_until_complete(agen.__anext__())
                except StopAsyncIteration:
                    break
                unscored = t("studio_unscored", self.lang, reason=row.unscored_reason or "")
                rows.append([row.sample_id, row.score if row.score is not None else unscored,
                             row.feedback, "\n".join(row.evidence), row.calls, row.prompt_tokens])
                yield pd.DataFrame(rows, columns=headers(RESULT_COLUMNS, self.lang)), row.run_id, [r[0] for r in rows]
        finally:
            loop.close()
            store.close()

    def mark(self, run_id: str, sample_id: str, rubric_id: str, expert: str, thumb: str, score: float | None,
             reason: str, lang: Lang) -> tuple[str, str]:
        if not run_id:
            raise RubricEvalError("try the draft first, then mark its verdicts", field="trial")
        if not thumb:
            raise RubricEvalError("choose 👍 or 👎 first", field="thumb")
        if thumb not in ("up", "down"):        # the radio's values; its labels are the page's language
            raise RubricEvalError(f"thumb must be up or down, not {thumb!r}", field="thumb")
        right = None
        if thumb == "down" and score not in (None, ""):      # a 👍 agrees with the judge: a score box is not read
            try:
                right = float(score)
            except (TypeError, ValueError):
                right = -1
            if not right.is_integer() or not 1 <= right <= 5:
                raise RubricEvalError("the right score is a whole number from 1 to 5", field="score")
        with AuditStore(self.store_path) as audit:
            action = trial.mark(audit, run_id, sample_id, rubric_id, expert=expert,
                                thumb="up" if thumb == "up" else "down",
                                right_score=int(right) if right is not None else None, reason=reason or "")
            found = trial.agreement(audit, run_id, rubric_id)
        return (t("studio_marked", lang, action=t(f"studio_mark_{action}", lang)),
                found.text(lang) + "\n\n" + self.changes(run_id, rubric_id, lang))

    def changes(self, run_id: str, rubric_id: str, lang: Lang) -> str:
        with closing(RunStore(self.store_path)) as store:
            info = store.run_info(run_id)
            tag = info.config.rubrics.get(rubric_id, "")
            earlier = [r for r in store.list_runs() if r.name.startswith(f"{trial.TRIAL_PREFIX}{rubric_id}-")
                       and r.run_id != run_id and r.config.rubrics.get(rubric_id) not in (None, tag)
                       and r.created_at < info.created_at]
            if not earlier:
                return ""
            before = max(earlier, key=lambda r: r.created_at).run_id
            changed = trial.changes_since(store, rubric_id, before, run_id)
        if not changed:
            return t("studio_unchanged", lang)
        return t("studio_changed", lang, changes=", ".join(f"{c.sample_id} {c.before}→{c.after}" for c in changed))

    # -- criteria from graded samples (EvalGen) ------------------------------------------------------------------------
    def propose(self, values: tuple[Any, ...], base_text: str, run: str | None, grades: str, lang: Lang
                ) -> tuple[str, pd.DataFrame]:
        """The kept questions as the form's questions text, and every candidate with its agreement."""
        from rubriceval.studio.selection import parse_grades, propose_questions, select_questions

        rubric = self.rubric(values, base_text)
        graded = parse_grades(grades or "", {x.id: x for x in self.samples(run)})

        async def ask() -> Any:
            judge = make_judge(self.judge, announce=False)
            try:
                proposed, _ = await propose_questions(graded, judge, rubric.language)
                return await select_questions(rubric, proposed, graded, judge)
            finally:
                await judge.close()

        candidates, _ = asyncio.run(ask())
        kept = [f"{c.id}: {c.ask}" for c in candidates if c.kept]
        frame = pd.DataFrame([[c.id, c.ask, c.answered, None if c.agreement is None else round(c.agreement, 2),
                               c.polarity, "✔" if c.kept else ""] for c in candidates],
                             columns=headers(CANDIDATE_COLUMNS, self.lang))
        current = form_of(values).questions
        merged = [f"{qid}: {ask}" for qid, ask in current] + [k for k in kept
                                                              if k.split(":", 1)[0] not in dict(current)]
        return "\n".join(merged), frame

    # -- drafting -----------------------------------------------------------------------------------------------------
    def draft(self, document: str, upload: str | None, lang: Lang) -> Iterator[tuple[str, list[Any] | None]]:
        """(progress, None) every second while the judge drafts — it can take minutes on a small local judge — then
        (done, the form's values)."""
        text = read_document(upload) if upload else document
        if not (text or "").strip():
            raise RubricEvalError("paste or upload the procedure to draft from", field="document")

        async def ask() -> Any:
            judge = make_judge(self.judge, announce=False)
            try:
                return await draft_from_document(text, judge, lang)
            finally:
                await judge.close()

        started = time.monotonic()
        with ThreadPoolExecutor(max_workers=1) as pool:
            future = pool.submit(asyncio.run, ask())
            while True:
                try:
                    form, asked = future.result(timeout=1.0)
                    break
                except FutureTimeout:
                    yield t("studio_drafting", lang, seconds=int(time.monotonic() - started),
                            chars=len(text)), None
        if form is None:
            raise RubricEvalError(f"the judge gave no usable draft: {asked.reason or asked.unscored_kind}",
                                  field="document", hint="try again, or shorten the document")
        yield t("studio_drafted", lang, seconds=int(time.monotonic() - started)), values_of(form)
