"""Studio versions in the run store (issue 30.3, a server setup without a writable rubrics folder): the same save,
diff and restore as the folder, on SQLite and PostgreSQL; the table is append-only and a racing save is refused."""
from __future__ import annotations

import shutil
from contextlib import closing
from pathlib import Path

import pytest

from rubriceval.cli.studio import versions_place
from rubriceval.common.errors import RubricEvalError
from rubriceval.judge.config import JudgeConfig
from rubriceval.store.runs import RunStore
from rubriceval.store.studio_versions import StudioVersionStore
from rubriceval.studio.form import form_from_yaml, yaml_from_form
from rubriceval.studio.scorecards import scorecard_tag
from rubriceval.studio.versions import StoreShelf, diff, fingerprint, history, restore_version, save_version
from rubriceval.ui.studio.actions import Studio, values_of
from rubriceval.validate.lint import validate_path

ROOT = Path(__file__).resolve().parents[2]
SOURCE = (ROOT / "rubrics" / "closing.yaml").read_text(encoding="utf-8")


def test_save_diff_restore_in_the_store_seeded_by_a_read_only_folder(store_target, tmp_path):
    seed = tmp_path / "rubrics"
    seed.mkdir()
    (seed / "closing.yaml").write_text(SOURCE, encoding="utf-8")
    shelf = StoreShelf(store_target, "rubric", seed)
    assert shelf.ids() == ["closing"] and shelf.current("closing") == SOURCE and history(shelf, "closing") == []
    form = form_from_yaml(SOURCE)
    form.levels[2] = "有结束语但敷衍"
    draft = yaml_from_form(form, SOURCE)
    assert "+  2: 有结束语但敷衍" in diff(shelf.current("closing"), draft, "closing.yaml")
    saved = save_version(shelf, draft, based_on=fingerprint(SOURCE), saved_by="lead")
    assert saved.version == 2 and history(shelf, "closing") == [1, 2]
    assert (seed / "closing.yaml").read_text(encoding="utf-8") == SOURCE            # the folder is not written
    current = shelf.current("closing")
    assert "有结束语但敷衍" in current and "version: 2" in current
    checked = tmp_path / "check" / "closing.yaml"
    checked.parent.mkdir()
    checked.write_text(current, encoding="utf-8")
    rubrics, findings = validate_path(checked)
    assert findings == [] and rubrics[0].version_tag == saved.version_tag
    with pytest.raises(RubricEvalError, match="changed since"):
        save_version(shelf, draft, based_on=fingerprint(SOURCE))                    # made from version 1: stale
    restored = restore_version(shelf, "closing", 1, saved_by="lead")
    assert restored.version == 3 and shelf.current("closing") == SOURCE.replace("version: 1", "version: 3")
    with closing(RunStore(store_target)) as runs:
        table = StudioVersionStore(runs.conn)
        rows = [table.get("rubric", "closing", v) for v in (1, 2, 3)]
        assert [r.saved_by for r in rows] == ["(before the studio)", "lead", "lead"]
        with pytest.raises(Exception, match="append-only"):
            runs.conn.execute("UPDATE studio_versions SET text = 'x'")
        with pytest.raises(Exception, match="append-only"):
            runs.conn.execute("DELETE FROM studio_versions")
        with pytest.raises(RubricEvalError, match="saved meanwhile"):            # two saves raced for version 3
            table.append("rubric", "closing", 3, "id: closing\n", "v3@x", "bob")
    assert shelf.current("closing") == SOURCE.replace("version: 1", "version: 3")


def test_a_scorecard_and_a_new_rubric_without_any_folder(store_target, monkeypatch):
    # Without a folder a draft's knowledge: is read from the working directory: where the shipped policies are.
    monkeypatch.chdir(ROOT / "scorecards")
    card = (ROOT / "scorecards" / "ecommerce_qa_zh.yaml").read_text(encoding="utf-8")
    cards = StoreShelf(store_target, "scorecard")
    first = save_version(cards, card, based_on="", validate=scorecard_tag, saved_by="lead")
    assert first.version == 1 and cards.ids() == ["ecommerce_qa_zh"]     # a new entry of this store: version 1
    assert "# 电商客服质检评分表" in cards.current("ecommerce_qa_zh")
    studio = Studio(Path("/nonexistent/rubrics"), store_target, JudgeConfig(model="stub"), versions_in="store")
    values = values_of(form_from_yaml(SOURCE.replace("id: closing", "id: closing_new")))
    status, view, printed = studio.save(tuple(values), "", "", "en", saved_by="lead")
    assert "version 1" in status and studio.rubric_files() == ["closing_new"] and fingerprint(view.base_text) == printed
    assert studio.history("closing_new") == [1] and studio.scorecard_files() == ["ecommerce_qa_zh"]


def test_auto_keeps_versions_beside_a_writable_folder_else_in_the_store(tmp_path):
    assert versions_place("auto", tmp_path) == "files"
    assert versions_place("auto", tmp_path / "missing") == "store"
    assert versions_place("store", tmp_path) == "store"


def test_the_store_versions_export_as_files_runs_read(tmp_path, capsys, monkeypatch):
    from rubriceval.cli import main
    from rubriceval.scorecard.loader import load_scorecard

    monkeypatch.chdir(ROOT / "scorecards")          # the shipped card's knowledge: is read from here
    store = tmp_path / "runs.sqlite"
    save_version(StoreShelf(store, "rubric"), SOURCE, based_on="", saved_by="lead")
    card = (ROOT / "scorecards" / "ecommerce_qa_zh.yaml").read_text(encoding="utf-8")
    save_version(StoreShelf(store, "scorecard"), card, based_on="", validate=scorecard_tag, saved_by="lead")
    assert main(["studio", "--store", str(store), "--export-to", str(tmp_path / "out")]) == 0
    rubrics, findings = validate_path(tmp_path / "out" / "rubrics")
    assert findings == [] and [r.id for r in rubrics] == ["closing"] and rubrics[0].version == 1
    # The store keeps the card's text, not the policies it names: they go beside the exported card.
    shutil.copy(ROOT / "scorecards" / "ecommerce_policies_zh.md", tmp_path / "out" / "scorecards")
    assert load_scorecard(tmp_path / "out" / "scorecards" / "ecommerce_qa_zh.yaml").version == 1
    assert "wrote 1 rubric(s)" in capsys.readouterr().out
