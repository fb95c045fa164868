"""Getting datasets: `collect` (answers, contexts or conversations from the bot under test), `generate` (drafts from documents)."""
from __future__ import annotations

import argparse
from pathlib import Path

from rubriceval.cli.options import add_judge_args, judge_config_from


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("collect", help="run questions through the system under test; save answers + contexts")
    p.add_argument("questions", help="dataset with at least a question column (ground_truth etc. are kept)")
    p.add_argument("--target", required=True,
                   help="path/to/file.py:function (from any folder, e.g. examples/rag_target/bot.py:answer) | "
                        "package.module:function (run from the folder holding the package) | http(s)://endpoint "
                        "(JSON contract) | openai:BASE_URL#model | target.yaml")
    p.add_argument("--out", required=True, help="output JSONL (resumes when it exists)")
    p.add_argument("--concurrency", type=int, default=4)
    p.add_argument("--timeout", type=float, default=60)
    p.add_argument("--retries", type=int, default=2)
    p.add_argument("--quiet", action="store_true")
    p.add_argument("--conversations", action="store_true",
                   help="the input is a conversation script (YAML: user_turns, or simulated_user with persona, goal, "
                        "stop_condition, max_turns); the output is a conversation dataset")
    p.add_argument("--config", help="judge config (YAML judge: section) for simulated users")
    p.add_argument("--judge-base-url", help="judge for simulated users (default: $RUBRICEVAL_JUDGE_BASE_URL, else "
                                            "the embedded local judge)")
    p.add_argument("--judge-model")
    p.set_defaults(func=cmd_collect)

    p = sub.add_parser("generate", help="draft question/answer pairs from documents, critique-filtered")
    p.add_argument("docs", help=".txt/.md file or directory (PDF is not supported)")
    p.add_argument("--n", type=int, required=True, help="pairs to draft (one per sampled chunk)")
    p.add_argument("--out", required=True, help="output dataset (.jsonl)")
    p.add_argument("--chunk-size", type=int, default=500)
    p.add_argument("--overlap", type=int, default=50)
    p.add_argument("--threshold", type=int, default=3, help="minimum critique score on every criterion")
    p.add_argument("--language", default="auto", choices=["auto", "zh", "en"])
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--domain", default="", help="what the knowledge base is about (helps the usefulness critique)")
    p.add_argument("--quiet", action="store_true")
    add_judge_args(p)
    p.set_defaults(func=cmd_generate)


def cmd_collect(args) -> int:
    import asyncio

    from rubriceval.collect import collect, parse_target

    target = parse_target(args.target)
    if args.conversations:
        from rubriceval.collect.conversations import collect_conversations_with_judge
        from rubriceval.judge.config import load_judge_config

        judge_config = load_judge_config(args.config, base_url=args.judge_base_url, model=args.judge_model)
        summary = asyncio.run(collect_conversations_with_judge(
            judge_config, args.questions, target, args.out, concurrency=args.concurrency, timeout_s=args.timeout,
            retries=args.retries, progress=not args.quiet))
    else:
        summary = asyncio.run(collect(args.questions, target, args.out, concurrency=args.concurrency,
                                      timeout_s=args.timeout, retries=args.retries, progress=not args.quiet))
    print(summary.describe())
    print(f"dataset: {Path(args.out).resolve()}")
    return 0 if summary.failed == 0 else 1


def cmd_generate(args) -> int:
    import asyncio

    from rubriceval.generate import generate
    from rubriceval.local.backends import make_judge

    async def go():
        judge = make_judge(judge_config_from(args))
        try:
            return await generate(args.docs, args.out, judge=judge, n=args.n, chunk_size=args.chunk_size,
                                  overlap=args.overlap, threshold=args.threshold, language=args.language,
                                  seed=args.seed, domain=args.domain, progress=not args.quiet)
        finally:
            await judge.close()

    summary = asyncio.run(go())
    print(summary.describe())
    print(f"dataset: {Path(args.out).resolve()}")
    return 0
