"""One schema for the run store (rubriceval/store/schema.py), reached by every store through the numbered steps of
store/migrations.py.

tests/fixtures/stores/release_f67a6b6/ holds a store written by the release before the schema had one home, with rows
in every table (tests/fixtures/stores/build_release_store.py made it with that release's code), and the HTML,
Markdown and Excel reports that release rendered from it. Opened with this code, the store migrates, and its reports
come out byte-identical apart from when they were generated (and openpyxl's version in the workbook's properties).
A migrated store has exactly the schema of a new store, on SQLite and on PostgreSQL; migrating again changes nothing.
"""
from __future__ import annotations

import io
import re
import shutil
import sqlite3
import time
import zipfile
from pathlib import Path

import pytest

from rubriceval.store import schema
from rubriceval.store.append_only import make_append_only
from rubriceval.store.db import Database
from rubriceval.store.migrations import LATEST, STEPS, schema_version, upgrade
from rubriceval.store.runs import RunStore

STORES = Path(__file__).parents[1] / "fixtures" / "stores"
RELEASE = STORES / "release_f67a6b6"
RELEASE_VERSION = 5                       # the schema version that release wrote
REPO = Path(__file__).resolve().parents[2]


# -- the stores -----------------------------------------------------------------------------------------------------
def release_copy(folder: Path) -> Path:
    target = folder / "release.sqlite"
    shutil.copyfile(RELEASE / "release_store.sqlite", target)
    return target


def v0_copy(folder: Path) -> Path:
    """The store of the first release, before schema versions (tests/store/test_store_upgrade.py tells its story)."""
    target = folder / "v0.sqlite"
    with sqlite3.connect(target) as conn:
        conn.executescript((STORES / "v0_runs.sql").read_text(encoding="utf-8"))
    conn.close()
    return target


_SERIAL = re.compile(r"\bINTEGER PRIMARY KEY\b(?!\s+AUTOINCREMENT)", re.I)


def on_server(sqlite_path: Path, url: str) -> str:
    """The SQLite store's tables and rows in a PostgreSQL database, as that release would have written them there:
    its CREATE statements through the store's connection (which maps the types), the newer auto-numbered keys as
    identity columns (schema.SERIAL_PK), PostgreSQL's own append-only triggers where SQLite had its triggers, the
    identity counters past the copied ids, and the same schema version."""
    source = sqlite3.connect(sqlite_path)
    objects = source.execute("SELECT type, name, tbl_name, sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT "
                             "LIKE 'sqlite_%' ORDER BY CASE type WHEN 'table' THEN 0 WHEN 'index' THEN 1 ELSE 2 END, "
                             "rowid").fetchall()
    db = Database(url)
    with db:
        guarded = {}
        for kind, _name, table, sql in objects:
            if kind == "trigger":
                guarded[table] = re.search(r"RAISE\(ABORT, '([^']*)'\)", sql).group(1)
            elif kind == "table":
                db.execute(_SERIAL.sub(schema.SERIAL_PK["postgresql"], sql))
            else:
                db.execute(sql)
        for kind, name, _, _ in objects:
            if kind != "table":
                continue
            cursor = source.execute(f'SELECT * FROM "{name}"')
            columns = [c[0] for c in cursor.description]
            rows = cursor.fetchall()
            if rows:
                db.executemany(f"INSERT INTO {name} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})",
                               rows)
        for table, column in db.execute(
                "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema() "
                "AND is_identity = 'YES'").fetchall():
            db.execute(f"SELECT setval(pg_get_serial_sequence('{table}', '{column}'), "
                       f"(SELECT COALESCE(MAX({column}), 0) + 1 FROM {table}), false)")
        make_append_only(db, guarded)
        db.set_schema_version(source.execute("PRAGMA user_version").fetchone()[0])
    source.close()
    db.close()
    return url


@pytest.fixture(params=["sqlite", "postgresql"])
def engine(request: pytest.FixtureRequest) -> str:
    return request.param


def new_target(engine: str, request: pytest.FixtureRequest, folder: Path, name: str) -> str | Path:
    if engine == "sqlite":
        return folder / f"{name}.sqlite"
    return request.getfixturevalue("postgres_server").create_database(f"{name}_{time.time_ns() % 10**9}")


def old_store(engine: str, request: pytest.FixtureRequest, folder: Path, which: str) -> str | Path:
    path = release_copy(folder) if which == "release" else v0_copy(folder)
    return path if engine == "sqlite" else on_server(path, new_target(engine, request, folder, which))


# -- what a store holds ---------------------------------------------------------------------------------------------
def _squeeze(sql: str) -> str:
    return re.sub(r"\s+", "", sql)


