"""Runs read the rubric and scorecard versions the studio saved in the run store (issue 30.5, a server setup with no
writable rubrics folder): `--rubrics store:`, `--scorecards store:ID@N`, `rubriceval validate store:`, and
evaluate(rubrics="store:"), on SQLite and PostgreSQL. A stored version is the same rubric as its file (same version
tag, so reports see no new version); its errors name it (store:<id>@v<N>) with line and field."""
from __future__ import annotations

import json
from contextlib import closing
from pathlib import Path

import pytest

from rubriceval.cli import main
from rubriceval.common.errors import RubricEvalError
from rubriceval.rubric.loader import load_rubric
from rubriceval.run.evaluate import evaluate
from rubriceval.scorecard.loader import load_scorecard
from rubriceval.store.runs import RunStore
from rubriceval.store.scorecards import ScorecardStore
from rubriceval.store.stored_sources import load_rubrics, load_scorecards
from rubriceval.store.studio_versions import StudioVersionStore
from rubriceval.studio.scorecards import scorecard_tag
from rubriceval.studio.versions import StoreShelf, export, fingerprint, save_version

ROOT = Path(__file__).resolve().parents[2]
LINK = (ROOT / "rubrics" / "required_link.yaml").read_text(encoding="utf-8")     # checks only: no judge runs
CARD = """# a checks-only card
id: short_card
name: 短答质检
version: 1
scope: sample
base: 100
dimensions:
  - {id: style, name: 表达}
items:
  - id: too_long
    name: 回答过长
    dimension: style
    points: -10
    check: {type: max_length, max_chars: 60}
"""
ANSWER = "您好，请在 https://example.com/invoice 申请开具发票，提交后 3 个工作日内开出。"
SAMPLES = [{"id": f"s{i}", "question": "发票在哪里申请？", "tags": ["需链接"], "answer": ANSWER + "谢谢！" * i,
            "contexts": ["开票入口：https://example.com/invoice"]} for i in range(3)]


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    path = tmp_path / "data.jsonl"
    path.write_text("".join(json.dumps(s, ensure_ascii=False) + "\n" for s in SAMPLES), encoding="utf-8")
    return path


def _studio_saves(store, tmp_path: Path) -> None:
    """What the studio does on a server: rubric v1 from a read-only seed folder, then v2 (max 40 characters) saved
    in the store; a new scorecard saved as v1, then v2 (max 100 characters)."""
    seed = tmp_path / "seed"
    seed.mkdir()
    (seed / "required_link.yaml").write_text(LINK, encoding="utf-8")
    rubrics = StoreShelf(store, "rubric", seed)
    save_version(rubrics, LINK.replace("max_chars: 400", "max_chars: 40"), based_on=fingerprint(LINK), saved_by="lead")
    cards = StoreShelf(store, "scorecard")
    save_version(cards, CARD, based_on="", validate=scorecard_tag, saved_by="lead")
    save_version(cards, CARD.replace("max_chars: 60", "max_chars: 100"), based_on=fingerprint(cards.current("short_card")),
                 validate=scorecard_tag, saved_by="lead")


