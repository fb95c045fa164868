"""Generated and reference SQL as sqlglot reads it: exactly one read-only query, and its normal form.

`parse_query` is the gate both NL2SQL metrics put a SQL text through before anything else: a syntax error, a
second statement, or anything but a SELECT/WITH query (INSERT, UPDATE, DROP, ATTACH, PRAGMA, VACUUM …) is a
`SqlProblem`. It is the first of three locks (see `readonly.py` for the other two): nothing that fails it is ever
sent to a database.

`normal_form` rewrites a query so that two queries that differ only in spelling come out identical: sqlglot's
qualify (tables and columns spelled out, `*` expanded when the schema is known, identifier case, table aliases
renamed `_0`, `_1` … in order), normalize and simplify (`100 < x` → `x > 100`, `AND TRUE` dropped, predicates
ordered), then this module's rewrites, each one semantics-preserving: output column names and CTE names
canonical, the operands of AND / OR / + / * sorted, `COUNT(1)` → `COUNT(*)`, `INNER JOIN` → `JOIN`. Equal normal
forms ⇒ the queries return the same values; different normal forms say nothing (the judge decides).
"""
from __future__ import annotations

import functools
import re

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.normalize import normalize
from sqlglot.optimizer.qualify import qualify
from sqlglot.optimizer.simplify import simplify

DIALECT = "sqlite"
Schema = dict[str, dict[str, str]]      # table → column → declared type

# Any of these anywhere in the tree makes a statement something other than a read-only query.
_NOT_READ_ONLY = (exp.DML, exp.DDL, exp.Command, exp.Pragma, exp.Attach, exp.Detach, exp.Into, exp.Transaction,
                  exp.Set, exp.Use, exp.Copy, exp.LoadData, exp.Analyze)
_FENCED = re.compile(r"^\s*```[A-Za-z0-9_-]*[ \t]*\n(?P<body>.*?)\n?[ \t]*```\s*$", re.S)
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


class SqlProblem(Exception):
    """A query that gives no usable result. `problem`: syntax_error, empty, multiple_statements, not_read_only
    (from `parse_query`); timeout, row_cap, refused, failed, no_database (from `readonly.run_query`)."""

    def __init__(self, problem: str, reason: str):
        super().__init__(reason)
        self.problem = problem
        self.reason = reason


class NoNormalForm(Exception):
    """sqlglot could not normalise a (syntactically valid) query: the pre-check cannot decide, the judge does."""


def strip_fence(text: str) -> str:
    """The SQL inside one surrounding ```sql … ``` fence (as chat models write it), else the text itself."""
    match = _FENCED.match(text)
    return match.group("body").strip() if match else text.strip()


def _syntax_reason(exc: SqlglotError) -> str:
    errors = getattr(exc, "errors", None) or []
    if errors:
        first = errors[0]
        near = _ANSI.sub("", str(first.get("highlight") or "")).strip()
        where = f"line {first.get('line')}, column {first.get('col')}"
        return f"{where}: {_ANSI.sub('', str(first.get('description')))}" + (f" (near {near!r})" if near else "")
    return _ANSI.sub("", str(exc)).splitlines()[0]


def _opening(text: str) -> str:
    words = text.split()
    return " ".join(words[:4]) + (" …" if len(words) > 4 else "")


def parse_query(sql: str) -> exp.Query:
    """The one read-only query in `sql` (a ```sql fence around it is removed), or `SqlProblem`."""
    text = strip_fence(sql)
    try:
        statements = [s for s in sqlglot.parse(text, read=DIALECT) if s is not None]
    except SqlglotError as exc:
        raise SqlProblem("syntax_error", f"syntax error: {_syntax_reason(exc)}") from None
    if not statements:
        raise SqlProblem("empty", "no SQL statement")
    if len(statements) > 1:
        raise SqlProblem("multiple_statements",
                         f"{len(statements)} statements; only a single read-only SELECT/WITH query is run")
    root = statements[0]
    if not isinstance(root, exp.Query) or any(isinstance(node, _NOT_READ_ONLY) for node in root.walk()):
        raise SqlProblem("not_read_only", f"not a read-only SELECT/WITH query: {_opening(text)!r}")
    return root


# ── normal form ──────────────────────────────────────────────────────────────────────────────────────────────────

