"""A scorecard as the QA lead's Excel sheet, and back: `rubriceval scorecard import 评分表.xlsx` / `export`.

Reading. The first rows are searched for a header naming at least the item column; column names are matched in
Chinese and English (`COLUMNS`, or the caller's own names). One row is one item:
  维度 dimension · 质检项 item (its name) · 质检项ID id · 规则说明 rule · 扣分 deduction (3 or −3 → −3) · 加分 bonus
  (+N) · 分值 points (signed) · 一票否决 fatal (是/否, yes/no, Y/N, √, 1/0) · 适用条件 applies when · 判定规则 predicate.
`适用条件` is `标签：a、b` / `意图：x` / `关键词：a|b` (a pattern on any turn) / a YAML mapping of applies_when /
empty or 全部 (always) / any other text, which becomes a yes/no question to the judge (marked for review).
`判定规则` is a YAML mapping ({check: {...}}, {question: …, hit_on: yes}, {rubric: {id: …}}, per, cap); a row without
one becomes a judge question written from its rule text (规则说明, else the item name), marked `review: true`.
A sheet named 评分表信息 / scorecard (key | value rows: id, name, base, pass_total, language, scope, on_unscored,
knowledge, and `dimension:<id>.max_deduction` …) sets the scorecard's own fields. `knowledge` names the card's
knowledge file as its YAML does (relative to the folder the YAML is written to): it is read on import, so a file
that is missing or unreadable is that row's problem, and the card keeps its passages (the same version). Every row that
cannot be read is reported as
sheet:row [column], all of them at once; nothing is written then.

Writing puts every field back (the predicate and conditions as YAML mappings), so export → import gives the same
scorecard version."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from rubriceval.common.errors import RubricError
from rubriceval.scorecard.predicate_kinds import PREDICATE_NAMES
from rubriceval.scorecard.schema import Scorecard

COLUMNS: dict[str, tuple[str, ...]] = {
    "dimension": ("维度", "考核维度", "dimension", "category"),
    "name": ("质检项", "质检项目", "检查项", "item", "name", "criterion"),
    "id": ("质检项id", "编号", "id", "item id"),
    "rule": ("规则说明", "规则", "说明", "rule", "description"),
    "deduction": ("扣分", "扣分值", "deduction", "deduct"),
    "bonus": ("加分", "bonus"),
    "points": ("分值", "points", "score"),
    "fatal": ("一票否决", "致命", "fatal", "auto-fail", "auto fail"),
    "applies": ("适用条件", "适用范围", "applies when", "applies_when", "condition"),
    "predicate": ("判定规则", "判定方式", "predicate", "check"),
}
INFO_SHEETS = ("评分表信息", "scorecard")
HEADERS_OUT = {
    "zh": {"dimension": "维度", "name": "质检项", "id": "质检项ID", "rule": "规则说明", "points": "分值",
           "fatal": "一票否决", "applies": "适用条件", "predicate": "判定规则"},
    "en": {"dimension": "dimension", "name": "item", "id": "id", "rule": "rule", "points": "points",
           "fatal": "fatal", "applies": "applies when", "predicate": "predicate"},
}
# What a 判定规则 cell may hold (a YAML mapping), and what export writes there.
# The predicate kinds (scorecard/predicate_kinds.py) and the keys that go with them.
PREDICATE_KEYS = (*PREDICATE_NAMES, "hit_on", "per", "cap", "judge_sees_knowledge", "trust", "examples", "calibration")
YES = {"是", "y", "yes", "true", "1", "√", "✓", "x", "否决", "fatal"}
NO = {"否", "n", "no", "false", "0", "", "-", "—"}


class SheetError(RubricError):
    """Rows of a scorecard sheet that cannot be read: each as sheet:row [column]."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__(f"{len(problems)} row problem(s):\n  " + "\n  ".join(problems))


def _norm(text: Any) -> str:
    return re.sub(r"\s+", " ", str(text or "")).strip().casefold()


def _cell(value: Any) -> str:
    """A cell as text; a formula-looking text the export escaped ('=…) is read back as written."""
    from rubriceval.data.spreadsheet import unescape_cell

    return "" if value is None else str(unescape_cell(value)).strip()


def _find_header(rows: list[tuple], names: dict[str, tuple[str, ...]]) -> tuple[int, dict[str, int]]:
    wanted = {field: {_norm(n) for n in options} for field, options in names.items()}
    for index, row in enumerate(rows[:10]):
        found = {}
        for col, value in enumerate(row):
            for field, options in wanted.items():
                if _norm(value) in options and field not in found:
                    found[field] = col
        if "name" in found:
            return index, found
    raise RubricError("no header row naming the item column (质检项 / item) in the first 10 rows")


