"""The failure-tag section of a report: how often experts ticked each of a rubric's failure tags (未先安抚,
缺少链接 …), overall and per sample tag / intent — so a lead sees WHY scores are low, not only that they are.

An item counts once per failure tag however many experts ticked it; the share is over the rubric's items that some
expert scored in a team task of the run.
"""
from __future__ import annotations

import html
from collections import defaultdict
from pathlib import Path

from pydantic import BaseModel

from rubriceval.audit.team import TeamStore
from rubriceval.audit.team_adjudication import failure_tag_rows
from rubriceval.common.tables import markdown_table
from rubriceval.i18n import Lang, t

FAILURE_TAGS_SHEET = "failure_tags"          # the workbook's sheet, only when experts ticked failure tags


class TagCount(BaseModel):
    scorer: str
    failure_tag: str
    items: int
    reviewed: int                   # the rubric's items scored by some expert

    @property
    def share(self) -> float:
        return self.items / self.reviewed if self.reviewed else 0.0


class GroupCount(BaseModel):
    scorer: str
    failure_tag: str
    group_kind: str                 # "tag" | "intent"
    group: str
    items: int


class FailureTagReport(BaseModel):
    run_id: str
    counts: list[TagCount]
    groups: list[GroupCount]


def failure_tag_report(store_path: str | Path, run: str) -> FailureTagReport:
    with TeamStore(store_path) as team:
        run_id = team.audit.resolve(run)
        rows = failure_tag_rows(team, run_id)
        reviewed = {r["scorer"]: r["n"] for r in team.query(
            "SELECT ti.scorer, COUNT(DISTINCT ti.sample_id) AS n FROM team_task_items ti JOIN team_tasks t ON "
            "t.task_id = ti.task_id WHERE t.run_id = :r AND EXISTS (SELECT 1 FROM team_assignments a WHERE "
            "a.task_id = ti.task_id AND a.item_no = ti.item_no AND a.state = 'scored') GROUP BY ti.scorer",
            {"r": run_id})}
    items: dict[tuple[str, str], set[str]] = defaultdict(set)
    grouped: dict[tuple[str, str, str, str], set[str]] = defaultdict(set)
    for row in rows:
        key = (row["scorer"], row["failure_tag"])
        items[key].add(row["sample_id"])
        for tag in row["tags"]:
            grouped[key + ("tag", tag)].add(row["sample_id"])
        if row["intent"]:
            grouped[key + ("intent", row["intent"])].add(row["sample_id"])
    counts = [TagCount(scorer=s, failure_tag=f, items=len(ids), reviewed=reviewed.get(s, 0))
              for (s, f), ids in items.items()]
    counts.sort(key=lambda c: (c.scorer, -c.items, c.failure_tag))
    groups = [GroupCount(scorer=s, failure_tag=f, group_kind=k, group=g, items=len(ids))
              for (s, f, k, g), ids in grouped.items()]
    groups.sort(key=lambda g: (g.scorer, g.failure_tag, g.group_kind, -g.items, g.group))
    return FailureTagReport(run_id=run_id, counts=counts, groups=groups)


def run_failure_tags(store_path: str | Path, run_id: str) -> FailureTagReport | None:
    """The failure-tag counts a run report shows, or None when no expert ticked one in a team task of the run (the
    report then has no such section)."""
    report = failure_tag_report(store_path, run_id)
    return report if report.counts else None


def _group_name(group: GroupCount, lang: Lang) -> str:
    return t(f"ft_group_{group.group_kind}", lang, name=group.group)


def failure_tag_sheet(report: FailureTagReport, lang: Lang) -> tuple[list[str], list[list[object]]]:
    """One table for a workbook: the overall count of each tag (group blank, share a number to sort by), then its
    count per sample tag / intent."""
    head = [t("ft_rubric", lang), t("ft_tag", lang), t("ft_group", lang), t("ft_items", lang), t("ft_share", lang)]
    rows: list[list[object]] = [[c.scorer, c.failure_tag, "", c.items, round(c.share, 4)] for c in report.counts]
    rows += [[g.scorer, g.failure_tag, _group_name(g, lang), g.items, None] for g in report.groups]
    return head, rows


def _tables(report: FailureTagReport, lang: Lang) -> tuple[list[str], list[list[str]], list[str], list[list[str]]]:
    head = [t("ft_rubric", lang), t("ft_tag", lang), t("ft_items", lang), t("ft_share", lang)]
    rows = [[c.scorer, c.failure_tag, str(c.items), f"{c.share:.0%}"] for c in report.counts]
    group_head = [t("ft_rubric", lang), t("ft_tag", lang), t("ft_group", lang), t("ft_items", lang)]
    group_rows = [[g.scorer, g.failure_tag, _group_name(g, lang), str(g.items)] for g in report.groups]
    return head, rows, group_head, group_rows


def failure_tags_markdown(report: FailureTagReport, lang: Lang = "en") -> str:
    if not report.counts:
        return f"## {t('ft_title', lang)}\n\n{t('ft_none', lang)}\n"
    head, rows, group_head, group_rows = _tables(report, lang)
    return "\n".join([f"## {t('ft_title', lang)}", "", markdown_table(head, rows), "",
                      f"### {t('ft_by_group', lang)}", "", markdown_table(group_head, group_rows), ""])


def failure_tags_html(report: FailureTagReport, lang: Lang = "en") -> str:
    def table(head: list[str], rows: list[list[str]]) -> str:
        cells = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in rows)
        return ("<table><thead><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in head) + "</tr></thead>"
                f"<tbody>{cells}</tbody></table>")
    title = f'<h2>{html.escape(t("ft_title", lang))}</h2>'
    if not report.counts:
        return f'<section class="failure-tags">{title}<p>{html.escape(t("ft_none", lang))}</p></section>'
    head, rows, group_head, group_rows = _tables(report, lang)
    return (f'<section class="failure-tags">{title}{table(head, rows)}'
            f'<h3>{html.escape(t("ft_by_group", lang))}</h3>{table(group_head, group_rows)}</section>')
