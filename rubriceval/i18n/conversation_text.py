"""Conversation wording shared by the audit app's transcript view and the reports (roles, cited turns, turn-level
verdicts, per-conversation rows, where rules fail), in Chinese and English; part of the one catalogue
(`rubriceval.i18n`)."""
from __future__ import annotations

CONVERSATION_TEXT: dict[str, dict[str, str]] = {
    # -- roles, as the judge's transcript names them (prompt/templates/*/transcript.j2) -----------------------------
    "cv_role_user": {"zh": "用户", "en": "User"},
    "cv_role_assistant": {"zh": "客服", "en": "Agent"},
    "cv_role_tool": {"zh": "工具结果", "en": "Tool result"},
    "cv_role_system": {"zh": "系统", "en": "System"},
    "cv_role_bot": {"zh": "机器人", "en": "Bot"},
    "cv_tool_call": {"zh": "工具调用", "en": "Tool call"},
    "cv_turn_contexts": {"zh": "本轮参考资料（{n}）", "en": "This turn's contexts ({n})"},
    "cv_transcript": {"zh": "对话记录", "en": "Transcript"},
    "cv_turns": {"zh": "轮数", "en": "Turns"},
    "cv_turn": {"zh": "第 {turn} 轮", "en": "turn {turn}"},
    "cv_empty_turn": {"zh": "（无文字）", "en": "(no text)"},
    # -- who cites a turn ----------------------------------------------------------------------------------------------
    "cv_cited_by_feedback": {"zh": "评审意见提到本轮", "en": "the judge's feedback cites this turn"},
    "cv_judge_turn_score": {"zh": "评审本轮 {score}/5", "en": "judge {score}/5 for this turn"},
    "cv_cited_turns": {"zh": "被引用的轮次：{turns}", "en": "cited turns: {turns}"},
    "cv_no_cited_turns": {"zh": "评审和检查项都没有指明具体轮次", "en": "neither the judge nor a check names a turn"},
    # -- turn-level verdicts in the audit app ------------------------------------------------------------------------
    "cv_expert_turn_score": {"zh": "{expert}：{score}/5", "en": "{expert}: {score}/5"},
    "cv_turn_verdicts": {"zh": "逐轮判定", "en": "Turn verdicts"},
    "cv_turn_pick": {"zh": "客服轮次", "en": "Agent turn"},
    "cv_turn_pick_label": {"zh": "第 {turn} 轮 · {judge}", "en": "turn {turn} · {judge}"},
    "cv_turn_not_judged": {"zh": "评审未单独打分", "en": "not scored alone by the judge"},
    "cv_turn_score": {"zh": "本轮分数", "en": "Turn score"},
    "cv_turn_reason": {"zh": "理由（与评审不同时必填）", "en": "Reason (required unless you agree)"},
    "cv_save_turn": {"zh": "保存本轮判定", "en": "Save turn verdict"},
    "cv_turn_saved": {"zh": "已保存第 {turn} 轮的判定（{action}）。", "en": "Saved the verdict on turn {turn} ({action})."},
    "cv_action_agree": {"zh": "同意评审", "en": "agreement"},
    "cv_action_override": {"zh": "推翻评审", "en": "override"},
    "cv_action_score_unscored": {"zh": "补充打分", "en": "score"},
    "cv_not_a_conversation": {"zh": "这个样本不是多轮对话，没有逐轮判定。",
                              "en": "This sample is not a conversation: there are no turns to judge."},
    "cv_turn_conflict": {"zh": "⚠ 冲突，未保存。", "en": "⚠ Conflict — not saved."},
    # -- reports -------------------------------------------------------------------------------------------------------
    "cv_section": {"zh": "多轮对话", "en": "Conversations"},
    "cv_conversation_id": {"zh": "对话 ID", "en": "Conversation"},
    "cv_first_failing_turn": {"zh": "首个失败轮次", "en": "First failing turn"},
    "cv_failing_checks": {"zh": "未通过的检查项", "en": "Failing checks"},
    "cv_where_fail": {"zh": "规则在对话中的失败位置", "en": "Where in conversations rules fail"},
    "cv_where_fail_note": {"zh": "按失败轮次在对话中的相对位置分组（开头 → 结尾），每个业务标准一张图；"
                                 "一段对话在一个标准下的每个失败轮次计一次。",
                           "en": "Failing turns grouped by their relative position in the conversation (start → "
                                 "end), one chart per rubric; each failing turn of a conversation counts once per "
                                 "rubric."},
    "cv_position": {"zh": "位置", "en": "Position"},
    "cv_failures": {"zh": "失败次数", "en": "Failures"},
    "cv_conversations_failing": {"zh": "失败对话数", "en": "Conversations failing"},
    "cv_by_turn": {"zh": "按轮次（轮次: 次数）", "en": "By turn (turn: count)"},
    "cv_more_rows": {"zh": "…… 另有 {n} 段对话未列出（见 Excel 的 conversations 表）",
                     "en": "… {n} more conversation(s) not listed (see the workbook's conversations sheet)"},
    "cv_n_failing_conversations": {"zh": "涉及 {n} 段对话", "en": "in {n} conversation(s)"},
    "cv_none_failed": {"zh": "没有失败的轮次。", "en": "No failing turn."},
    "cv_unscored": {"zh": "未评分", "en": "unscored"},
}
