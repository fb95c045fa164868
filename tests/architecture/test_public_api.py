"""The public API: every name in rubriceval.__all__ resolves, and `import rubriceval` stays light (lazy names)."""
from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

import rubriceval


@pytest.mark.parametrize("name", rubriceval.__all__)
def test_every_public_name_resolves_to_its_defining_module(name):
    value = getattr(rubriceval, name)
    home = importlib.import_module(rubriceval._EXPORTS[name])
    assert value is getattr(home, name)
    assert getattr(value, "__module__", home.__name__).startswith("rubriceval.")


def test_public_names_import_and_list():
    from rubriceval import EmbedderConfig, JudgeConfig, Sample, evaluate

    assert evaluate.__module__ == "rubriceval.run.evaluate" and JudgeConfig().model == "local"
    assert EmbedderConfig.__module__ == "rubriceval.embed.config" and Sample(id="s1", question="q").question == "q"
    assert set(rubriceval.__all__) <= set(dir(rubriceval))
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        rubriceval.nope  # noqa: B018


def test_import_rubriceval_loads_no_heavy_dependency():
    code = ("import sys, rubriceval; heavy = [m for m in ('pandas', 'numpy', 'openai', 'pydantic', 'jinja2') "
            "if m in sys.modules]; print(','.join(heavy))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == ""


def test_the_cli_and_the_report_path_load_only_what_they_use():
    """`rubriceval --help` parses no data and calls no judge; `rubriceval report` never needs the judge client."""
    code = "\n".join([
        "import sys",
        "from rubriceval.cli import build_parser",
        "build_parser()",
        "help_loads = [m for m in ('asyncio', 'pandas', 'openai') if m in sys.modules]",
        "from rubriceval.report.excel import write_excel_report",
        "from rubriceval.report.html import write_html_report",
        "from rubriceval.report.markdown import markdown_summary",
        "from rubriceval.trust.release_gate import agreement_lines",
        "print(','.join(help_loads) + '|' + str('openai' in sys.modules))"])
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "|False"
