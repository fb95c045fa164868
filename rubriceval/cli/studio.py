"""`studio`: the rubric studio (Gradio) — write, try and version rubrics in the browser (ui/studio/)."""
from __future__ import annotations

import argparse
import os
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
    p.add_argument("--versions-in", choices=["auto", "files", "store"], default="auto",
                   help="where saved versions live: the rubrics/scorecards folders, or the run store (--store; a "
                        "server setup). auto: the folders when the rubrics folder is writable, else the store")
    p.add_argument("--export-to", type=Path, metavar="DIR",
                   help="write the current version of every rubric (DIR/rubrics) and scorecard (DIR/scorecards) "
                        "kept in the run store as YAML files for runs, then exit")
    add_judge_args(p)
    p.set_defaults(func=cmd_studio)


def versions_place(choice: str, rubrics: Path) -> str:
    """files or store: `auto` keeps versions beside the rubrics when that folder is writable, else in the store."""
    if choice != "auto":
        return choice
    return "files" if rubrics.is_dir() and os.access(rubrics, os.W_OK) else "store"


def export_versions(store, folder: Path) -> int:
    from rubriceval.studio.versions import StoreShelf, export

    for kind, sub in (("rubric", "rubrics"), ("scorecard", "scorecards")):
        written = export(StoreShelf(store, kind), folder / sub)
        print(f"wrote {len(written)} {kind}(s) to {folder / sub}")
    return 0


def cmd_studio(args) -> int:
    from rubriceval.ui.studio.app import launch_studio

    versions_in = versions_place(args.versions_in, args.rubrics)
    if args.export_to:
        return export_versions(args.store, args.export_to)
    if versions_in == "files" and not args.rubrics.is_dir():
        raise RubricEvalError("rubrics folder not found", file=str(args.rubrics),
                              hint="or keep versions in the run store: --versions-in store")
    auth = None
    if args.auth_file:
        from rubriceval.audit.passwords import read_auth_file
        from rubriceval.audit.sessions import TeamAuth

        auth = TeamAuth(read_auth_file(args.auth_file), ttl_s=args.session_hours * 3600)
    kept = "the run store" if versions_in == "store" else str(args.rubrics)
    print(f"rubric studio on http://{args.host}:{args.port}, versions kept in {kept}  (Ctrl-C to stop)")
    launch_studio(args.rubrics, args.store, judge_config_from(args), host=args.host, port=args.port, auth=auth,
                  lang=args.lang, scorecards_dir=args.scorecards if args.scorecards.is_dir() else None,
                  versions_in=versions_in)
    return 0