def _integer(text: str) -> int:
    text = text.replace("−", "-").replace("＋", "+").replace("－", "-").replace(" ", "")
    if re.fullmatch(r"[+-]?\d+(\.0+)?", text):
        return int(float(text))
    raise ValueError(f"{text!r} is not a whole number of points")


def _applies(text: str) -> tuple[dict | None, bool]:
    """(applies_when, marked for review)."""
    if _norm(text) in ("", "全部", "所有", "所有对话", "all", "always", "-", "—"):
        return None, False
    if text.startswith("{"):
        value = yaml.safe_load(text)
        if not isinstance(value, dict):
            raise ValueError("a YAML mapping of applies_when was expected")
        return value, False
    match = re.match(r"^(标签|tags?|意图|intents?|关键词|包含|pattern)\s*[:：]\s*(.+)$", text, re.IGNORECASE)
    if match:
        kind, rest = match[1].lower(), match[2].strip()
        parts = [p.strip() for p in re.split(r"[、,，;；]", rest) if p.strip()]
        if kind in ("标签", "tag", "tags"):
            return {"tags": parts}, False
        if kind in ("意图", "intent", "intents"):
            return {"intents": parts}, False
        return {"pattern": rest}, False
    return {"question": text if text.endswith(("？", "?")) else text + "？"}, True


def _predicate(text: str, rule: str, name: str, lang: str) -> tuple[dict, bool]:
    if text:
        value = yaml.safe_load(text)
        if not isinstance(value, dict) or not set(value) & set(PREDICATE_NAMES):
            raise ValueError("write a YAML mapping: {check: {type: …}}, {question: …, hit_on: yes} or "
                             "{rubric: {id: …, min_score: 4}}")
        unknown = set(value) - set(PREDICATE_KEYS)
        if unknown:
            raise ValueError(f"unknown key(s) {sorted(unknown)}")
        return value, False
    said = rule or name
    ask = (f"对话中是否出现了以下扣分情形：{said}？" if lang == "zh" else f"Does the conversation show this: {said}?")
    return {"question": ask, "hit_on": "yes"}, True


def _slug(name: str, row: int, taken: set[str]) -> str:
    base = re.sub(r"[^A-Za-z0-9_\-\u4e00-\u9fff]+", "_", name).strip("_")[:40] or f"item{row}"
    ident, n = base, 2
    while ident in taken:
        ident, n = f"{base}_{n}", n + 1
    taken.add(ident)
    return ident


def _info(book: Any) -> tuple[str, dict[str, Any], dict[str, int]]:
    """(the info sheet's title, its key → value, key → row number)."""
    for title in book.sheetnames:
        if _norm(title) in {_norm(t) for t in INFO_SHEETS}:
            values: dict[str, Any] = {}
            rows: dict[str, int] = {}
            for number, r in enumerate(book[title].iter_rows(values_only=True), start=1):
                if r and _cell(r[0]):
                    values[_cell(r[0])], rows[_cell(r[0])] = (r[1] if len(r) > 1 else None), number
            return title, values, rows
    return INFO_SHEETS[0], {}, {}


def _knowledge(value: Any, folder: Path) -> list[str]:
    """The passages of the knowledge file a `knowledge` cell names (relative to `folder`), or ValueError saying why
    not — as the scorecard loader would refuse the YAML."""
    from rubriceval.common.errors import RubricEvalError
    from rubriceval.data.knowledge import load_knowledge

    if not isinstance(value, str) or not _cell(value):
        raise ValueError(f"{value!r} is not a file name (policies.md, .txt or .jsonl)")
    try:
        return load_knowledge(_cell(value), relative_to=folder / "scorecard.yaml").passages
    except RubricEvalError as exc:
        where = (exc.file or _cell(value)) + (f":{exc.line}" if exc.line else "")
        raise ValueError(f"{where}: {exc.message} (a relative path is read from {folder}, where the YAML "
                         "goes)") from None


