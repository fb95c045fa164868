"""`studio`: the rubric studio (Gradio) — write, try and version rubrics in the browser (ui/studio/)."""
from __future__ import annotations

import argparse
from pathlib import Path

from rubriceval.cli.options import add_judge_args, add_store_arg, judge_config_from
from rubriceval.common.errors import RubricEvalError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("studio", help="rubric studio (Gradio) on 127.0.0.1: author, test, preview, try, save")
    p.add_argument("--rubrics", type=Path, default=Path("rubrics"), help="the rubrics folder it edits")
    p.add_argument("--scorecards", type=Path, default=Path("scorecards"), help="the scorecards folder it edits")
    add_store_arg(p)
    p.add_argument("--host", default="127.0.0.1", help="anything but loopback requires --auth-file")
    p.add_argument("--port", type=int, default=7862)
    p.add_argument("--auth-file", help="the team app's users (`rubriceval audit-user add`): leads and admins save, "
                                       "experts author, try and mark")
    p.add_argument("--session-hours", type=float, default=8.0)
    p.add_argument("--lang", choices=["zh", "en"], default="zh")
    add_judge_args(p)
    p.set_defaults(func=cmd_studio)


def cmd_studio(args) -> int:
    from ui.studio.app import launch_studio

    if not args.rubrics.is_dir():
        raise RubricEvalError("rubrics folder not found", file=str(args.rubrics))
    auth = None
    if args.auth_file:
        from rubriceval.audit.passwords import read_auth_file
        from rubriceval.audit.sessions import TeamAuth

        auth = TeamAuth(read_auth_file(args.auth_file), ttl_s=args.session_hours * 3600)
    print(f"rubric studio for {args.rubrics} on http://{args.host}:{args.port}  (Ctrl-C to stop)")
    launch_studio(args.rubrics, args.store, judge_config_from(args), host=args.host, port=args.port, auth=auth,
                  lang=args.lang, scorecards_dir=args.scorecards if args.scorecards.is_dir() else None)
    return 0
