"""The lines a finished run prints (summary table, counts, cost, store), for online and batch runs alike."""
from __future__ import annotations


def print_run_summary(store, run_id: str, totals) -> None:
    from rubriceval.report.cost import run_cost
    from rubriceval.report.markdown import summary_table, usage_line
    from rubriceval.report.source import RunSource
    from rubriceval.store.location import display_location

    info = store.run_info(run_id)
    summary = RunSource(store, run_id).summary(breakdown=False)       # aggregated in SQL, no verdict loaded
    print(summary_table(summary))
    print(f"run {info.name} ({run_id}): {totals.units_done} judgment(s) new, {totals.units_skipped} resumed; "
          f"{totals.scored} scored, {totals.unscored} unscored {totals.unscored_by_kind or ''}; "
          f"wall {totals.wall_s:.1f}s")
    # What the run spent, summed from its stored verdicts, and the same tokens online and through the Batch API
    # (each judge's at its own prices): the same numbers, with the same labels, as its report.
    failed = sum((totals.judge.get("failures") or {}).values())
    cost = run_cost(info.model_dump(mode="json"), summary)
    from rubriceval.run.scorecard_stage import stored_totals

    usage = summary.usage + stored_totals(store, run_id).usage      # the scorecards' calls count too
    print(usage_line(usage, "en", cost) + (f" · {failed} failed attempt(s) this session "
                                                   f"{totals.judge['failures']}" if failed else ""))
    print(f"store: {display_location(store.path)}")
