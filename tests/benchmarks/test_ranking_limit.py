"""benchmarks/judge/ranking_limit.py: the best band placed on a writer's own labels is an upper bound for every
band on the checker's ranking — never worse than the fitted one, within the acceptance's undecided limit, and
unable to separate what the ranking ties."""
from __future__ import annotations

import pytest

from benchmarks.judge import checker_fit, ranking_limit
from tests.benchmarks.test_checker_fit import SPECS, KeywordEmbeddings, fit, labelled

pytest.importorskip("sklearn")


def scored(got, labelled_set):
    return checker_fit.scored_cases(labelled_set, checker_fit.heads_of(got.checker, {"local": KeywordEmbeddings()}))


def key(figures):
    return (-figures.silent, round(checker_fit.worst([figures]), 2))


def test_the_best_band_on_a_writer_is_never_worse_than_the_fitted_one():
    got = fit(labelled("a", 6, 20), labelled("b", 5, 18))
    new_writer = scored(got, labelled("c", 4, 16, quiet_leak=True))
    fitted = checker_fit.item_figures(new_writer, "leak_other", got.checker, SPECS)
    (low, high), best = ranking_limit.best_band_on(new_writer, "leak_other", got.checker, SPECS)
    assert low <= high and best.undecided <= ranking_limit.ACCEPTANCE_UNDECIDED * best.n
    assert key(best) >= key(fitted)


def test_a_leak_the_ranking_ties_with_clean_turns_costs_precision_or_undecided_even_there():
    # the quiet leak scores like six clean turns: a band that finds it takes them too (or leaves all seven
    # undecided, over the limit on 27 conversations), so even the best band cannot reach precision 1 and recall 1
    got = fit(labelled("a", 6, 20), labelled("b", 5, 18))
    new_writer = scored(got, labelled("c", 4, 16, quiet_leak=True))
    _, best = ranking_limit.best_band_on(new_writer, "leak_other", got.checker, SPECS)
    assert best.silent == 0 and min(best.recall or 0.0, best.precision or 0.0) < 1.0
