"""One report composition (issue 38, item 4): the public writers write exactly what `rubriceval report` writes —
scorecards, segments, failure tags and judge agreement included — and every output follows the one section registry
(rubriceval/report/sections.py): the page's sections, the Markdown's and the workbook's sheets come in its order,
each section's title is in both language tables, and every section template is one of its sections'."""
from __future__ import annotations

import re
import zipfile
from pathlib import Path

import pytest
import yaml

from rubriceval import markdown_summary, write_excel_report, write_html_report
from rubriceval.audit.team import TeamStore
from rubriceval.cli import main
from rubriceval.data.segment_spec import TimeSettings
from rubriceval.i18n.catalogue import MESSAGES
from rubriceval.report.compose import RunReport
from rubriceval.report.excel import EXCEL_PARTS
from rubriceval.report.html import HTML_PARTS, HtmlPage, Template
from rubriceval.report.html_env import TEMPLATES
from rubriceval.report.markdown import MARKDOWN_PARTS
from rubriceval.report.sections import SECTIONS
from rubriceval.store.runs import RunStore
from rubriceval.store.team_models import TaskSpec
from rubriceval.testing.stub_server import StubServer
from tests.helpers.team_store import build_team_store

ROOT = Path(__file__).resolve().parents[2]
DEMO_RUBRICS = "process_compliance,emotional_soothing,policy_compliance,required_link,identity_verification,closing"
# (store file, run, report options): the demo run (rubrics, metrics, a conversation, the e-commerce scorecard), a
# week of chat logs (scorecard, conversation rubrics, agents and days to segment by) and a run with failure tags
CASES = {
    "demo": ("runs.sqlite", "demo", ["--by", "intent,tag+intent"]),
    "demo_en_machine": ("runs.sqlite", "demo", ["--lang", "en", "--machine-only", "--by", "tag"]),
    "week": ("runs.sqlite", "week", ["--by", "agent_id,skill_group+day", "--tz", "Asia/Shanghai"]),
    "tagged": ("tagged.sqlite", "tagged", ["--lang", "en", "--by", "tag"]),
}


