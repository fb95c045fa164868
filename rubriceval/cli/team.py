"""Team audits: `audit-user` (who may log in, with which role) and `audit-task` (a lead's audit tasks, their
progress, failure tags, metric agreement). Whoever runs these has the store in hand (the file, or the PostgreSQL
URL and its credentials), so they act as a lead."""
from __future__ import annotations

import argparse
import getpass
import sys

from rubriceval.cli.options import add_store_arg
from rubriceval.common.errors import RubricEvalError

DEFAULT_AUTH_FILE = "out/audit-users.auth"


def register(sub: argparse._SubParsersAction) -> None:
    user = sub.add_parser("audit-user", help="users of the team audit app (salted password hashes, roles)")
    users = user.add_subparsers(dest="audit_user_command", required=True)
    p = users.add_parser("add", help="add a user or change their role and password")
    p.add_argument("name")
    p.add_argument("--role", choices=["expert", "lead", "admin", "agent"], default="expert",
                   help="agent: sees only their own conversations (metadata agent_id) and may appeal their verdicts")
    p.add_argument("--auth-file", default=DEFAULT_AUTH_FILE)
    p.add_argument("--password-stdin", action="store_true",
                   help="read the password from the first line of stdin (scripts); default: ask without echo")
    p.set_defaults(func=cmd_user_add)
    p = users.add_parser("list", help="users and roles (never the hashes)")
    p.add_argument("--auth-file", default=DEFAULT_AUTH_FILE)
    p.set_defaults(func=cmd_user_list)

    task = sub.add_parser("audit-task", help="a lead's audit tasks: sample a run's verdicts and assign experts")
    tasks = task.add_subparsers(dest="audit_task_command", required=True)
    p = tasks.add_parser("create", help="sample N verdicts per rubric of RUN and give each to --overlap experts")
    p.add_argument("run")
    p.add_argument("--rubrics", default="", help="comma-separated rubric ids")
    p.add_argument("--scorecards", default="", help="comma-separated scorecard ids: sample conversations' card "
                   "verdicts; a reviewer decides every item of the card (blind by default, --overlap 1 by default)")
    p.add_argument("--n", type=int, help="items per rubric (or --plan)")
    p.add_argument("--plan", help="a sampling plan instead of --n: N or p%% per segment per period, at least k, e.g. "
                   "'5%% per agent_id per week, min 3' (inverse-probability weights: `audit-task estimate`)")
    p.add_argument("--risk", help="with --plan: risk-first additions kept apart from the random part: "
                   "fatal, low_confidence, disagreement (comma-separated)")
    p.add_argument("--top-p-yes", type=int, metavar="K", help="with --plan and --scorecards: each judgement item's K "
                   "highest-p(yes) conversations per period the machine did not hit are reviewed whatever the cut-off "
                   "(default 2; 0: none); items awaiting review (undecided, pending review) always are")
    p.add_argument("--tz", default="UTC", help="with --plan: zone of its day/week/month periods")
    p.add_argument("--overlap", type=int, help="experts per item (≥ 2 measures inter-expert agreement; default 2 "
                   "for rubrics, 1 for a scorecard-only task)")
    p.add_argument("--experts", required=True, help="comma-separated user names")
    p.add_argument("--sampling", choices=["stratified", "least_sure", "lowest"], default="stratified",
                   help="stratified random by judge score and tag (default: keeps agreement unbiased), least-sure "
                        "first, or lowest judge score first")
    p.add_argument("--open", action="store_true", help="show experts the judge's verdict before they score")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--name")
    p.add_argument("--appeal-days", type=float, help="appeals on the verdicts of this task's samples close this many "
                   "days after the task is created (default: the run's window; change it: `appeals window --task`)")
    p.add_argument("--by", default="lead", help="who creates the task (recorded in the log)")
    add_store_arg(p)
    p.set_defaults(func=cmd_task_create)
    p = tasks.add_parser("estimate", help="a planned task's weighted estimates (random part; risk-first apart)")
    p.add_argument("task")
    add_store_arg(p)
    p.set_defaults(func=cmd_task_estimate)
    p = tasks.add_parser("card-disagreements", help="a card task's items its reviewers decided differently")
    p.add_argument("task")
    add_store_arg(p)
    p.set_defaults(func=cmd_card_disagreements)
    p = tasks.add_parser("card-adjudicate", help="the lead's status for one card item reviewers differed on "
                         "(it becomes the official decision)")
    p.add_argument("task")
    p.add_argument("item_no", type=int, help="the task item (conversation) number")
    p.add_argument("item", help="the card item id")
    p.add_argument("status", choices=["hit", "clear", "not_applicable"])
    p.add_argument("--reason", required=True)
    p.add_argument("--by", default="lead")
    add_store_arg(p)
    p.set_defaults(func=cmd_card_adjudicate)
    p = tasks.add_parser("list", help="tasks and each expert's progress")
    add_store_arg(p)
    p.set_defaults(func=cmd_task_list)
    p = tasks.add_parser("tags", help="failure tags ticked in a run's tasks, per rubric and per tag/intent")
    p.add_argument("run", nargs="?", default="latest")
    p.add_argument("--lang", choices=["zh", "en"], default="en")
    add_store_arg(p)
    p.set_defaults(func=cmd_task_tags)
    p = tasks.add_parser("metric-agreement", help="a metric's agreement with the experts' per-statement corrections")
    p.add_argument("run", nargs="?", default="latest")
    p.add_argument("--metric", required=True)
    add_store_arg(p)
    p.set_defaults(func=cmd_metric_agreement)


