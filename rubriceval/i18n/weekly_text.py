"""Wording of the weekly QA report (周报: report/weekly.py), in Chinese and English."""
from __future__ import annotations

WEEKLY_TEXT: dict[str, dict[str, str]] = {
    "wk_title": {"zh": "质检周报", "en": "Weekly QA report"},
    "wk_heading": {"zh": "质检周报：{card}（{period}，对比 {previous}）", "en": "Weekly QA: {card} ({period} vs {previous})"},
    "wk_heading_first": {"zh": "质检周报：{card}（{period}，无上期数据）",
                         "en": "Weekly QA: {card} ({period}, no previous period)"},
    "wk_kind": {"zh": "分组类型", "en": "Group"},
    "wk_kind_agent": {"zh": "客服", "en": "Agent"},
    "wk_kind_skill_group": {"zh": "技能组", "en": "Skill group"},
    "wk_kind_all": {"zh": "全部", "en": "All"},
    "wk_key": {"zh": "工号 / 技能组", "en": "Agent id / skill group"},
    "wk_name": {"zh": "姓名", "en": "Name"},
    "wk_conversations": {"zh": "会话数", "en": "Conversations"},
    "wk_previous_conversations": {"zh": "上期会话数", "en": "Previous conversations"},
    "wk_reviewed": {"zh": "复核占比", "en": "Reviewed"},
    "wk_mean": {"zh": "官方均分", "en": "Official mean total"},
    "wk_ci": {"zh": "95% 区间", "en": "95% CI"},
    "wk_previous_mean": {"zh": "上期均分", "en": "Previous mean"},
    "wk_change": {"zh": "较上期变化", "en": "Change"},
    "wk_p_value": {"zh": "p 值", "en": "p-value"},
    "wk_beyond_noise": {"zh": "超出噪声", "en": "Beyond noise"},
    "wk_fatal": {"zh": "一票否决数", "en": "Fatal count"},
    "wk_previous_fatal": {"zh": "上期一票否决数", "en": "Previous fatal count"},
    "wk_top_deductions": {"zh": "主要扣分项", "en": "Top deductions"},
    "wk_yes": {"zh": "是", "en": "yes"},
    "wk_no": {"zh": "否", "en": "no"},
    "wk_untested": {"zh": "无法检验", "en": "no test"},
    "wk_note": {"zh": "总分为官方分（复核、裁定、申诉通过后按评分表重新计算）；区间为自助法百分位区间；较上期变化为非配对检验"
                      "（置换检验，两期合计超过 5000 行时用 Welch t 检验），p < 0.05 为超出噪声；一票否决数为命中一票否决项的会话数。",
                "en": "Totals are official (reviews, adjudications and accepted appeals, recomputed by the card); "
                      "intervals are percentile bootstrap; the change is an unpaired test (permutation, Welch's t "
                      "above 5,000 rows), beyond noise at p < 0.05; the fatal count is conversations with a fatal "
                      "item hit."},
}
