"""`audit`: the Gradio expert audit app over a run store."""
from __future__ import annotations

import argparse
from pathlib import Path

from rubriceval.cli.options import DEFAULT_STORE
from rubriceval.errors import RubricEvalError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("audit", help="expert audit app (Gradio) on 127.0.0.1")
    p.add_argument("run", nargs="?", help="run to open first (default: latest)")
    p.add_argument("--store", default=DEFAULT_STORE)
    p.add_argument("--host", default="127.0.0.1", help="anything but loopback requires --auth-file")
    p.add_argument("--port", type=int, default=7860)
    p.add_argument("--export-dir", help="where corrected datasets are written (default: next to the store)")
    p.add_argument("--auth-file", help="file of user:password lines")
    p.add_argument("--lang", choices=["zh", "en"],
                   help="the app's language (default: the data's, as for reports; the page can switch it)")
    p.set_defaults(func=cmd_audit)


def cmd_audit(args) -> int:
    from ui.app import launch

    auth = None
    if args.auth_file:
        # One "user:password" a line; the file keeps secrets out of shell history and process lists.
        pairs = [l.strip().split(":", 1) for l in Path(args.auth_file).read_text(encoding="utf-8").splitlines()
                 if l.strip() and not l.startswith("#")]
        bad = [i + 1 for i, p in enumerate(pairs) if len(p) != 2 or not p[0] or not p[1]]
        if bad:
            raise RubricEvalError("each line must be user:password", file=args.auth_file, line=bad[0])
        auth = [(u, pw) for u, pw in pairs]
    if not Path(args.store).exists():
        raise RubricEvalError("run store not found", file=args.store, hint="run `rubriceval run …` first")
    print(f"audit app for {args.store} on http://{args.host}:{args.port}  (Ctrl-C to stop)")
    launch(args.store, run=args.run, host=args.host, port=args.port, export_dir=args.export_dir, auth=auth,
           lang=args.lang)
    return 0