def _names(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def cmd_user_add(args) -> int:
    from rubriceval.audit.passwords import write_user

    if args.password_stdin:
        password = sys.stdin.readline().rstrip("\n")
    else:
        password = getpass.getpass(f"password for {args.name}: ")
        if getpass.getpass("again: ") != password:
            raise RubricEvalError("the two passwords differ", field="password")
    new = write_user(args.auth_file, args.name, args.role, password)
    print(f"{'added' if new else 'updated'} {args.name} ({args.role}) in {args.auth_file}")
    return 0


def cmd_user_list(args) -> int:
    from rubriceval.audit.passwords import read_auth_file

    for entry in read_auth_file(args.auth_file).values():
        print(f"{entry.name}\t{entry.role}")
    return 0


def cmd_task_create(args) -> int:
    from pydantic import ValidationError

    from rubriceval.audit.team import TeamStore
    from rubriceval.store.team_models import TaskSpec

    plan = None
    if args.plan:                        # rubriceval/audit/plan.py
        from rubriceval.audit.plan import parse_plan

        plan = parse_plan(args.plan, risk=_names(args.risk or ""), zone=args.tz,
                          top_p_yes=getattr(args, "top_p_yes", None)).model_dump()
    elif args.n is None:
        raise RubricEvalError("give --n items per rubric or a --plan", field="n",
                              hint="e.g. --n 50, or --plan '5% per agent_id per week, min 3'")
    try:
        overlap = {} if args.overlap is None else {"overlap": args.overlap}
        spec = TaskSpec(run=args.run, rubrics=_names(args.rubrics), scorecards=_names(args.scorecards), n=args.n,
                        **overlap,
                        experts=_names(args.experts), sampling=args.sampling, blind=not args.open, seed=args.seed,
                        name=args.name or "", plan=plan, appeal_days=args.appeal_days)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise RubricEvalError(first["msg"], field=".".join(str(p) for p in first["loc"])) from None
    with TeamStore(args.store) as team:
        info = team.create_task(spec, created_by=args.by)
        shares = ", ".join(f"{p.expert} {p.assigned}" for p in team.progress(info.task_id))
    how = info.sampling if plan is None else f"plan {args.plan}"
    print(f"task {info.name} ({info.task_id}): {info.n_items} items, {how}, overlap {info.overlap}, "
          f"{'blind' if info.blind else 'open'}; shares: {shares}")
    if info.appeal_days is not None:
        print(f"  appeals on its samples' verdicts close {info.appeal_days:g} day(s) after the task was created")
    if plan is not None:
        from rubriceval.audit.team_plan import plan_rows

        with TeamStore(args.store) as team:
            rows = plan_rows(team, info.task_id).values()
        n_random = sum(1 for r in rows if r["selection"] == "random")
        strata = len({r["stratum"] for r in rows if r["selection"] == "random"})
        print(f"  random part: {n_random} items in {strata} strata (weights N_h/n_h); risk-first additions: "
              f"{len(rows) - n_random} (kept apart, not in estimates)")
        print_risk_reasons(args.store, info, rows)
    return 0


def print_risk_reasons(store: str, info, rows) -> None:
    """Why each risk-first addition is in the queue, counted by reason in words ('highest p(yes) for 承诺超出政策 2')."""
    from collections import Counter

    from rubriceval.audit.review_priority import reason_text
    from rubriceval.audit.team import TeamStore
    from rubriceval.audit.team_cards import run_cards

    with TeamStore(store) as team:
        names = {i.id: i.label for card in run_cards(team, info.run_id).values() for i in card.items}
    reasons = Counter(r for row in rows if row["selection"].startswith("risk:")
                      for r in row["selection"].removeprefix("risk:").split(","))
    for reason, n in sorted(reasons.items()):
        print(f"    {reason_text(reason, 'en', names)}: {n}")


def cmd_task_estimate(args) -> int:
    from rubriceval.audit.plan_estimate import (
        card_plan_estimates,
        format_card_estimates,
        format_estimates,
        plan_estimates,
    )
    from rubriceval.audit.team import TeamStore

    with TeamStore(args.store) as team:
        info = team.task(args.task)
        if info.rubrics:
            print(format_estimates(plan_estimates(team, args.task)), end="")
        if info.scorecards:
            print(format_card_estimates(card_plan_estimates(team, args.task)), end="")
    return 0


def cmd_card_disagreements(args) -> int:
    from rubriceval.audit.team import TeamStore
    from rubriceval.audit.team_cards import card_disagreements
    from rubriceval.common.tables import text_table

    with TeamStore(args.store) as team:
        found = card_disagreements(team, args.task)
    rows = [[str(d.item_no), d.sample_id, f"{d.item_name} ({d.item})", d.machine,
             ", ".join(f"{e}={s}" for e, s in sorted(d.opinions.items())), d.adjudicated or "—"] for d in found]
    print(text_table(["#", "conversation", "item", "machine", "reviewers", "lead"], rows) if rows
          else "no disagreement")
    return 0


def cmd_card_adjudicate(args) -> int:
    from rubriceval.audit.team import TeamStore
    from rubriceval.audit.team_cards import adjudicate_card_item

    with TeamStore(args.store) as team:
        adjudicate_card_item(team, args.task, args.item_no, args.item, args.status, lead=args.by, reason=args.reason)
    print(f"item {args.item} of #{args.item_no}: {args.status} (adjudicated by {args.by})")
    return 0


def cmd_task_list(args) -> int:
    from rubriceval.audit.team import TeamStore

    with TeamStore(args.store) as team:
        for info in team.tasks():
            print(f"{info.name}\t{info.task_id}\trun {info.run_id}\t{info.n_items} items\t{info.sampling}\t"
                  f"overlap {info.overlap}\t{'blind' if info.blind else 'open'}")
            for p in team.progress(info.task_id):
                print(f"  {p.expert}: {p.done}/{p.assigned} done ({p.scored} scored, {p.unsure} unsure)")
    return 0


def cmd_task_tags(args) -> int:
    from rubriceval.report.failure_tags import failure_tag_report, failure_tags_markdown

    print(failure_tags_markdown(failure_tag_report(args.store, args.run), args.lang))
    return 0


def cmd_metric_agreement(args) -> int:
    from rubriceval.audit.metric_agreement import metric_agreement
    from rubriceval.audit.team import TeamStore

    with TeamStore(args.store) as team:
        print(metric_agreement(team, args.run, args.metric).summary())
    return 0
