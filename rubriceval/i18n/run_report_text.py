"""Report wording that used to be English inside a Chinese report (issue 43.4): the run's status and judge in the
header, the manipulation screen's finding, scorecard trust shortfalls, default thresholds, yes/no answers, notes on
a scorer's figures and the scorecard sheet's columns; part of the one catalogue (`rubriceval.i18n`)."""
from __future__ import annotations

RUN_REPORT_TEXT: dict[str, dict[str, str]] = {
    # -- the header ----------------------------------------------------------------------------------------------------
    "run_status_created": {"zh": "已创建", "en": "created"},
    "run_status_running": {"zh": "运行中", "en": "running"},
    "run_status_complete": {"zh": "已完成", "en": "complete"},
    "run_status_interrupted": {"zh": "已中断", "en": "interrupted"},
    "run_status_failed": {"zh": "失败", "en": "failed"},
    "run_status_batch": {"zh": "等待批量 API 结果", "en": "batch"},
    "judge_embedded": {"zh": "内置本地评审模型（{model}）", "en": "embedded local judge ({model})"},
    "judge_at": {"zh": "{model}（{url}）", "en": "{model} at {url}"},
    "judge_no_model": {"zh": "{url}（未设置模型）", "en": "{url} (model not set)"},
    # -- an answer that addresses the judge (safety/manipulation_policy.py) --------------------------------------------
    "ev_suspected_manipulation": {"zh": "疑似操纵评审：回答中有针对评审的文字（{kinds}；由 {defences} 发现）：{quoted}",
                                  "en": "judge-directed text ({kinds}; by {defences}): {quoted}"},
    "ev_quoted_in": {"zh": "{field}：{span}", "en": "{field}: {span}"},
    # self-praise or an odd-token suffix masked for the judge, and it would have raised the score (safety/masking.py)
    "ev_masked_manipulation": {"zh": "疑似操纵评审：回答自我评价或带有异常字符串（{kinds}；由 {defences} 发现）：{quoted}。"
                                     "评审看的是去掉这段文字后的回答：带这段 {unmasked} 分，去掉后 {masked} 分，按 {masked} 分计",
                               "en": "suspected manipulation: the answer praises itself or carries an odd-token suffix "
                                     "({kinds}; by {defences}): {quoted}. The judge scored the answer without it: "
                                     "{unmasked} with it, {masked} without, counted as {masked}"},
    "field_answer": {"zh": "回答", "en": "answer"},
    "field_question": {"zh": "问题", "en": "question"},
    "field_contexts": {"zh": "参考资料", "en": "contexts"},
    "field_ground_truth": {"zh": "标准答案", "en": "ground_truth"},
    "field_conversation": {"zh": "对话", "en": "conversation"},
    "field_indexed": {"zh": "{field}[{index}]", "en": "{field}[{index}]"},
    # -- checks whose per-turn questions do not count in this mode (scoring/turn_questions.py) --------------------------
    "ev_idle_questions": {"zh": "未运行：它的逐轮问题只在 predicates 模式下计分（或作为必过检查）",
                          "en": "not run: its per-turn questions count only in judge_mode predicates (or as a must "
                                "check)"},
    # -- scorecards ------------------------------------------------------------------------------------------------------
    "sc_untrusted_reviews": {"zh": "已复核 {n} 次，门槛需要 {bar} 次", "en": "{n} review(s), the bar needs {bar}"},
    "sc_untrusted_precision": {"zh": "精确率 {value} < {bar}", "en": "precision {value} < {bar}"},
    "sc_untrusted_recall": {"zh": "召回率 {value} < {bar}", "en": "recall {value} < {bar}"},
    "answer_yes": {"zh": "是", "en": "yes"},
    "answer_no": {"zh": "否", "en": "no"},
    "sc_question_answer": {"zh": "{question} → {said}（p(yes)={p_yes}）", "en": "{question} → {said} (p(yes)={p_yes})"},
    # -- thresholds and notes on a scorer's figures -------------------------------------------------------------------------
    # where a metric's pass threshold comes from (report/summary_models.py ScorerSummary.threshold_source)
    "threshold_source_rubric": {"zh": "细则", "en": "rubric"},
    "threshold_source_config": {"zh": "运行配置", "en": "config"},
    "threshold_source_definition": {"zh": "定义", "en": "definition"},
    "threshold_source_default": {"zh": "默认", "en": "default"},
    "threshold_source_none": {"zh": "无", "en": "none"},
    "note_std_needs_two": {"zh": "标准差需要至少两条已评分记录", "en": "std needs at least two scored rows"},
    "note_no_threshold": {"zh": "细则没有设定通过线：通过率无法计算",
                          "en": "rubric definition has no threshold: pass rate is undefined"},
    "note_manipulation": {"zh": "{n} 条回答针对评审（suspected_manipulation）：已按细则的操纵处理策略处理",
                          "en": "{n} answer(s) addressed the judge (suspected_manipulation): handled by the rubric's "
                                "manipulation policy"},
    "note_manipulation_by": {"zh": "{n} 条回答针对评审（suspected_manipulation；发现方式 {by}）：已按细则的操纵处理策略处理",
                             "en": "{n} answer(s) addressed the judge (suspected_manipulation; found by {by}): handled "
                                   "by the rubric's manipulation policy"},
    "note_no_samples": {"zh": "未提供样本：按标签/意图的分组从略", "en": "no samples given: per tag/intent breakdown left out"},
    "note_no_scored_rows": {"zh": "没有已评分记录：平均分、中位数和通过率无法计算",
                            "en": "no scored rows: mean, median and pass rate are undefined"},
    "note_no_threshold_stats": {"zh": "没有通过线：通过率无法计算", "en": "no threshold: pass rate is undefined"},
    "note_left_out_unscored": {"zh": "未计入（没有已评分记录）：{ids}", "en": "left out (no scored rows): {ids}"},
    "note_left_out_weight": {"zh": "未计入（权重为 0）：{ids}", "en": "left out (weight 0): {ids}"},
    "note_no_business_rubrics": {"zh": "本次运行没有业务细则", "en": "no business rubrics in this run"},
    "note_no_rubric_scored": {"zh": "没有细则有已评分记录", "en": "no rubric has a scored row"},
    "row_overall": {"zh": "总体", "en": "overall"},
    # a rubric's measured: figure for the run's judge and mode (rubric/measured.py Measurement.line)
    "measured_line": {"zh": "{mode}，裁判 {judge}：κ {kappa} [{low}, {high}]，n={n}（{dataset}，{date}）",
                      "en": "{mode} on {judge}: κ {kappa} [{low}, {high}], n={n} ({dataset}, {date})"},
    # -- a scorecard's Excel sheet: scorecard_frame's columns and cell words (English: the frame's own names; sample_id
    #    and unscored_reason stay as they are, the keys scripts read the sheet by) ---------------------------------------
    "sc_col_version": {"zh": "版本", "en": "version"},
    "sc_col_total": {"zh": "总分", "en": "total"},
    "sc_col_clamped": {"zh": "总分被截断", "en": "clamped"},
    "sc_col_fatal": {"zh": "一票否决项", "en": "fatal"},
    "sc_col_dimension": {"zh": "维度：{dimension}", "en": "dim:{dimension}"},
    "sc_cell_fatal": {"zh": "一票否决", "en": "fatal"},
    "sc_cell_unscored": {"zh": "未评分", "en": "unscored"},
    "sc_cell_true": {"zh": "是", "en": "True"},
    "sc_cell_false": {"zh": "否", "en": "False"},
}

# Notes a summary stores in English (report/aggregate.py, stats/describe.py): said again in the report's language by
# `rubriceval.i18n.resay`, which reads their parameters back from the English text.
NOTE_KEYS = ("note_std_needs_two", "note_no_threshold", "note_manipulation", "note_manipulation_by",
             "note_no_samples", "note_no_scored_rows", "note_no_threshold_stats", "note_left_out_unscored",
             "note_left_out_weight", "note_no_business_rubrics", "note_no_rubric_scored")