def _canonical_output_names(tree: exp.Expression) -> exp.Expression:
    """Output column i of the outer SELECT is named `_col_i` (as qualify names unnamed ones), and ORDER BY refers
    to output columns by that name, whether it named the alias or repeated the expression: `COUNT(*) AS n … ORDER
    BY n` ≡ `COUNT(*) AS cnt … ORDER BY cnt` ≡ `COUNT(*) … ORDER BY COUNT(*)` (the same values sort the same)."""
    if not isinstance(tree, exp.Select):
        return tree
    renamed: dict[str, str] = {}
    by_expression: dict[str, str] = {}
    for i, projection in enumerate(tree.expressions):
        if isinstance(projection, exp.Alias):
            renamed[projection.alias] = f"_col_{i}"
            by_expression.setdefault(_key(projection.this), f"_col_{i}")
            projection.set("alias", exp.to_identifier(f"_col_{i}"))
    order = tree.args.get("order")
    for ordered in order.expressions if order is not None else []:
        key = ordered.this
        if isinstance(key, exp.Column) and not key.table and key.name in renamed:
            ordered.set("this", exp.column(renamed[key.name]))
        elif _key(key) in by_expression:
            ordered.set("this", exp.column(by_expression[_key(key)]))
    return tree


def _canonical_cte_names(tree: exp.Expression, schema: Schema | None) -> exp.Expression:
    """CTEs renamed `_cte_0`, `_cte_1` … — only when the schema shows no table of the same name (a CTE named
    like a table may read that table inside its own body; renaming it there would change the query)."""
    with_ = tree.args.get("with") or tree.args.get("with_")
    if with_ is None or schema is None:
        return tree
    tables = {name.lower() for name in schema}
    names = {cte.alias: f"_cte_{i}" for i, cte in enumerate(with_.expressions)}
    if any(name.lower() in tables for name in names):
        return tree
    for table in tree.find_all(exp.Table):
        if not table.args.get("db") and table.name in names:
            table.set("this", exp.to_identifier(names[table.name]))
    for cte in with_.expressions:
        cte.args["alias"].set("this", exp.to_identifier(names[cte.alias]))
    return tree


def _key(node: exp.Expression) -> str:
    return node.sql(dialect=DIALECT)


def _sorted_operands(node: exp.Expression) -> exp.Expression:
    """AND/OR chains with their operands sorted; + and * with their two operands sorted."""
    if isinstance(node, (exp.And, exp.Or)):
        operands = sorted(node.flatten(unnest=False), key=_key)
        wrapped = [exp.Paren(this=op) if isinstance(op, exp.Connector) else op for op in operands]
        kind = type(node)
        return functools.reduce(lambda left, right: kind(this=left, expression=right), wrapped)
    if isinstance(node, (exp.Add, exp.Mul)) and _key(node.expression) < _key(node.this):
        return type(node)(this=node.expression, expression=node.this)
    return node


def _plain_spellings(node: exp.Expression) -> exp.Expression:
    """COUNT(1) / COUNT('x') count rows like COUNT(*) (a non-NULL constant is never skipped); INNER JOIN is JOIN."""
    if isinstance(node, exp.Count) and isinstance(node.this, exp.Literal):
        node = node.copy()
        node.set("this", exp.Star())
    elif isinstance(node, exp.Join) and (node.args.get("kind") or "").upper() == "INNER" and not node.args.get("side"):
        node = node.copy()
        node.set("kind", None)
    return node


def normal_form(query: exp.Query, schema: Schema | None = None) -> exp.Expression:
    """The query rewritten as described in the module docstring; `NoNormalForm` when sqlglot cannot."""
    try:
        tree = qualify(query.copy(), schema=schema, dialect=DIALECT, canonicalize_table_aliases=True,
                       validate_qualify_columns=False)
        tree = simplify(normalize(tree), dialect=DIALECT)
        tree = _canonical_cte_names(_canonical_output_names(tree), schema)
        return tree.transform(_sorted_operands).transform(_plain_spellings)
    except (SqlglotError, RecursionError, KeyError, AttributeError, TypeError, ValueError) as exc:
        raise NoNormalForm(f"sqlglot could not normalise the query: {_ANSI.sub('', str(exc))[:200]}") from None


def same_query(a: exp.Expression, b: exp.Expression) -> bool:
    """Structurally the same tree (not just the same text: two trees can print alike)."""
    return a == b and _key(a) == _key(b)


__all__ = ["DIALECT", "NoNormalForm", "Schema", "SqlProblem", "normal_form", "parse_query",
           "same_query", "strip_fence"]