def read_sheet(path: str | Path, *, sheet: str | None = None, card_id: str | None = None,
               columns: dict[str, str] | None = None, language: str | None = None,
               card_folder: str | Path | None = None) -> Scorecard:
    """The scorecard in a workbook; raises SheetError listing every unreadable row as sheet:row [column].
    `card_folder`: where its YAML is written (a `knowledge` file is read from there); default the workbook's."""
    import openpyxl

    path = Path(path)
    try:
        book = openpyxl.load_workbook(path, read_only=True, data_only=True)
    except FileNotFoundError:
        raise RubricError("workbook not found", file=str(path)) from None
    except Exception as exc:           # not a workbook at all (openpyxl raises several kinds)
        raise RubricError(f"not an Excel workbook: {exc}", file=str(path)) from None
    titles = [t for t in book.sheetnames if _norm(t) not in {_norm(x) for x in INFO_SHEETS}]
    title = sheet or (titles[0] if titles else None)
    if title not in book.sheetnames:
        raise RubricError(f"no sheet {title!r}", file=str(path), hint=f"sheets: {', '.join(book.sheetnames)}")
    names = {field: options for field, options in COLUMNS.items()}
    for field, own in (columns or {}).items():
        if field not in COLUMNS:
            raise RubricError(f"unknown column role {field!r}", field="--columns", hint=f"roles: {', '.join(COLUMNS)}")
        names[field] = (own, *names[field])
    rows = list(book[title].iter_rows(values_only=True))
    try:
        header, where = _find_header(rows, names)
    except RubricError as exc:
        raise RubricError(exc.message, file=f"{path.name}:{title}") from None
    info_title, info, info_rows = _info(book)
    lang = language or str(info.get("language") or "") or ("zh" if any(re.search(r"[\u4e00-\u9fff]", _cell(c))
                                                                        for c in rows[header]) else "en")
    header_names = {field: _cell(rows[header][col]) for field, col in where.items()}
    problems: list[str] = []
    items: list[dict[str, Any]] = []
    dimensions: list[str] = []
    taken: set[str] = set()
    for index, row in enumerate(rows[header + 1:], start=header + 2):
        value = {field: _cell(row[col]) if col < len(row) else "" for field, col in where.items()}
        if not any(value.values()):
            continue

        def problem(field: str, why: str, index: int = index) -> None:
            problems.append(f"{title}:{index} [{header_names.get(field, field)}]: {why}")

        name = value.get("name", "")
        if not name:
            problem("name", "the item has no name")
            continue
        dim = value.get("dimension") or (dimensions[-1] if dimensions else "")     # merged cells: the one above
        if not dim:
            problem("dimension", "no dimension (and none above it)")
            continue
        item: dict[str, Any] = {"id": value.get("id") or _slug(name, index, taken), "name": name, "dimension": dim}
        if value.get("id"):
            taken.add(value["id"])
        if value.get("rule"):
            item["description"] = value["rule"]
        fatal_text = _norm(value.get("fatal", ""))
        if fatal_text not in YES | NO:
            problem("fatal", f"{value['fatal']!r} is neither yes (是/Y/√) nor no (否/N/empty)")
            continue
        fatal = fatal_text in YES
        try:
            points = None
            for field, sign in (("points", 1), ("deduction", -1), ("bonus", 1)):
                if value.get(field):
                    n = _integer(value[field])
                    points = -abs(n) if sign < 0 else (abs(n) if field == "bonus" else n)
                    break
        except ValueError as exc:
            problem(field, str(exc))
            continue
        if points == 0:
            points = None
        if points is None and not fatal:
            problem("deduction" if "deduction" in where else "points", "no points and not fatal")
            continue
        if fatal and points is not None and points > 0:
            problem("fatal", "a fatal item (一票否决) cannot be a bonus")
            continue
        if points is not None:
            item["points"] = points
        if fatal:
            item["fatal"] = True
        try:
            applies, review_a = _applies(value.get("applies", ""))
        except (ValueError, yaml.YAMLError) as exc:
            problem("applies", str(exc).splitlines()[0])
            continue
        try:
            predicate, review_p = _predicate(value.get("predicate", ""), value.get("rule", ""), name, lang)
        except (ValueError, yaml.YAMLError) as exc:
            problem("predicate", str(exc).splitlines()[0])
            continue
        item.update(predicate)
        if applies:
            item["applies_when"] = applies
        if review_a or review_p:
            item["review"] = True
        if dim not in dimensions:
            dimensions.append(dim)
        items.append(item)
    passages = None
    if info.get("knowledge") not in (None, ""):
        try:
            passages = _knowledge(info["knowledge"], Path(card_folder) if card_folder else path.parent)
        except ValueError as exc:
            problems.append(f"{info_title}:{info_rows['knowledge']} [knowledge]: {exc}")
    if problems:
        raise SheetError(problems)
    if not items:
        raise RubricError("no item rows under the header", file=f"{path.name}:{title}")
    data: dict[str, Any] = {"id": card_id or info.get("id") or _slug(path.stem, 0, set()).strip("_") or "scorecard",
                            "name": str(info.get("name") or path.stem), "language": lang,
                            "dimensions": [{"id": d} for d in dimensions], "items": items}
    for key in ("version", "base", "pass_total", "scope", "on_unscored"):
        if info.get(key) not in (None, ""):
            data[key] = info[key]
    if passages is not None:
        data["knowledge"], data["knowledge_passages"] = _cell(info["knowledge"]), passages
    for key in ("trust", "judge_sees"):                   # written as YAML by export
        if info.get(key) not in (None, ""):
            data[key] = yaml.safe_load(str(info[key]))
    for key, value in info.items():
        if key.startswith("dimension:") and value not in (None, ""):
            dim_id, _, field = key[len("dimension:"):].partition(".")
            for d in data["dimensions"]:
                if d["id"] == dim_id:
                    d[field] = value
    if not re.fullmatch(r"[A-Za-z0-9_\-]+", str(data["id"])):
        data["id"] = "scorecard"
    try:
        return Scorecard.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = err["loc"]
        where_row = ""
        if len(loc) >= 2 and loc[0] == "items" and isinstance(loc[1], int):
            where_row = f"{title}: item {items[loc[1]]['name']!r} "
        raise SheetError([f"{where_row}[{'.'.join(map(str, loc[2:] or loc))}]: "
                          f"{err['msg'].removeprefix('Value error, ')}"]) from None


