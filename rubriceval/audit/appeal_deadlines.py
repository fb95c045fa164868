"""When appeals close (issue 27.2): a deadline per audit task for the verdicts of that task's samples, and the run's
window for samples in no task. The most specific wins: a sample in a task takes the task's deadline, shorter or
longer than the run's; a sample in several tasks with a deadline takes the newest task's (the lead's latest word).

A task's deadline is `appeal_days` after the task was created (team_tasks.appeal_days, migration step 5; NULL: the
run's window applies); the run's is what a lead set (appeal_windows), else DEFAULT_WINDOW_DAYS after the run.
Every setting is logged with who and when.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, NamedTuple

from rubriceval.store.appeal_models import DAY_S, DEFAULT_WINDOW_DAYS, AppealError, Deadline
from rubriceval.store.audit_models import clean_expert_name, iso_time

if TYPE_CHECKING:
    from rubriceval.audit.team import TeamStore

_TASK_DEADLINES = ("SELECT DISTINCT i.sample_id, t.task_id, t.name, t.created_at, t.appeal_days FROM team_task_items i "
                   "JOIN team_tasks t ON t.task_id = i.task_id WHERE t.run_id = :r AND t.appeal_days IS NOT NULL")


def check_days(days: float) -> float:
    if not math.isfinite(float(days)) or days < 0:
        raise AppealError("an appeal deadline is a number of days, 0 or more", field="days")
    return float(days)


class Deadlines(NamedTuple):
    """A run's deadlines: its window, and each task-covered sample's own."""

    run: Deadline
    by_sample: dict[str, Deadline]

    def of(self, sample_id: str) -> Deadline:
        return self.by_sample.get(sample_id, self.run)


def run_deadline(team: TeamStore, run_id: str) -> Deadline:
    created = team.audit.runs.run_info(run_id).created_at
    rows = team.query("SELECT closes_at FROM appeal_windows WHERE run_id = :r", {"r": run_id})
    if rows:
        return Deadline(closes_at=float(rows[0][0]), days=(float(rows[0][0]) - created) / DAY_S)
    return Deadline(closes_at=created + DEFAULT_WINDOW_DAYS * DAY_S)


def _task_deadline(row: Any) -> Deadline:
    days = float(row["appeal_days"])
    return Deadline(closes_at=float(row["created_at"]) + days * DAY_S, task=row["name"], days=days)


def deadlines(team: TeamStore, run_id: str) -> Deadlines:
    """Every deadline of a run at once (an agent's list of verdicts, the appeals inbox)."""
    by_sample: dict[str, Deadline] = {}
    # Oldest task first, so a newer task's deadline replaces an older one's.
    for row in team.query(_TASK_DEADLINES + " ORDER BY t.created_at, t.task_id", {"r": run_id}):
        by_sample[row["sample_id"]] = _task_deadline(row)
    return Deadlines(run_deadline(team, run_id), by_sample)


def sample_deadline(team: TeamStore, run_id: str, sample_id: str) -> Deadline:
    """The deadline for the verdicts of one sample (what `submit` checks)."""
    rows = team.query(_TASK_DEADLINES + " AND i.sample_id = :s ORDER BY t.created_at DESC, t.task_id DESC LIMIT 1",
                      {"r": run_id, "s": sample_id})
    return _task_deadline(rows[0]) if rows else run_deadline(team, run_id)


def set_task_deadline(team: TeamStore, task: str, *, days: float | None, by: str, now: float) -> Deadline | None:
    """A lead sets (or, with None, clears) a task's appeal deadline: `days` after the task was created."""
    by = clean_expert_name(by)
    days = None if days is None else check_days(days)
    info = team.task(task)
    with team.writing() as conn:
        conn.execute("UPDATE team_tasks SET appeal_days = :d WHERE task_id = :t", {"d": days, "t": info.task_id})
        closes = None if days is None else info.created_at + days * DAY_S
        team.log(by, "appeal_task_deadline", info.run_id, "", "", "saved",
                 {"task_id": info.task_id, "task": info.name, "days": days, "closes_at": closes, "at": now})
    return None if closes is None else Deadline(closes_at=closes, task=info.name, days=days)


def refusal(deadline: Deadline) -> str:
    """What an agent is told after the deadline: which deadline, and when it closed."""
    days = deadline.days or 0
    setting = f" ({days:g} day{'' if days == 1 else 's'} after the task was created)" if deadline.task else ""
    return f"appeals on {deadline.what()} closed at {iso_time(deadline.closes_at)}{setting}"


def days_left_text(days_left: float | None) -> str:
    """'6 days left', 'under a day left', 'closed' (the CLI's words; the app says them in its language)."""
    if days_left is None:
        return ""
    if days_left < 0:
        return "closed"
    return f"{math.floor(days_left)} days left" if days_left >= 1 else "under a day left"
