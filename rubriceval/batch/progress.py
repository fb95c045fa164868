"""How a batch run is shown: one progress line per collect (rounds, requests, completed, failed, cost at the
batch price beside the online price) and the per-file status table of `rubriceval batch status`."""
from __future__ import annotations

from rubriceval.judge.config import JudgeConfig
from rubriceval.store.batches import BatchFile, RequestCounts


def costs(counts: RequestCounts, config: JudgeConfig) -> tuple[float, float]:
    """(batch cost, the same tokens at the online price) in USD."""
    online_in, online_out = config.prices()
    online = (counts.prompt_tokens * online_in + counts.completion_tokens * online_out) / 1e6
    return counts.cost_usd, online


def progress_line(counts: RequestCounts, config: JudgeConfig, units_done: int, units_total: int,
                  malformed: int = 0) -> str:
    batch_cost, online_cost = costs(counts, config)
    parts = [f"round {counts.rounds}",
             f"requests {counts.requests} (open {counts.open}, completed {counts.answered}, failed {counts.failed}"
             + (f", {counts.answer_errors} answered with an error" if counts.answer_errors else "")
             + (f", {malformed} malformed line(s)" if malformed else "") + ")",
             f"judgments {units_done}/{units_total}",
             f"cost ${batch_cost:.4f} at batch price (online ${online_cost:.4f})"]
    return " · ".join(parts)


def status_table(files: list[BatchFile]) -> str:
    lines = [f"{'file':<5}{'round':>6}  {'batch':<28}{'status':<12}{'requests':>9}{'completed':>10}{'failed':>7}"]
    for f in files:
        batch = f.batch_id or ("(offline file)" if f.target == "offline" else "(not submitted)")
        lines.append(f"{f.file_no:<5}{f.round:>6}  {batch[:27]:<28}{f.status:<12}{f.n_requests:>9}"
                     f"{f.counts.get('completed', ''):>10}{f.counts.get('failed', ''):>7}")
    return "\n".join(lines)
