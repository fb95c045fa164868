"""Wording of scorecard items awaiting review (issues 39, 44: undecided, or a machine decision pending review), how
each judgement item was decided, and why a conversation is in the review queue, in Chinese and English; part of the
one catalogue (`rubriceval.i18n`)."""
from __future__ import annotations

AWAITING_TEXT: dict[str, dict[str, str]] = {
    # -- the report's scorecard section ------------------------------------------------------------------------------
    "aw_counts": {"zh": "待复核 {n} 通（{share}）：{undecided} 通有裁判无法判定的项，{pending} 通有待人工确认的机器判定；"
                        "这些对话不计入平均分和合格率，总分可能在 {low}–{high} 之间",
                  "en": "{n} awaiting review ({share}): {undecided} with an item the judge could not decide, {pending} "
                        "with a machine decision pending review; left out of the mean and pass rate, their totals "
                        "can still be {low}–{high}"},
    "aw_list": {"zh": "待复核的对话", "en": "Conversations awaiting review"},
    "aw_conversation": {"zh": "对话", "en": "Conversation"},
    "aw_undecided_items": {"zh": "无法判定的项", "en": "Undecided items"},
    "aw_pending_items": {"zh": "待确认的项", "en": "Items pending review"},
    "aw_range": {"zh": "可能的总分", "en": "Total can be"},
    "aw_more": {"zh": "……另有 {n} 通", "en": "… and {n} more"},
    "aw_total": {"zh": "待复核（{low}–{high}）", "en": "awaiting review ({low}–{high})"},
    "aw_total_plain": {"zh": "待复核", "en": "awaiting review"},
    # -- how each judgement item was decided -------------------------------------------------------------------------
    "how_title": {"zh": "各裁判项在本次运行中如何判定（本裁判模型）", "en": "How each judgement item was decided (this run, this judge)"},
    "how_item": {"zh": "质检项", "en": "Item"},
    "how_rule": {"zh": "规则", "en": "rule"},
    "how_judge": {"zh": "裁判（阈值 0.5）", "en": "judge (plain 0.5)"},
    "how_judge_calibrated": {"zh": "裁判（校准阈值）", "en": "judge (calibrated)"},
    "how_checker": {"zh": "轮次校验器（标注集拟合）", "en": "turn checker (fitted)"},
    "how_rubric": {"zh": "业务标准", "en": "rubric"},
    "how_undecided": {"zh": "无法判定", "en": "undecided"},
    "how_pending": {"zh": "待确认", "en": "pending review"},
    "how_not_applicable": {"zh": "N/A", "en": "N/A"},
    "how_unscored": {"zh": "未评分", "en": "unscored"},
    "how_line": {"zh": "{item}：{counts}", "en": "{item}: {counts}"},
    # -- cells and statuses -------------------------------------------------------------------------------------------
    "sc_cell_undecided": {"zh": "无法判定", "en": "undecided"},
    "sc_cell_pending": {"zh": "待确认", "en": "pending"},       # English: the frame's own words, as scripts read them
    "sc_col_awaiting_review": {"zh": "待复核（可能总分）", "en": "awaiting_review"},
    "scr_clear_choice": {"zh": "未命中（不扣分；用于裁判无法判定的项）", "en": "Clear (no hit; decides an undecided item)"},
    "scr_status_undecided": {"zh": "无法判定（待复核）", "en": "undecided (awaiting review)"},
    "scr_status_pending_hit": {"zh": "命中（待确认）", "en": "hit (pending review)"},
    "scr_status_pending_clear": {"zh": "未命中（待确认）", "en": "clear (pending review)"},
    # -- the weekly table ---------------------------------------------------------------------------------------------
    "wk_awaiting": {"zh": "待复核", "en": "Awaiting review"},
    # -- why a conversation is in the review queue (risk-first additions of a sampling plan) -------------------------
    "rq_top_p_yes": {"zh": "{item} 的 p(yes) 最高", "en": "highest p(yes) for {item}"},
    "rq_undecided": {"zh": "无法判定", "en": "undecided"},
    "rq_pending_review": {"zh": "待人工确认", "en": "pending review"},
    "rq_fatal": {"zh": "一票否决", "en": "fatal"},
    "rq_low_confidence": {"zh": "裁判把握低", "en": "low judge confidence"},
    "rq_disagreement": {"zh": "复核意见分歧", "en": "disagreement"},
}
