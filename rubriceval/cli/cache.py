"""`cache prune`: drop old judge and embedding replies from the local call caches."""
from __future__ import annotations

import argparse
from pathlib import Path

from rubriceval.common.errors import RubricEvalError

CACHE_FILES = ("judge_cache.sqlite", "embedding_cache.sqlite")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("cache", help="the local judge/embedding call caches")
    actions = p.add_subparsers(dest="cache_command", required=True)
    prune = actions.add_parser("prune", help="delete cached replies older than DAYS",
                               description="Delete cached replies written more than DAYS days ago, and those written "
                                           "before the cache recorded times. Later runs ask the judge again.")
    prune.add_argument("--older-than", type=float, required=True, metavar="DAYS")
    prune.add_argument("--cache-file", action="append", metavar="PATH",
                       help="a cache file (repeatable; default: the judge and embedding caches in the cache "
                            "directory, RUBRICEVAL_CACHE_DIR or ~/.cache/rubriceval)")
    prune.set_defaults(func=cmd_prune)


def cmd_prune(args) -> int:
    from rubriceval.judge.cache import CallCache
    from rubriceval.judge.config import default_cache_dir

    if args.older_than < 0:
        raise RubricEvalError("must be 0 or more days", field="--older-than")
    files = [Path(f) for f in args.cache_file] if args.cache_file else [default_cache_dir() / n for n in CACHE_FILES]
    for path in files:
        if not path.is_file():
            if args.cache_file:
                raise RubricEvalError("cache file not found", file=str(path))
            continue
        cache = CallCache(path)
        deleted = cache.prune(args.older_than * 86400)
        print(f"{path}: {deleted} repl{'y' if deleted == 1 else 'ies'} deleted, {len(cache)} kept")
        cache.close()
    return 0