def _flow(value: Any) -> str:
    return yaml.safe_dump(value, allow_unicode=True, default_flow_style=True, sort_keys=False, width=10_000).strip()


def write_sheet(card: Scorecard, path: str | Path, lang: str | None = None) -> Path:
    """The scorecard as a workbook: one item per row, and its own fields on the 评分表信息 / scorecard sheet."""
    import openpyxl

    from rubriceval.data.spreadsheet import escape_cell

    lang = lang or card.language
    heads = HEADERS_OUT["zh" if lang == "zh" else "en"]
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "评分表" if lang == "zh" else "items"
    order = ("dimension", "name", "id", "rule", "points", "fatal", "applies", "predicate")
    sheet.append([heads[k] for k in order])
    yes, no = ("是", "否") if lang == "zh" else ("yes", "no")
    for item in card.items:
        predicate = {k: v for k, v in item.model_dump(mode="json", include=set(PREDICATE_KEYS)).items()
                     if v is not None and v != [] and not (k == "per" and v == "conversation")
                     and not (k == "judge_sees_knowledge" and v is False)}
        applies = item.applies_when.model_dump(mode="json", exclude_defaults=True) if item.applies_when else None
        row = [item.dimension, item.name or item.id, item.id, item.description,
               item.points, yes if item.fatal else no, _flow(applies) if applies else "", _flow(predicate)]
        sheet.append([escape_cell(v) for v in row])
    info = book.create_sheet(INFO_SHEETS[0] if lang == "zh" else INFO_SHEETS[1])
    for key in ("id", "name", "version", "language", "scope", "base", "pass_total", "on_unscored"):
        value = getattr(card, key)
        if value is not None:
            info.append([key, escape_cell(value)])
    if card.knowledge:                      # as the YAML names it, relative to the card's folder
        info.append(["knowledge", escape_cell(card.knowledge)])
    if card.trust is not None:
        info.append(["trust", _flow(card.trust.model_dump(mode="json"))])
    if card.judge_sees != Scorecard.model_fields["judge_sees"].get_default(call_default_factory=True):
        info.append(["judge_sees", _flow(card.judge_sees)])
    for dim in card.dimensions:
        for field in ("name", "max_deduction", "max_bonus"):
            value = getattr(dim, field)
            if value not in (None, ""):
                info.append([f"dimension:{dim.id}.{field}", escape_cell(value)])
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    book.save(out)
    return out


def scorecard_yaml(card: Scorecard) -> str:
    """The YAML of a scorecard (what import writes), fields in the schema's order, defaults left out."""
    data = card.model_dump(mode="json", exclude_defaults=True, exclude={"source_file", "knowledge_passages"})
    data = {"id": card.id, "name": card.name, **data}
    return yaml.safe_dump(data, allow_unicode=True, sort_keys=False, width=120)