@pytest.fixture(scope="module")
def stores(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("composition")
    with StubServer() as stub:
        config = root / "judge.yaml"
        config.write_text(yaml.safe_dump({"judge": {"base_url": stub.base_url, "model": "stub",
                                                    "cache_path": str(root / "cache.sqlite")}}))
        common = ["--scorecards", str(ROOT / "scorecards"), "--only-scorecards", "ecommerce_qa_zh", "--config",
                  str(config), "--store", str(root / "runs.sqlite"), "--quiet", "--out", str(root / "run")]
        assert main(["run", str(ROOT / "datasets/demo_zh.jsonl"), "--rubrics", str(ROOT / "rubrics"), "--only",
                     DEMO_RUBRICS, "--metrics", "nonllm_context_precision,rouge_l", "--name", "demo", *common]) == 0
        assert main(["run", str(ROOT / "datasets/chatlog_week_zh.yaml"), "--rubrics", str(ROOT / "rubrics"),
                     "--only", "identity_verification,closing", "--name", "week", *common]) == 0
    build_team_store(root / "tagged.sqlite", n_samples=10, seed=2, run_name="tagged")
    with TeamStore(root / "tagged.sqlite") as team:
        task = team.create_task(TaskSpec(run="tagged", rubrics=["soothing"], n=3, overlap=1, experts=["ann"]),
                                created_by="lead")
        first, second = team.queue(task.task_id, "ann").rows[:2]
        team.save_review(task.task_id, first.item_no, "ann", score=2, tags=["未先安抚", "编造政策"], expected_version=0)
        team.save_review(task.task_id, second.item_no, "ann", score=2, tags=["未先安抚"], expected_version=0)
    return root


def _options(args: list[str]) -> dict:
    """The CLI options as the public writers take them."""
    value = {a: args[i + 1] for i, a in enumerate(args) if a.startswith("--") and i + 1 < len(args)}
    return {"lang": value.get("--lang"), "machine_only": "--machine-only" in args, "by": value.get("--by"),
            "time": TimeSettings(zone=value.get("--tz", "UTC"))}


def _page(path: Path) -> str:
    return re.sub(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2} · ", "<generated> · ", path.read_text(encoding="utf-8"))


def _parts(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as z:
        return {name: z.read(name) for name in z.namelist()}


@pytest.mark.parametrize("case", CASES)
def test_the_public_writers_write_what_rubriceval_report_writes(stores, tmp_path, case, capsys):
    store_file, run, args = CASES[case]
    store = stores / store_file
    assert main(["report", run, "--store", str(store), "--out", str(tmp_path / "cli"), *args]) == 0
    printed = capsys.readouterr().out
    runs, options = RunStore(store), _options(args)
    html = write_html_report(runs, run, tmp_path / "api" / "r.html", **options)
    excel = write_excel_report(runs, run, tmp_path / "api" / "r.xlsx", **options)
    markdown = markdown_summary(runs, run, **options)

    assert _page(html) == _page(tmp_path / "cli" / f"{run}.html")
    assert _parts(excel) == _parts(tmp_path / "cli" / f"{run}.xlsx")          # every sheet's XML, byte for byte
    assert markdown == (tmp_path / "cli" / f"{run}.md").read_text(encoding="utf-8")
    assert printed.startswith(markdown)
    # what the public writers used to leave out
    page, sheets = html.read_text(encoding="utf-8"), _sheet_names(excel)
    assert '<section id="segments">' in page and any(name.startswith("by_") for name in sheets)
    if run == "tagged":
        assert '<section class="failure-tags">' in page and "failure_tags" in sheets
    else:
        assert '<section class="scorecards">' in page and "scorecard ecommerce_qa_zh" in sheets
        assert "质检评分表" in markdown or "Scorecards" in markdown


def _sheet_names(path: Path) -> list[str]:
    with zipfile.ZipFile(path) as z:
        return re.findall(r'<sheet name="([^"]*)"', z.read("xl/workbook.xml").decode())


@pytest.mark.parametrize("case", CASES)
def test_every_output_shows_the_registered_sections_in_the_registry_order(stores, tmp_path, case):
    store_file, run, args = CASES[case]
    report = RunReport.read(RunStore(stores / store_file), run, **_options(args))
    inputs = report.inputs
    present = [s for s in SECTIONS if inputs.built(s) is not None]

    # The page: its main part is the sections' parts, in order, and nothing else (nothing pasted in later).
    page = report.html()
    html_page = HtmlPage(inputs)
    parts = [html_page.part(HTML_PARTS[s.id](s.id, inputs.built(s), html_page)) for s in present if s.id in HTML_PARTS]
    main_part = page[page.index("<main>\n\n") + len("<main>\n\n"):page.index("<footer>")]
    assert main_part == "".join(part + "\n" for part in parts)
    assert page.index("</main>") > page.rindex("</section>")       # the scorecards inside the page, not after it

    # The Markdown: each section's lines, in order, and nothing else.
    lines = [line for s in present if s.id in MARKDOWN_PARTS for line in MARKDOWN_PARTS[s.id](inputs.built(s), inputs)]
    assert report.markdown() == "\n".join(lines).rstrip() + "\n"

    # The workbook: the sheets each present section declares, in the registry's order, and no other.
    names = _sheet_names(report.write_excel(tmp_path / "r.xlsx"))
    declared = [(s.id, sheet) for s in present if s.id in EXCEL_PARTS for sheet in s.sheets]
    position = 0
    for section_id, sheet in declared:
        prefix = sheet[:-1] if sheet.endswith("…") else None
        matched = 0
        while position < len(names) and (names[position] == sheet or prefix and names[position].startswith(prefix)):
            position, matched = position + 1, matched + 1
        assert matched, f"section {section_id}: no sheet {sheet!r} where the registry puts it: {names}"
    assert position == len(names), f"sheets no section declares: {names[position:]}"


def test_the_renderer_tables_templates_titles_and_sheets_agree_with_the_registry():
    ids = [s.id for s in SECTIONS]
    assert len(ids) == len(set(ids))
    for table in (HTML_PARTS, MARKDOWN_PARTS, EXCEL_PARTS):      # a renderer for a section the registry lacks
        assert set(table) <= set(ids), set(table) - set(ids)
    for s in SECTIONS:
        assert set(MESSAGES[s.title_key]) >= {"zh", "en"}, s.id        # its title in both language tables
        assert s.id in HTML_PARTS or s.id in MARKDOWN_PARTS or s.id in EXCEL_PARTS, f"{s.id} is shown nowhere"
        assert bool(s.sheets) == (s.id in EXCEL_PARTS), f"{s.id}: sheets declared iff the workbook draws it"
    # each section template is a drawn section's, and each section drawn by a template has one
    templates = {p.name.removesuffix(".html.j2") for p in (TEMPLATES / "sections").glob("*.html.j2")}
    assert templates == {section for section, draw in HTML_PARTS.items() if isinstance(draw, Template)}
