"""Wording of the team app's scorecard review tab (质检复核: confirm or reject each deduction, add a missed one), in
Chinese and English; part of the one catalogue."""
from __future__ import annotations

SCORECARD_REVIEW_TEXT: dict[str, dict[str, str]] = {
    "scr_tab": {"zh": "评分表复核", "en": "Scorecard review"},
    "scr_run": {"zh": "运行", "en": "Run"},
    "scr_load": {"zh": "载入", "en": "Load"},
    "scr_table": {"zh": "对话与扣分", "en": "Conversations and deductions"},
    "scr_verdict": {"zh": "对话 · 评分表", "en": "Conversation · scorecard"},
    "scr_item": {"zh": "质检项", "en": "Item"},
    "scr_decision": {"zh": "复核结论", "en": "Decision"},
    "scr_confirm": {"zh": "确认扣分（命中正确）", "en": "Confirm (a true hit)"},
    "scr_reject": {"zh": "驳回扣分（误判）", "en": "Reject (a false hit)"},
    "scr_missed": {"zh": "补充漏判项", "en": "Add a missed item"},
    "scr_na": {"zh": "不适用（N/A）", "en": "Not applicable (N/A)"},
    # a saved decision as said back (stored in English: audit/scorecard_reviews.py); English says the stored word
    "scr_decided_confirm": {"zh": "确认扣分", "en": "confirm"},
    "scr_decided_reject": {"zh": "驳回扣分", "en": "reject"},
    "scr_decided_missed": {"zh": "补充漏判", "en": "missed"},
    "scr_decided_na": {"zh": "不适用", "en": "N/A"},
    "scr_decided_clear": {"zh": "无需扣分", "en": "clear"},
    "scr_note": {"zh": "备注", "en": "Note"},
    "scr_save": {"zh": "保存结论", "en": "Save decision"},
    "scr_saved": {"zh": "✓ 已保存：{item} {decision}", "en": "✓ saved: {item} {decision}"},
    "scr_need_pick": {"zh": "请先选择对话、质检项和结论", "en": "pick a conversation, an item and a decision first"},
    "scr_reviewers_only": {"zh": "只有质检员和组长可以复核评分表", "en": "only reviewers and leads review scorecards"},
    "scr_total": {"zh": "总分", "en": "Total"},
    "scr_deductions": {"zh": "扣分项", "en": "Deductions"},
    "scr_reviewed": {"zh": "已复核", "en": "Reviewed"},
    "scr_no_deduction": {"zh": "没有扣分项", "en": "No deduction"},
    "scr_unscored": {"zh": "未评分", "en": "unscored"},
    "scr_other_items": {"zh": "其他质检项（未命中、N/A、未评分）", "en": "Other items (clear, N/A, unscored)"},
    "scr_latest": {"zh": "最新复核：{decision}（{reviewer}）", "en": "latest review: {decision} ({reviewer})"},
    "scr_fatal": {"zh": "一票否决", "en": "fatal"},
    "scr_turn": {"zh": "第 {turn} 轮", "en": "turn {turn}"},
    "scr_status_hit": {"zh": "命中", "en": "hit"},
    "scr_status_clear": {"zh": "未命中", "en": "clear"},
    "scr_status_not_applicable": {"zh": "N/A", "en": "N/A"},
    "scr_status_unscored": {"zh": "未评分", "en": "unscored"},
    # the single-expert audit app's tab (ui/audit/scorecard_panel.py)
    "scr_listed": {"zh": "{n} 通对话有评分表结论：逐条确认或驳回扣分，或补充漏判项。",
                   "en": "{n} conversation(s) with a scorecard verdict: confirm or reject each deduction, or add a "
                         "missed item."},
    "scr_need_reason": {"zh": "驳回扣分或补充漏判项时请在备注中写明理由。",
                        "en": "a reason (the note) is required to reject a deduction or add a missed item"},
    "scr_none": {"zh": "这次运行没有评分表结论（用 `rubriceval run … --scorecards DIR` 评分后可在此复核扣分）。",
                 "en": "This run has no scorecard verdicts (score it with `rubriceval run … --scorecards DIR` to "
                       "review its deductions here)."},
}