def schema_of(db: Database) -> dict[str, object]:
    """Every table, column, constraint, index, view and trigger, as the database itself describes them."""
    if not db.is_postgresql:
        rows = db.execute("SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' "
                          "ORDER BY type, name").fetchall()
        out: dict[str, object] = {f"{t} {n}": (table, _squeeze(sql or "")) for t, n, table, sql in rows}
        for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"):
            out[f"columns {name}"] = [tuple(r) for r in db.execute(f"PRAGMA table_xinfo({name})").fetchall()]
        return out
    here = "current_schema()"
    queries = {
        "columns": "SELECT table_name, ordinal_position, column_name, data_type, is_nullable, column_default, "
                   f"is_identity FROM information_schema.columns WHERE table_schema = {here}",
        "constraints": "SELECT c.conrelid::regclass::text, c.conname, pg_get_constraintdef(c.oid) FROM pg_constraint c "
                       f"WHERE c.connamespace = to_regnamespace({here})::oid",
        "indexes": f"SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = {here}",
        "views": f"SELECT viewname, definition FROM pg_views WHERE schemaname = {here}",
        "triggers": "SELECT c.relname, t.tgname, pg_get_triggerdef(t.oid) FROM pg_trigger t JOIN pg_class c ON "
                    f"c.oid = t.tgrelid WHERE NOT t.tgisinternal AND c.relnamespace = to_regnamespace({here})::oid",
        "functions": "SELECT proname, prosrc FROM pg_proc WHERE pronamespace = to_regnamespace(current_schema())::oid",
    }
    return {kind: sorted(tuple(map(str, r)) for r in db.execute(sql).fetchall()) for kind, sql in queries.items()}


def contents(db: Database) -> dict[str, list[tuple]]:
    out = {}
    for name in (*schema.TABLES, *schema.VIEWS):
        rows = db.execute(f"SELECT * FROM {name}").fetchall()
        out[name] = sorted((tuple(r) for r in rows), key=repr)
    return out


def opened(target: str | Path) -> Database:
    """The store opened as every command opens it (RunStore: migrated once), then a connection of its own."""
    RunStore(target).close()
    return Database(target)


# -- the tests ------------------------------------------------------------------------------------------------------
def test_the_fixture_is_the_previous_release_with_rows_in_every_table(tmp_path: Path) -> None:
    db = Database(release_copy(tmp_path))
    assert db.schema_version() == RELEASE_VERSION
    present = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")}
    assert set(schema.TABLES) | set(schema.VIEWS) <= present
    empty = [t for t in schema.TABLES if db.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] == 0]
    assert not empty, f"the fixture should have rows in every table: {empty}"
    db.close()
    assert (RELEASE / "release_store.sqlite").stat().st_size + sum(
        p.stat().st_size for p in (RELEASE / "reports").iterdir()) < 2_000_000


@pytest.mark.parametrize("which", ["release", "v0"])
def test_a_migrated_store_has_the_schema_of_a_new_store(engine: str, which: str, request: pytest.FixtureRequest,
                                                        tmp_path: Path) -> None:
    old = opened(old_store(engine, request, tmp_path, which))
    new = opened(new_target(engine, request, tmp_path, "fresh"))
    assert old.schema_version() == new.schema_version() == LATEST
    migrated, fresh = schema_of(old), schema_of(new)
    assert migrated.keys() == fresh.keys()
    for key in fresh:
        assert migrated[key] == fresh[key], key
    old.close()
    new.close()


# Tables the releases before step 6 created only when a module first used them (any subset may be in a store).
MADE_ON_FIRST_USE = ("audit_responses", "audit_gt_edits", "audit_versions", "audit_log", "audit_turn_verdicts",
                     "team_task_plan", "appeals", "appeal_events", "appeal_windows", "calibration_sessions",
                     "calibration_items", "calibration_grades", "scorecard_defs", "scorecard_verdicts",
                     "scorecard_reviews", "agreement_results", "rubric_versions", "pairwise_comparisons",
                     "pairwise_verdicts", "batch_files", "batch_requests", "batch_file_endpoints", "watermarks",
                     "source_files", "increments")


@pytest.mark.parametrize("version", [0, 1, 2, 3, 4, 5])
@pytest.mark.parametrize("kept", ["none", "every other", "all"])
def test_a_store_of_any_earlier_version_with_any_first_use_tables_migrates(version: int, kept: str,
                                                                           tmp_path: Path) -> None:
    """A store as a release of schema `version` left it (the first release's store taken through the steps up to
    `version`; those steps made what the releases' steps made), holding some of the tables made on first use."""
    path = release_copy(tmp_path) if version == 5 else v0_copy(tmp_path)
    db = Database(path)
    for step in STEPS[db.schema_version():version]:
        with db:
            step.apply(db)
            db.set_schema_version(step.version)
    keep = {"none": (), "every other": MADE_ON_FIRST_USE[::2], "all": MADE_ON_FIRST_USE}[kept]
    for table in MADE_ON_FIRST_USE:
        if table not in keep:
            db.execute(f"DROP TABLE IF EXISTS {table}")
    assert db.schema_version() == version
    db.close()
    migrated = schema_of(opened(path))
    assert migrated == schema_of(opened(tmp_path / "fresh.sqlite"))