def test_a_run_reads_the_stored_versions_with_the_version_tags_of_their_files(store_target, tmp_path, dataset,
                                                                               capsys):
    _studio_saves(store_target, tmp_path)
    files = tmp_path / "exported"
    export(StoreShelf(store_target, "rubric"), files / "rubrics")
    export(StoreShelf(store_target, "scorecard"), files / "scorecards")
    from_file = load_rubric(files / "rubrics" / "required_link.yaml")
    card_file = load_scorecard(files / "scorecards" / "short_card.yaml")
    assert from_file.version_tag.startswith("v2@") and card_file.version_tag.startswith("v2@")

    assert main(["run", str(dataset), "--rubrics", "store:", "--scorecards", "store:short_card", "--name", "srv",
                 "--quiet", "--store", str(store_target)]) == 0
    with closing(RunStore(store_target)) as runs:
        run_id = runs.resolve("srv")
        verdicts = [v for v in runs.verdicts(run_id) if v.scorer == "required_link"]
        cards = ScorecardStore(runs).verdicts(run_id)
        assert runs.run_info(run_id).config.rubrics == {"required_link": from_file.version_tag}
    assert len(verdicts) == 3 and {v.scorer_version for v in verdicts} == {from_file.version_tag}
    assert all(v.score is not None for v in verdicts)
    assert len(cards) == 3 and {c.version for c in cards} == {card_file.version_tag}

    # The Python API reads the same; @N picks a version (1: the seed file as it was before the studio).
    result = evaluate(str(dataset), rubrics="store:required_link@1", scorecards="store:short_card@v1",
                      store=store_target, progress=False, name="api")
    seed_tag = load_rubrics(ROOT / "rubrics", only=["required_link"])[0].version_tag
    first = [v for v in result.verdicts if v.scorer == "required_link"]
    assert {v.scorer_version for v in first} == {seed_tag} != {from_file.version_tag}
    assert all(a.score > b.score for a, b in zip(first, verdicts))          # v2's 40 characters bite, v1's 400 not
    with closing(RunStore(store_target)) as runs:
        first_card = {c.version for c in ScorecardStore(runs).verdicts(result.run_id)}
    assert first_card == {load_scorecards("store:short_card@1", store=store_target)[0].version_tag}
    assert first_card != {card_file.version_tag}

    capsys.readouterr()
    assert main(["validate", "store:", "--store", str(store_target)]) == 0
    assert "1 rubric(s) valid, 0 error(s)" in capsys.readouterr().out


def test_an_unknown_id_or_version_is_refused_naming_what_is_stored(store_target, tmp_path, dataset, capsys):
    _studio_saves(store_target, tmp_path)
    with pytest.raises(RubricEvalError) as unknown:
        load_rubrics("store:process_compliance", store=store_target)
    assert unknown.value.file == "store:process_compliance" and "no stored rubric 'process_compliance'" in str(
        unknown.value.message) and "required_link" in (unknown.value.hint or "")
    with pytest.raises(RubricEvalError, match="no stored version 7") as version:
        load_scorecards("store:short_card@7", store=store_target)
    assert "[1, 2]" in (version.value.hint or "")
    with pytest.raises(RubricEvalError, match="does not name stored rubrics"):
        load_rubrics("store:@2", store=store_target)
    assert main(["run", str(dataset), "--rubrics", "store:nope", "--quiet", "--store", str(store_target)]) == 2
    assert "error: store:nope [id]: no stored rubric 'nope'" in capsys.readouterr().err
    with closing(RunStore(store_target)) as runs:
        assert runs.list_runs() == []                                 # refused before a run was started


def test_a_bad_stored_version_is_named_with_its_line_and_field(store_target, capsys):
    with closing(RunStore(store_target)) as runs:                     # written past the studio, which validates
        StudioVersionStore(runs.conn).append("rubric", "required_link", 3, LINK.replace("threshold: 4", "threshold: high"),
                                             "", "script")
    line = LINK.splitlines().index("threshold: 4") + 1
    with pytest.raises(RubricEvalError) as bad:
        load_rubrics("store:", store=store_target)
    assert (bad.value.file, bad.value.line, bad.value.field) == ("store:required_link@v3", line, "threshold")
    assert main(["validate", "store:required_link", "--store", str(store_target)]) == 2
    assert f"error: store:required_link@v3:{line} [threshold]" in capsys.readouterr().out


def test_a_missing_sqlite_store_is_refused_not_created(tmp_path):
    missing = tmp_path / "none" / "runs.sqlite"
    with pytest.raises(RubricEvalError, match="no run store at"):
        load_rubrics("store:", store=missing)
    assert not missing.exists()
    RunStore(tmp_path / "empty.sqlite").close()
    with pytest.raises(RubricEvalError, match="no rubric versions saved in this run store"):
        load_rubrics("store:", store=tmp_path / "empty.sqlite")
