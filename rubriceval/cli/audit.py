"""`audit`: the Gradio expert audit app over a run store."""
from __future__ import annotations

import argparse

from rubriceval.cli.options import add_store_arg
from rubriceval.common.errors import RubricEvalError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("audit", help="expert audit app (Gradio) on 127.0.0.1")
    p.add_argument("run", nargs="?", help="run to open first (default: latest)")
    add_store_arg(p)
    p.add_argument("--host", default="127.0.0.1", help="anything but loopback requires --auth-file")
    p.add_argument("--port", type=int, default=7860)
    p.add_argument("--export-dir", help="where corrected datasets are written (default: exports/ beside a SQLite "
                                        "store, out/exports for a PostgreSQL one)")
    p.add_argument("--auth-file", help="users of the team audit app (name:role:salted hash lines, written by "
                                       "`rubriceval audit-user add`): serves the team app with logins and roles")
    p.add_argument("--session-hours", type=float, default=8.0, help="team app: a login lasts this long")
    p.add_argument("--trusted-proxy", action="append", default=[], metavar="ADDRESS[/BITS]",
                   help="team app behind a reverse proxy: the proxy's address or network (repeatable); failed logins "
                        "are then throttled per X-Forwarded-For client, not per proxy. Never set it without a proxy: "
                        "a client could then name any address")
    p.add_argument("--lang", choices=["zh", "en"],
                   help="the app's language (default: the data's, as for reports; the page can switch it)")
    p.set_defaults(func=cmd_audit)


def cmd_audit(args) -> int:
    from rubriceval.store.location import display_location, is_server_url

    where = display_location(args.store)            # a URL without its password
    if not is_server_url(args.store) and not args.store.exists():       # a server store: the store classes check
        raise RubricEvalError("run store not found", file=where, hint="run `rubriceval run …` first")
    if args.trusted_proxy and not args.auth_file:
        raise RubricEvalError("--trusted-proxy is for the team app's login throttle", hint="add --auth-file")
    if args.auth_file:
        from rubriceval.audit.passwords import read_auth_file
        from rubriceval.audit.sessions import TeamAuth, proxy_networks
        from rubriceval.ui.team.app import launch_team

        try:
            proxies = proxy_networks(args.trusted_proxy)
        except ValueError as error:
            raise RubricEvalError(str(error), hint="an address like 10.0.0.5 or a network like 10.0.0.0/8") from None
        # Hashed passwords with roles, read from a file: secrets stay out of shell history and process lists.
        auth = TeamAuth(read_auth_file(args.auth_file), ttl_s=args.session_hours * 3600)
        print(f"team audit app for {where} on http://{args.host}:{args.port}  (Ctrl-C to stop)")
        launch_team(args.store, auth, host=args.host, port=args.port, lang=args.lang, trusted_proxies=proxies)
        return 0
    from rubriceval.ui.audit.app import launch

    print(f"audit app for {where} on http://{args.host}:{args.port}  (Ctrl-C to stop)")
    launch(args.store, run=args.run, host=args.host, port=args.port, export_dir=args.export_dir, auth=None,
           lang=args.lang)
    return 0
