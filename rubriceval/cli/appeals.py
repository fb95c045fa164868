"""Appeals (申诉/复核) and what they teach: `appeals list|show|decide|final|window|stats` (what appeals say about a
rubric is also part of `rubriceval trust`, cli/trust.py). Whoever runs these has the store in hand, so they act as
a lead (as `audit-task` does); agents appeal in the team app, where their login decides what they see."""
from __future__ import annotations

import argparse

from rubriceval.cli.options import add_store_arg
from rubriceval.common.errors import RubricEvalError

STATES = ["submitted", "under_review", "accepted", "rejected", "final"]


def register(sub: argparse._SubParsersAction) -> None:
    appeals = sub.add_parser("appeals", help="agents' appeals of verdicts: the inbox, decisions, windows, lessons")
    cmds = appeals.add_subparsers(dest="appeals_command", required=True)
    p = cmds.add_parser("list", help="appeals, oldest first (the reviewers' inbox: --state submitted)")
    p.add_argument("--state", choices=STATES)
    p.add_argument("--run")
    p.add_argument("--agent")
    add_store_arg(p)
    p.set_defaults(func=cmd_list)
    p = cmds.add_parser("show", help="one appeal and every step of it, with who and when")
    p.add_argument("appeal")
    add_store_arg(p)
    p.set_defaults(func=cmd_show)
    for name, what in (("decide", "accept or reject a submitted or under-review appeal (复核)"),
                       ("final", "a lead's final judgement on a decided appeal (uphold or overturn)")):
        p = cmds.add_parser(name, help=what)
        p.add_argument("appeal")
        outcome = p.add_mutually_exclusive_group(required=True)
        outcome.add_argument("--accept", action="store_const", const="accepted", dest="outcome")
        outcome.add_argument("--reject", action="store_const", const="rejected", dest="outcome")
        p.add_argument("--reason", required=True)
        p.add_argument("--score", type=int, help="the official score when accepting (default: the score without "
                                                 "the appealed deduction, or the reviewer's)")
        p.add_argument("--by", required=True, help="who decides (recorded with the step)")
        add_store_arg(p)
        p.set_defaults(func=cmd_decide, step=name)
    p = cmds.add_parser("window", help="how long after a run (or an audit task, --task) its verdicts may be appealed "
                                       "(default 7 days after the run; a task's deadline wins for its samples)")
    p.add_argument("run", nargs="?", help="the run (or give --task)")
    p.add_argument("--task", help="an audit task: its samples' verdicts close DAYS after the task was created")
    p.add_argument("--days", type=float, help="days (required, unless --clear)")
    p.add_argument("--clear", action="store_true", help="with --task: the run's window applies again")
    p.add_argument("--by", required=True)
    add_store_arg(p)
    p.set_defaults(func=cmd_window)
    p = cmds.add_parser("stats", help="per rubric and deduction: appeal rate, acceptance rate, precision")
    p.add_argument("run", nargs="?", default="latest")
    add_store_arg(p)
    p.set_defaults(func=cmd_stats)


def _fmt(value: float | None) -> str:
    return "—" if value is None else f"{value:g}"


def cmd_list(args) -> int:
    from rubriceval.audit.appeals import Appeals
    from rubriceval.audit.team import TeamStore
    from rubriceval.common.tables import text_table
    from rubriceval.store.audit_models import iso_time

    with TeamStore(args.store) as team:
        appeals = Appeals(team)
        rows = appeals.list(state=args.state, run=args.run, agent=args.agent)
        by_run = {run_id: appeals.deadlines(run_id) for run_id in {a.run_id for a in rows}}
        now = appeals.clock()
    print(text_table(["appeal", "run", "sample", "rubric", "deduction", "agent", "state", "machine", "proposed",
                      "reviewer", "submitted", "appeals close"],
                     [[a.appeal_id, a.run_id, a.sample_id, a.scorer, a.item or "(verdict)", a.agent, a.state,
                       _fmt(a.machine_score), _fmt(a.proposed_score), a.reviewer or "—", iso_time(a.created_at),
                       _deadline(by_run[a.run_id].of(a.sample_id), now)] for a in rows]))
    print(f"{len(rows)} appeal(s)" + (f" {args.state}" if args.state else ""))
    return 0


