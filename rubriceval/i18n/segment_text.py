"""Wording of segment tables (`--by`), trends and sampling plans, in Chinese and English."""
from __future__ import annotations

SEGMENT_TEXT: dict[str, dict[str, str]] = {
    "segments_title": {"zh": "分组结果（{grouping}）", "en": "Results by {grouping}"},
    "segment": {"zh": "分组", "en": "Segment"},
    "scorecard_total": {"zh": "评分卡总分", "en": "Scorecard total"},
    "fatal_rate": {"zh": "致命项比例", "en": "Fatal rate"},
    "segments_note": {"zh": "未评分行单独计数，不计入平均分；缺少该字段的样本归入“(none)”。",
                      "en": "Unscored rows are counted, not averaged in; samples without the field are in '(none)'."},
    "trend_title": {"zh": "趋势：{scorer}（{statistic}）", "en": "Trend: {scorer} ({statistic})"},
    "period": {"zh": "周期", "en": "Period"},
    "change": {"zh": "较上期变化", "en": "Change vs previous"},
    "p_value": {"zh": "p 值", "en": "p-value"},
    "beyond_noise": {"zh": "超出噪声", "en": "Beyond noise"},
    "trend_note": {"zh": "平均分的区间为自助法百分位区间，通过率为 Wilson 区间；与上期的比较为非配对检验（各期会话不同）：置换检验，"
                         "两期合计超过 5000 行时用 Welch t 检验。",
                   "en": "Mean intervals are percentile bootstrap, pass-rate intervals Wilson; the change against the "
                         "previous period is an unpaired test (periods hold different conversations): a permutation test, Welch's "
                         "t-test above 5,000 rows in the two periods."},
}
