"""Scorecards (质检评分表): `scorecard import 评分表.xlsx` (the QA lead's sheet → YAML), `scorecard export` (YAML →
sheet), `scorecard validate` (file:line [field] errors). Scoring one is `rubriceval run … --scorecards DIR`."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from rubriceval.cli.options import add_store_arg


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("scorecard", help="质检评分表: import a QA sheet, export one, validate scorecard files")
    group = p.add_subparsers(dest="scorecard_command", required=True)
    q = group.add_parser("import", help="read a scorecard sheet (xlsx) and write its YAML")
    q.add_argument("workbook")
    q.add_argument("--sheet", help="the sheet with the items (default: the first)")
    q.add_argument("--out", help="YAML file to write (default: scorecards/<id>.yaml)")
    q.add_argument("--id", help="scorecard id (default: the sheet's 评分表信息 id, else the file name)")
    q.add_argument("--lang", choices=["zh", "en"], help="language of the questions written (default: the sheet's)")
    q.add_argument("--columns", metavar="ROLE=NAME,…", help="your own column names, e.g. "
                   "'name=检查点,deduction=扣分标准' (roles: dimension, name, id, rule, deduction, bonus, points, "
                   "fatal, applies, predicate)")
    q.add_argument("--force", action="store_true", help="overwrite --out if it exists")
    q.set_defaults(func=cmd_import)
    e = group.add_parser("export", help="write a scorecard YAML as a sheet (xlsx) the QA team can edit")
    e.add_argument("scorecard")
    e.add_argument("--out", required=True, help="workbook to write (.xlsx)")
    e.add_argument("--lang", choices=["zh", "en"], help="column names (default: the scorecard's language)")
    e.set_defaults(func=cmd_export)
    r = group.add_parser("review", help="a reviewer confirms or rejects a deduction, or adds a missed one")
    r.add_argument("run", help="run id or name")
    r.add_argument("--scorecard", help="scorecard id (default: the run's only one)")
    r.add_argument("--sample", help="the conversation (sample id)")
    r.add_argument("--item", help="the item id")
    how = r.add_mutually_exclusive_group()
    how.add_argument("--confirm", action="store_const", const="confirm", dest="decision", help="a true hit")
    how.add_argument("--reject", action="store_const", const="reject", dest="decision", help="a false hit")
    how.add_argument("--missed", action="store_const", const="missed", dest="decision",
                     help="the item should have hit here")
    r.add_argument("--reviewer", default="")
    r.add_argument("--note", default="")
    r.add_argument("--from", dest="from_file", metavar="FILE.jsonl",
                   help="many decisions, one JSON object a line: sample_id, item, decision, reviewer, note, scorecard")
    add_store_arg(r)
    r.set_defaults(func=cmd_review)
    tr = group.add_parser("trust", help="per-item precision and recall against reviewers, and the trust bars")
    tr.add_argument("run", nargs="?", default="latest")
    add_store_arg(tr)
    tr.set_defaults(func=cmd_trust)
    from rubriceval.cli.scorecard_fit import add_parser as add_fit_parser

    add_fit_parser(group)             # scorecard fit: reviewed cut-offs proposed as the card's next version
    v = group.add_parser("validate", help="check scorecard files (exit 0 valid, 2 invalid)")
    v.add_argument("path", nargs="?", default="scorecards")
    v.set_defaults(func=cmd_validate)


def _columns(text: str | None) -> dict[str, str]:
    from rubriceval.common.errors import RubricEvalError

    if not text:
        return {}
    pairs = [part.split("=", 1) for part in text.split(",") if part.strip()]
    if any(len(p) != 2 for p in pairs):
        raise RubricEvalError("write ROLE=NAME pairs separated by commas", field="--columns")
    return {role.strip(): name.strip() for role, name in pairs}


def cmd_import(args) -> int:
    from rubriceval.scorecard.sheet import SheetError, read_sheet, scorecard_yaml

    try:
        card = read_sheet(args.workbook, sheet=args.sheet, card_id=args.id, columns=_columns(args.columns),
                          language=args.lang, card_folder=Path(args.out).parent if args.out else Path("scorecards"))
    except SheetError as exc:
        for line in exc.problems:
            print(f"error: {Path(args.workbook).name}:{line}", file=sys.stderr)
        print(f"{len(exc.problems)} row(s) could not be read; nothing written", file=sys.stderr)
        return 2
    out = Path(args.out or f"scorecards/{card.id}.yaml")
    if out.exists() and not args.force:
        from rubriceval.common.errors import RubricEvalError

        raise RubricEvalError("file exists", file=str(out), hint="pass --force to overwrite, or another --out")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(scorecard_yaml(card), encoding="utf-8")
    review = [i.id for i in card.items if i.review]
    print(f"wrote {out}: {len(card.items)} item(s) in {len(card.dimensions)} dimension(s), "
          f"{len(card.fatal_items)} fatal, version {card.version_tag}")
    if review:
        print(f"{len(review)} item(s) written as judge questions from their rule text, marked review: true — check "
              f"them, or give them a check: {', '.join(review)}")
    return 0


def cmd_export(args) -> int:
    from rubriceval.scorecard.loader import load_scorecard
    from rubriceval.scorecard.sheet import write_sheet

    card = load_scorecard(args.scorecard)
    out = write_sheet(card, args.out, lang=args.lang)
    print(f"wrote {out}: {len(card.items)} item(s), version {card.version_tag}")
    return 0


def cmd_validate(args) -> int:
    from rubriceval.scorecard.loader import load_scorecards

    for card in load_scorecards(args.path):
        review = sum(i.review for i in card.items)
        print(f"ok {card.source_file}: {card.id} {card.version_tag}, {len(card.items)} items, "
              f"{len(card.fatal_items)} fatal" + (f", {review} marked for review" if review else ""))
    return 0


def _card_id(cards, wanted: str | None) -> str:
    from rubriceval.common.errors import RubricEvalError

    ids = [c.id for c in cards]
    if wanted:
        if wanted not in ids:
            raise RubricEvalError(f"the run has no scorecard '{wanted}'", field="--scorecard",
                                  hint=f"its scorecards: {', '.join(ids) or 'none'}")
        return wanted
    if len(ids) != 1:
        raise RubricEvalError("say which scorecard", field="--scorecard", hint=f"its scorecards: {', '.join(ids)}")
    return ids[0]


def cmd_review(args) -> int:
    from rubriceval.audit.scorecard_reviews import ReviewStore, check_decision
    from rubriceval.common.errors import RubricEvalError
    from rubriceval.store.runs import RunStore
    from rubriceval.store.scorecards import ScorecardStore

    runs = RunStore(args.store)
    cards = ScorecardStore(runs).cards(args.run)
    verdicts = {(v.scorecard, v.sample_id): v for v in ScorecardStore(runs).verdicts(args.run)}
    if args.from_file:
        lines = Path(args.from_file).read_text(encoding="utf-8").splitlines()
        # (line number or None, scorecard, sample, item, decision, reviewer, note)
        decisions: list[tuple[int | None, Any, Any, Any, Any, Any, Any]] = []
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                decisions.append((number, row.get("scorecard"), row["sample_id"], row["item"], row["decision"],
                                  row.get("reviewer", args.reviewer), row.get("note", "")))
            except (ValueError, KeyError) as exc:
                raise RubricEvalError(f"cannot read the decision: {exc}", file=args.from_file, line=number) from None
    else:
        if not (args.sample and args.item and args.decision):
            raise RubricEvalError("give --sample, --item and one of --confirm/--reject/--missed (or --from FILE)")
        decisions = [(None, args.scorecard, args.sample, args.item, args.decision, args.reviewer, args.note)]
    checked = []
    for line_no, card, sample, item, decision, reviewer, note in decisions:    # all checked before any is written
        card_id = _card_id(cards, card)
        verdict = verdicts.get((card_id, sample))
        where = {"file": args.from_file, "line": line_no} if line_no else {}
        if verdict is None:
            raise RubricEvalError(f"no '{card_id}' verdict for sample '{sample}' in this run", field="sample", **where)
        try:
            check_decision(verdict, item, decision)
        except RubricEvalError as exc:
            raise RubricEvalError(exc.message, field=exc.field, hint=exc.hint, **where) from None
        checked.append((verdict, item, decision, reviewer, note))
    store = ReviewStore(runs)
    for verdict, item, decision, reviewer, note in checked:
        store.add(args.run, verdict, item, decision, reviewer, note)
    print(f"{len(decisions)} decision(s) recorded")
    return 0


def cmd_trust(args) -> int:
    from rubriceval.report.scorecard_summary import run_scorecard_summaries
    from rubriceval.store.runs import RunStore

    runs = RunStore(args.store)
    for s in run_scorecard_summaries(runs, args.run):
        print(f"scorecard:{s.scorecard}")
        for i in s.items:
            tr = i.trust
            if tr is None or not (tr.n_reviewed or tr.bar):
                continue
            p = "n/a" if tr.precision is None else f"{tr.precision:.0%} [{tr.precision_ci[0]:.0%}, {tr.precision_ci[1]:.0%}]"
            r = "n/a" if tr.recall is None else f"{tr.recall:.0%} [{tr.recall_ci[0]:.0%}, {tr.recall_ci[1]:.0%}]"
            flag = "" if tr.bar is None else (f"  BELOW BAR: {tr.untrusted}" if tr.untrusted else "  trusted")
            print(f"  {i.item:<20} confirmed {tr.confirmed} rejected {tr.rejected} missed {tr.missed}  "
                  f"precision {p}  recall {r}{flag}")
    _print_acceptance(runs, args.run)
    return 0


def _print_acceptance(runs: Any, run: str) -> None:
    """Each card with an auto_accept target: what the run accepted automatically and why (issue 44)."""
    from rubriceval.common.tables import text_table
    from rubriceval.report.auto_accept import card_heading, card_table
    from rubriceval.trust.selective_reviews import run_acceptance

    for card in run_acceptance(runs, run):
        print(f"\n{card_heading(card, 'en')}")
        print(text_table(*card_table(card, "en"), right_align=range(2, 8)))
