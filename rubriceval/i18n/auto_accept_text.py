"""Wording of selective scoring with a guarantee (issue 44: `auto_accept`): why an item accepts nothing yet, the
report's section, its trend and the gate's figures, in Chinese and English; part of the one catalogue."""
from __future__ import annotations

AUTO_ACCEPT_TEXT: dict[str, dict[str, str]] = {
    # why an item's region is what it is (trust/selective.py)
    "aa_cannot_yet": {"zh": "暂不能自动采信：仅 {n} 条复核（至少需要 {needed} 条且全部一致）",
                      "en": "cannot accept anything yet: {n} reviews (at least {needed}, all agreeing, are needed)"},
    "aa_below_target": {"zh": "{n} 条复核不足以保证一致率 ≥ {target}（置信度 {confidence}）：全部待复核",
                        "en": "{n} reviews do not guarantee agreement ≥ {target} at {confidence} confidence: "
                              "everything waits for review"},
    "aa_rule_below": {"zh": "规则项复核一致 {agreement}，一致率上限 {upper} 低于目标 {target}：不再自动采信",
                      "en": "the rule agreed with reviewers {agreement}, at most {upper}: below the target {target}; "
                            "no longer accepted automatically"},
    "aa_rule_unreviewed": {"zh": "规则项尚无复核：按规则采信", "en": "a rule not reviewed yet: applied as written"},
    # a rubric's target applied to its verdicts (trust/rubric_selective.py): the run's note before judging
    "aa_rubric_note": {"zh": "评分细则 {rubric}：自动采信（裁判 {judge}）：{accepts}",
                       "en": "rubric {rubric}: auto_accept on judge {judge}: {accepts}"},
    "aa_rubric_accepts_none": {"zh": "不自动采信任何判定，全部待复核",
                               "en": "accepts nothing automatically, every scored verdict waits for review"},
    "aa_rubric_accepts_all": {"zh": "自动采信全部已评分判定", "en": "accepts every scored verdict automatically"},
    "aa_rubric_accepts_confident": {"zh": "自动采信置信度 ≥ {threshold} 的判定，其余待复核",
                                    "en": "accepts the verdicts with confidence ≥ {threshold}, the rest wait "
                                          "for review"},
    "aa_rubric": {"zh": "评分细则", "en": "Rubric"},
    "aa_pending_note": {"zh": "{n} 条待复核，不计入均值", "en": "{n} pending review, in no mean"},
    "compare_pending": {"zh": "待复核（不参与配对）：基线 {a} 条，候选 {b} 条",
                        "en": "pending review (in no pair): {a} in the baseline, {b} in the candidate"},
    # the report's section (report/auto_accept.py)
    "aa_title": {"zh": "自动采信（保证一致率）", "en": "Automatic acceptance (guaranteed agreement)"},
    "aa_intro": {"zh": "只有复核证明与审核员一致率达到目标的机器判定才自动采信，其余标为待复核：总分等复核后再计，"
                       "不会当作已判定计入。",
                 "en": "Only the machine decisions whose agreement with reviewers is proven to meet the target are "
                       "accepted automatically; the rest are pending review: their totals wait for a reviewer and "
                       "are never counted as if decided."},
    "aa_target": {"zh": "{card}：目标一致率 ≥ {agreement}（置信度 {confidence}），裁判 {judge}",
                  "en": "{card}: target agreement ≥ {agreement} at {confidence} confidence, judge {judge}"},
    "aa_card": {"zh": "评分表", "en": "Scorecard"},
    "aa_item": {"zh": "质检项", "en": "Item"},
    "aa_region": {"zh": "采信区域", "en": "Accepted region"},
    "aa_coverage": {"zh": "自动采信率", "en": "Coverage"},
    "aa_guaranteed": {"zh": "保证一致率", "en": "Guaranteed agreement"},
    "aa_reviewed": {"zh": "复核数", "en": "Reviewed"},
    "aa_pending": {"zh": "待复核", "en": "Pending review"},
    "aa_undecided": {"zh": "无法判定", "en": "Undecided"},
    "aa_waiting": {"zh": "仍未复核", "en": "Still waiting"},
    "aa_note": {"zh": "说明", "en": "Note"},
    "aa_overall": {"zh": "合计", "en": "Overall"},
    "aa_region_all": {"zh": "全部", "en": "all"},
    "aa_region_none": {"zh": "无", "en": "none"},
    "aa_region_confident": {"zh": "置信度 ≥ {threshold}", "en": "confidence ≥ {threshold}"},
    "aa_trend_title": {"zh": "自动采信趋势（各次运行）", "en": "Automatic acceptance across runs"},
    "aa_run": {"zh": "运行", "en": "Run"},
    "aa_weekly": {"zh": "自动采信（本次运行）：{accepted}/{decisions} 条判定自动采信（{coverage}），保证一致率 {guaranteed}；"
                        "待复核 {pending}，无法判定 {undecided}",
                  "en": "Automatic acceptance (this run): {accepted} of {decisions} decisions accepted automatically "
                        "({coverage}), guaranteed agreement {guaranteed}; {pending} pending review, {undecided} "
                        "undecided"},
    "aa_dropped": {"zh": "{item}：{run} 起不再自动采信", "en": "{item}: no longer accepted automatically from {run}"},
}
