"""`rubriceval benchmark-judge robustness`: reading its options (defined in rubriceval/cli/benchmark_judge.py)."""
from __future__ import annotations

import contextlib
from collections.abc import Iterator

from rubriceval.cli.benchmark_judge import ROBUSTNESS_MODES, ROBUSTNESS_SCREENS
from rubriceval.common.errors import ConfigError

# The options themselves are the CLI's (rubriceval/cli/benchmark_judge.py): its parser is built without the benchmarks.
SCREENS = ROBUSTNESS_SCREENS
MODES = ROBUSTNESS_MODES


def _listed(value: str | None, allowed: tuple[str, ...], field: str) -> list[str]:
    chosen = [v.strip() for v in (value or "").split(",") if v.strip()]
    unknown = [v for v in chosen if v not in allowed]
    if unknown:
        raise ConfigError(f"unknown {field}: {', '.join(unknown)} (use {', '.join(allowed)})", field=field)
    return chosen


@contextlib.contextmanager
def _stub_judge(config) -> Iterator:
    from rubriceval.testing.gullible_judge import gullible_responder
    from rubriceval.testing.stub_server import StubServer

    with StubServer(responder=gullible_responder) as stub:
        yield config.model_copy(update={"base_url": stub.base_url, "model": "stub-gullible", "cache": False,
                                        "api_key": "stub"})


def run_from_args(args, config, command: str) -> int:
    from benchmarks.judge.robustness import run_robustness
    from benchmarks.judge.robustness_data import FAMILIES

    wanted = args.modes or "holistic"
    modes = [] if wanted.strip() == "none" else _listed(wanted, MODES, "--modes")
    names = _listed(args.screens, SCREENS, "--screens") or ["patterns"]
    families = _listed(args.families, FAMILIES, "--families") or None
    options = {"split": args.split, "out": args.out, "resume": args.resume, "families": families, "command": command,
               "judge_capped": not args.skip_capped, "report_partial": args.report_partial}
    if args.panel:
        from rubriceval.scoring.panel import load_panel_config

        options["panel"] = load_panel_config(args.panel, base=config)
        if options["panel"] is None:
            raise ConfigError(f"{args.panel} has no `judges:` list", file=args.panel,
                              field="judges")
    with _stub_judge(config) if args.stub_judge else contextlib.nullcontext(config) as judge:
        screens = _screens(names, judge, args.benign_per_corpus)
        run_robustness(judge if modes else None, modes, screens=screens, **options)
    return 0


def _screens(names: list[str], config, benign_per_corpus: int) -> list:
    from benchmarks.judge.robustness_screens import pattern_screen

    screens = []
    for name in names:
        if name == "patterns":
            screens.append(pattern_screen())
        elif name == "perplexity":
            from benchmarks.judge.robustness_screens import perplexity_screen

            screens.append(perplexity_screen(benign_per_corpus=benign_per_corpus))
        else:
            from benchmarks.judge.robustness_screens import llm_screen

            screens.append(llm_screen(config, benign_per_corpus=benign_per_corpus))
    return screens
