"""Wording of pairwise A/B comparisons and of the judge panel (terminal text, compare and gate output) in Chinese
and English; part of the one catalogue (`rubriceval.i18n`)."""
from __future__ import annotations

PAIRWISE_TEXT: dict[str, dict[str, str]] = {
    # -- pairwise A/B ------------------------------------------------------------------------------------------------
    "pairwise_title": {"zh": "成对比较（A/B）", "en": "Pairwise comparison (A/B)"},
    "pairwise_versions": {"zh": "版本（第一个为基线）", "en": "Versions (the first is the baseline)"},
    "pairwise_pair": {"zh": "B 对 A", "en": "B vs A"},
    "pairwise_n": {"zh": "样本", "en": "n"},
    "pairwise_wins_b": {"zh": "B 胜", "en": "B wins"},
    "pairwise_ties": {"zh": "平局", "en": "ties"},
    "pairwise_wins_a": {"zh": "A 胜", "en": "A wins"},
    "pairwise_win_rate": {"zh": "B 胜率", "en": "B win rate"},
    "pairwise_inconsistent": {"zh": "换序翻转", "en": "flipped"},
    "pairwise_unscored": {"zh": "未评分", "en": "unscored"},
    "pairwise_ranking": {"zh": "Bradley–Terry 排名", "en": "Bradley–Terry ranking"},
    "pairwise_strength": {"zh": "强度", "en": "strength"},
    "pairwise_explain": {"zh": "胜率 = (胜 + 平局/2) / 已评分；每个样本按两种顺序各评一次，结果翻转记为平局；未评分不计入胜率。",
                         "en": "win rate = (wins + ties/2) / scored; each sample is judged in both orders, a choice "
                               "that flips with the order is a tie; unscored judgements are counted, not rated."},
    "pairwise_none": {"zh": "这两次运行没有成对比较结果", "en": "no pairwise verdicts for these two runs"},
    # -- judge panel -------------------------------------------------------------------------------------------------
    "panel_agreement": {"zh": "评审团一致性", "en": "Judge panel agreement"},
    "panel_alpha": {"zh": "Krippendorff α（有序）", "en": "Krippendorff α (ordinal)"},
    "panel_fleiss": {"zh": "Fleiss κ（通过/不通过）", "en": "Fleiss κ (pass/fail)"},
    "panel_disagreements": {"zh": "{n}/{total} 条评委意见分歧（相差 ≥2 分或通过与否不一）",
                            "en": "{n}/{total} disagreements (spread ≥ 2 or a pass/fail split)"},
    "panel_judge_unscored": {"zh": "{n} 条未评分", "en": "{n} unscored"},
}