def _deadline(deadline, now: float) -> str:
    """'2026-12-09 01:37 UTC (6 days left, task W49)': when, how long is left, and whose deadline it is."""
    from rubriceval.audit.appeal_deadlines import days_left_text
    from rubriceval.store.audit_models import iso_time

    whose = f"task {deadline.task}" if deadline.task else "run"
    return f"{iso_time(deadline.closes_at)} ({days_left_text(deadline.days_left(now))}, {whose})"


def cmd_show(args) -> int:
    from rubriceval.audit.appeals import Appeals
    from rubriceval.audit.team import TeamStore
    from rubriceval.store.audit_models import iso_time

    with TeamStore(args.store) as team:
        appeals = Appeals(team)
        a, events = appeals.get(args.appeal), appeals.events(args.appeal)
    print(f"appeal {a.appeal_id}: {a.sample_id} · {a.scorer} · {a.item or '(whole verdict)'} by {a.agent}: {a.state}")
    print(f"  machine {_fmt(a.machine_score)}, official when appealed {_fmt(a.official_before)}, "
          f"without the deduction {_fmt(a.proposed_score)}")
    for e in events:
        outcome = f" {e.outcome}" + (f" → {_fmt(e.score)}" if e.score is not None else "") if e.outcome else ""
        print(f"  {iso_time(e.at)}  {e.actor} ({e.role}) {e.action}: {e.from_state or '·'} → {e.to_state}"
              f"{outcome}  {e.reason}")
    return 0


def cmd_decide(args) -> int:
    from rubriceval.audit.appeals import Appeals
    from rubriceval.audit.team import TeamStore

    with TeamStore(args.store) as team:
        appeals = Appeals(team)
        current = appeals.get(args.appeal)
        step = appeals.decide if args.step == "decide" else appeals.finalize
        who = {"reviewer": args.by} if args.step == "decide" else {"lead": args.by}
        result = step(args.appeal, **who, role="lead", outcome=args.outcome, reason=args.reason, score=args.score,
                      expected_version=current.version)
    if not result.ok:
        print(f"not saved: {result.message}")
        return 1
    a = result.appeal
    print(f"appeal {a.appeal_id}: {a.state}" + (f", official score {_fmt(a.decided_score)}"
                                                if a.decision == "accepted" and args.step == "decide" else ""))
    return 0


def cmd_window(args) -> int:
    from rubriceval.audit.appeals import Appeals
    from rubriceval.audit.team import TeamStore
    from rubriceval.store.audit_models import iso_time

    if bool(args.run) == bool(args.task):
        raise RubricEvalError("give a run or --task (not both)", field="task")
    if (args.days is None) != (args.clear and bool(args.task)):
        raise RubricEvalError("give --days (or, with --task, --clear)", field="days")
    with TeamStore(args.store) as team:
        appeals = Appeals(team)
        if args.task:
            deadline = appeals.set_task_window(args.task, days=None if args.clear else args.days, by=args.by)
            print(f"appeals on the verdicts of task {args.task}'s samples are taken until "
                  f"{iso_time(deadline.closes_at)}" if deadline else
                  f"task {args.task} has no deadline of its own: the run's window applies")
            return 0
        closes = appeals.set_window(args.run, days=args.days, by=args.by)
    print(f"appeals on {args.run} are taken until {iso_time(closes)} (samples in a task with a deadline: the task's)")
    return 0


def format_appeal_stats(rows) -> str:
    from rubriceval.common.tables import text_table

    def pct(value: float | None) -> str:
        return "—" if value is None else f"{value:.0%}"

    return text_table(["rubric", "item", "hits", "appeals", "appeal rate", "accepted", "acceptance", "precision",
                       "flag"],
                      [[r.scorer, r.item or "(whole verdict)", str(r.n_hits), str(r.n_appealed), pct(r.appeal_rate),
                        f"{r.n_accepted}/{r.n_decided}", pct(r.acceptance_rate),
                        "—" if r.precision is None else f"{r.precision:.2f}", ("⚑ " + r.why) if r.flagged else ""]
                       for r in rows])


def cmd_stats(args) -> int:
    from rubriceval.audit.appeal_stats import appeal_stats
    from rubriceval.store.runs import RunStore

    store = RunStore(args.store)
    print(format_appeal_stats(appeal_stats(store.conn, store.resolve(args.run))))
    return 0