def test_migrating_again_changes_nothing(engine: str, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    db = opened(old_store(engine, request, tmp_path, "release"))
    before = (schema_of(db), contents(db))
    assert upgrade(db) == LATEST                      # opened again: nothing to do
    for step in STEPS:                                # and every step run a second time: each one is idempotent
        with db:
            step.apply(db)
    assert (schema_of(db), contents(db)) == before
    assert schema_version(db) == LATEST
    db.close()


def test_migration_keeps_every_row_of_the_release(tmp_path: Path) -> None:
    path = release_copy(tmp_path)
    before = contents(Database(path))
    after = contents(opened(path))
    assert after == before


def test_no_module_but_the_schema_creates_run_store_tables() -> None:
    ddl = re.compile(r"\b(CREATE\s+(UNIQUE\s+)?(TABLE|INDEX|VIEW)|ALTER\s+TABLE)\b")
    # the schema and its helpers; the version record; the separate databases (judge cache, a spill file of rows)
    allowed = {"store/schema.py", "store/append_only.py", "store/db.py", "judge/cache.py", "data/row_groups.py"}
    offenders = [str(path.relative_to(REPO)) for path in sorted((REPO / "rubriceval").rglob("*.py"))
                 if path.relative_to(REPO / "rubriceval").as_posix() not in allowed
                 and ddl.search(path.read_text(encoding="utf-8"))]
    assert not offenders, f"declare tables in rubriceval/store/schema.py, not in {offenders}"


# -- the reports ----------------------------------------------------------------------------------------------------
_GENERATED = [
    (re.compile(r"(生成于|[Gg]enerated (?:at|on)) \d{4}-\d{2}-\d{2} \d{2}:\d{2}"), r"\1 <date>"),
]
_WORKBOOK = {
    "docProps/core.xml": [(re.compile(r"(<dcterms:(?:created|modified)\b[^>]*>)[^<]*(</dcterms)"), r"\1<date>\2")],
    "docProps/app.xml": [(re.compile(r"<AppVersion>[^<]*</AppVersion>"), "<AppVersion>?</AppVersion>")],
}


def normalised(text: str, rules: list) -> str:
    for pattern, replacement in rules:
        text = pattern.sub(replacement, text)
    return text


def workbook_parts(path: Path) -> dict[str, bytes]:
    """The workbook's files (a zip's own member dates aside), with the properties' dates and version normalised."""
    with zipfile.ZipFile(io.BytesIO(path.read_bytes())) as book:
        return {name: normalised(book.read(name).decode("utf-8"), _WORKBOOK[name]).encode("utf-8")
                if name in _WORKBOOK else book.read(name) for name in sorted(book.namelist())}


@pytest.fixture()
def utc(monkeypatch: pytest.MonkeyPatch):
    """The fixture's reports were rendered in UTC (times of day are printed in local time)."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def test_the_release_store_migrates_and_renders_the_same_reports(tmp_path: Path, utc: None) -> None:
    from rubriceval.cli import main

    path = release_copy(tmp_path)
    store = RunStore(path)
    assert schema_version(store.conn) == LATEST
    names = [r.name for r in store.list_runs()]
    store.close()
    expected = sorted(p.name for p in (RELEASE / "reports").iterdir())
    assert sorted(f"{n}.{ext}" for n in names for ext in ("html", "md", "xlsx")) == expected
    out = tmp_path / "reports"
    for name in names:
        assert main(["report", name, "--store", str(path), "--out", str(out)]) in (0, None)
    for file in expected:
        old, new = RELEASE / "reports" / file, out / file
        if file.endswith(".xlsx"):
            assert workbook_parts(new) == workbook_parts(old), file
        else:
            assert normalised(new.read_text(encoding="utf-8"), _GENERATED) == \
                normalised(old.read_text(encoding="utf-8"), _GENERATED), file


def _number_cells(path: Path) -> dict[str, list[float]]:
    import numbers

    import openpyxl

    book = openpyxl.load_workbook(path, read_only=True)
    found = {}
    for sheet in book.worksheets:
        values = [round(float(v), 9) for row in sheet.iter_rows(values_only=True) for v in row
                  if isinstance(v, numbers.Number) and not isinstance(v, bool)]
        found[sheet.title] = sorted(values)
    return found


def test_the_release_stores_figures_are_the_previous_releases(tmp_path: Path, utc: None) -> None:
    """The reports above are this release's rendering (wording, section order and zh translations changed on purpose:
    issues 38.4 and 43); the figures are not: every number in every workbook the previous release (f67a6b6) wrote
    from this store is in the migrated store's workbook, sheet by sheet (a sheet's title may have been translated)."""
    from rubriceval.cli import main

    path = release_copy(tmp_path)
    store = RunStore(path)
    names = [r.name for r in store.list_runs()]
    store.close()
    out = tmp_path / "reports"
    for name in names:
        assert main(["report", name, "--store", str(path), "--out", str(out)]) in (0, None)
    for old in sorted((RELEASE / "reports_by_f67a6b6").glob("*.xlsx")):
        before, after = _number_cells(old), _number_cells(out / old.name)
        assert sorted(before.values()) == sorted(after.values()), old.name
