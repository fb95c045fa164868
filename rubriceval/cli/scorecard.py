"""Scorecards (质检评分表): `scorecard import 评分表.xlsx` (the QA lead's sheet → YAML), `scorecard export` (YAML →
sheet), `scorecard validate` (file:line [field] errors). Scoring one is `rubriceval run … --scorecards DIR`."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path


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
                          language=args.lang)
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
