"""The gate-check source registry (issue 38.3, rubriceval/report/gate_sources.py): GateCheck.source, parsing,
labels, statistics, `… by` and evaluation are derived from it, and the syntax docs name every source."""
from __future__ import annotations

import typing

import pytest

from rubriceval.report import gate_checks
from rubriceval.report.gate_checks import GateCheck, GateUsageError, parse_check
from rubriceval.report.gate_sources import DEFAULT_SOURCE, GATE_SOURCES, SOURCE_NAMES, resolve

SOURCES = list(GATE_SOURCES.values())


def test_the_check_model_takes_exactly_the_registered_sources():
    assert typing.get_args(GateCheck.model_fields["source"].annotation) == SOURCE_NAMES
    assert GateCheck.model_fields["source"].default == DEFAULT_SOURCE


@pytest.mark.parametrize("source", SOURCES, ids=lambda s: s.name)
def test_each_example_parses_to_its_source_and_its_label_reads_back(source):
    check = parse_check(source.example)
    assert check.source == source.name and check.stat in source.stats
    again = parse_check(check.model_copy(update={"name": ""}).label())
    assert again.model_dump(exclude={"name"}) == check.model_dump(exclude={"name"})


@pytest.mark.parametrize("source", SOURCES, ids=lambda s: s.name)
def test_every_statistic_of_a_source_parses(source):
    prefix = source.prefixes[0] if source.prefixes else ""
    for stat in source.stats:
        if source.name == "run" and stat in gate_checks.RUN_STATS and stat != "unscored_rate":
            text = f"{stat}>=-0.1"                        # run-level: no scorer
        elif source.name == "trend":
            text = f"{prefix}qa {stat} drop<=0.3"
        else:
            text = f"{prefix}qa {stat}>=0.5"
        check = parse_check(text)
        assert (check.source, check.stat) == (source.name, stat), text


@pytest.mark.parametrize("source", SOURCES, ids=lambda s: s.name)
def test_by_is_read_as_the_source_says_or_refused(source):
    text = source.example + " by agent_id"
    if source.by is None:
        with pytest.raises(GateUsageError, match="segment"):
            parse_check(text)
    else:
        assert parse_check(text).by == "agent_id"
        assert (source.by == "segments") == (source.segments_evaluate is not None)


def test_every_source_is_evaluated_and_documented():
    for source in SOURCES:
        assert source.evaluate is not None or source.name == DEFAULT_SOURCE
        for path in (source.parse, source.evaluate, source.segments_evaluate):
            assert path is None or callable(resolve(path)), path
        lead = source.example.split(":")[0] + ":" if source.prefixes else ""
        assert lead in (gate_checks.__doc__ or ""), source.name


def test_the_run_source_reads_the_scorer_and_run_statistics():
    assert set(GATE_SOURCES["run"].stats) == set(gate_checks.SCORER_STATS + gate_checks.RUN_STATS)


def test_a_gate_file_mapping_takes_the_statistics_of_its_source(tmp_path):
    """Mappings were held to the run's statistics whatever their source: a scorecard's fatal_rate was refused."""
    gate = tmp_path / "gate.yaml"
    gate.write_text("checks:\n  - {source: scorecard, stat: fatal_rate, op: '<=', value: 0.01}\n"
                    "  - {source: trend, scorer: qa, stat: pass_rate, op: '<=', value: 0.1}\n", encoding="utf-8")
    checks = gate_checks.load_gate_config(gate).checks
    assert [(c.source, c.stat) for c in checks] == [("scorecard", "fatal_rate"), ("trend", "pass_rate")]
    assert [c.label() for c in checks] == ["fatal_rate<=0.01", "trend:qa pass_rate drop<=0.1"]
    gate.write_text("checks:\n  - {source: trend, scorer: qa, stat: median, op: '<=', value: 0.1}\n", encoding="utf-8")
    with pytest.raises(GateUsageError, match="unknown statistic 'median'"):
        gate_checks.load_gate_config(gate)
