"""How a batch run is shown: one progress line per collect (rounds, requests, completed, failed, cost at the
batch price beside the online price), for a panel's run one more line per judge endpoint (each at its own
prices), and the per-file status table of `rubriceval batch status`."""
from __future__ import annotations

from rubriceval.batch.endpoints import RunJudges
from rubriceval.judge.config import JudgeConfig
from rubriceval.judge.pricing import JudgePrices, side_by_side
from rubriceval.store.batches import BatchFile, BatchStore, RequestCounts


def costs(counts: RequestCounts, config: JudgeConfig) -> tuple[float, float]:
    """(batch cost, the same tokens at the online price) in USD: the recorded cost, and the one pricing function."""
    priced = side_by_side([(JudgePrices.of(config), counts)])
    return counts.cost_usd, priced.online_usd if priced is not None else 0.0


def _requests(counts: RequestCounts, malformed: int = 0) -> str:
    return (f"requests {counts.requests} (open {counts.open}, completed {counts.answered}, failed {counts.failed}"
            + (f", {counts.answer_errors} answered with an error" if counts.answer_errors else "")
            + (f", {malformed} malformed line(s)" if malformed else "") + ")")


def progress_line(counts: RequestCounts, config: JudgeConfig, units_done: int, units_total: int,
                  malformed: int = 0, endpoints: list[tuple[str, RequestCounts, JudgeConfig]] | None = None) -> str:
    """`endpoints` (a panel's run, `by_endpoint`): the online cost is each endpoint's tokens at its own price."""
    batch_cost, online_cost = costs(counts, config)
    if endpoints:
        online_cost = sum(costs(part, part_config)[1] for _, part, part_config in endpoints)
    parts = [f"round {counts.rounds}", _requests(counts, malformed), f"judgments {units_done}/{units_total}",
             f"cost ${batch_cost:.4f} at batch price (online ${online_cost:.4f})"]
    return " · ".join(parts)


def by_endpoint(batches: BatchStore, run_id: str, judges: RunJudges) -> list[tuple[str, RequestCounts, JudgeConfig]]:
    """A panel's run: (label, request counts, config) per judge endpoint; [] for a run with one judge."""
    if not judges.is_panel:
        return []
    files = batches.files(run_id)
    return [(f"{endpoint.label()} ({endpoint.config.short_name()})",
             batches.counts(run_id, [f.file_no for f in files if f.endpoint == endpoint.name]), endpoint.config)
            for endpoint in judges.endpoints]


def endpoint_lines(parts: list[tuple[str, RequestCounts, JudgeConfig]]) -> list[str]:
    """One line per judge endpoint: its requests and its cost at its batch price beside its online price."""
    lines = []
    for label, counts, config in parts:
        batch_cost, online_cost = costs(counts, config)
        lines.append(f"  {label}: {_requests(counts)} · cost ${batch_cost:.4f} at batch price "
                     f"(online ${online_cost:.4f})")
    return lines


def status_table(files: list[BatchFile]) -> str:
    panel = any(f.endpoint for f in files)          # a panel's run: which judge endpoint each file goes to
    lines = [f"{'file':<5}{'round':>6}  " + (f"{'judges':<20}" if panel else "")
             + f"{'batch':<28}{'status':<12}{'requests':>9}{'completed':>10}{'failed':>7}"]
    for f in files:
        batch = f.batch_id or ("(offline file)" if f.target == "offline" else "(not submitted)")
        lines.append(f"{f.file_no:<5}{f.round:>6}  " + (f"{f.endpoint[:19]:<20}" if panel else "")
                     + f"{batch[:27]:<28}{f.status:<12}{f.n_requests:>9}"
                     f"{f.counts.get('completed', ''):>10}{f.counts.get('failed', ''):>7}")
    return "\n".join(lines)
