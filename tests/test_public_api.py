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

    assert evaluate.__module__ == "rubriceval.api" and JudgeConfig().model == "local"
    assert EmbedderConfig.__module__ == "rubriceval.embed.config" and Sample(id="s1", question="q").question == "q"
    assert set(rubriceval.__all__) <= set(dir(rubriceval))
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        rubriceval.nope  # noqa: B018


def test_import_rubriceval_loads_no_heavy_dependency():
    code = ("import sys, rubriceval; heavy = [m for m in ('pandas', 'numpy', 'openai', 'pydantic', 'jinja2') "
            "if m in sys.modules]; print(','.join(heavy))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == ""
