"""What the deterministic checks say about a sample (their evidence), in Chinese and English; part of the one catalogue
(`rubriceval.i18n`). Phrases arrive already quoted (“…”), so the same parameters read well in both languages."""
from __future__ import annotations

EVIDENCE_TEXT: dict[str, dict[str, str]] = {
    "ev_clauses": {"zh": "{parts}", "en": "{parts}"},     # several findings, one after the other
    # -- must_mention / must_not_mention -----------------------------------------------------------------------------
    "ev_mention_all_ok": {"zh": "{total} 个必提要点都已提到：{found}",
                          "en": "mentions all {total} required phrase(s): {found}"},
    "ev_mention_all_missing": {"zh": "必提要点只提到 {n_found}/{total} 个，缺少：{missing}",
                               "en": "mentions {n_found} of {total} required phrase(s); missing: {missing}"},
    "ev_mention_any_ok": {"zh": "提到了 {found}（{total} 项中提到任意一项即可）",
                          "en": "mentions {found} (any one of {total} is enough)"},
    "ev_mention_any_missing": {"zh": "一项都没有提到：{missing}", "en": "mentions none of: {missing}"},
    "ev_forbidden_none": {"zh": "没有出现禁用说法", "en": "no forbidden phrase"},
    "ev_forbidden_found": {"zh": "出现了禁用说法：{found}", "en": "forbidden phrase(s) present: {found}"},
    # -- regex -------------------------------------------------------------------------------------------------------
    "ev_regex_matched": {"zh": "匹配到规则 /{pattern}/", "en": "pattern /{pattern}/ matched"},
    "ev_regex_matched_forbidden": {"zh": "匹配到了不应出现的规则 /{pattern}/",
                                   "en": "pattern /{pattern}/ matched (it must not)"},
    "ev_regex_not_found": {"zh": "未匹配到规则 /{pattern}/", "en": "pattern /{pattern}/ not found"},
    # -- required_link -----------------------------------------------------------------------------------------------
    "ev_link_found": {"zh": "找到链接 {url}", "en": "found {url}"},
    "ev_link_missing": {"zh": "缺少{wanted}", "en": "missing {wanted}"},
    "ev_link_wanted_url": {"zh": "链接 {url}", "en": "{url}"},
    "ev_link_wanted_pattern": {"zh": "符合 /{pattern}/ 的链接", "en": "a link matching /{pattern}/"},
    "ev_link_wanted_any": {"zh": "链接", "en": "a link"},
    "ev_link_off_domain": {"zh": "链接不在允许的域名（{domains}）内：{links}",
                           "en": "link(s) outside the allowed domains ({domains}): {links}"},
    "ev_link_invented": {"zh": "可能是编造的链接（参考资料中没有）：{links}",
                         "en": "possibly invented (in no context): {links}"},
    "ev_note": {"zh": "注意：{text}", "en": "note: {text}"},
    # -- steps_in_order ----------------------------------------------------------------------------------------------
    "ev_steps_ok": {"zh": "步骤顺序正确", "en": "all steps in order"},
    "ev_steps_swapped": {"zh": "{later} 出现在 {earlier} 之前", "en": "{later} comes before {earlier}"},
    "ev_steps_missing": {"zh": "缺少步骤：{missing}", "en": "missing step(s): {missing}"},
    "ev_steps_order": {"zh": "回答中的顺序：{order}", "en": "order in the answer: {order}"},
    # -- max_length --------------------------------------------------------------------------------------------------
    "ev_length": {"zh": "{length} 个字符（上限 {max_chars}）", "en": "{length} characters (max {max_chars})"},
    # -- context conditions (unless_context / only_if_context) --------------------------------------------------------
    "ev_context_grants": {"zh": "{check}；但参考资料第 {context} 条提到 {phrase}（“{excerpt}”），因此允许",
                          "en": "{check}; allowed because context {context} mentions {phrase} (“{excerpt}”)"},
    "ev_context_grants_none": {"zh": "{check}；参考资料中没有 {phrases} 作为依据",
                               "en": "{check}; no context mentions {phrases}, so it is not allowed"},
    "ev_context_required": {"zh": "参考资料第 {context} 条提到 {phrase}（“{excerpt}”），因此要求：{check}",
                            "en": "required because context {context} mentions {phrase} (“{excerpt}”): {check}"},
    "ev_context_not_required": {"zh": "无需检查：参考资料未提到 {phrases}",
                                "en": "not required: no context mentions {phrases}"},
    # -- conversations -----------------------------------------------------------------------------------------------
    "ev_role_assistant": {"zh": "客服", "en": "assistant"},
    "ev_role_user": {"zh": "用户", "en": "user"},
    "ev_either": {"zh": "{first}或{second}", "en": "{first} or {second}"},
    "ev_before_never": {"zh": "{then} 从未出现，无需先做什么", "en": "{then} never occurs, so nothing has to precede it"},
    "ev_before_ok": {"zh": "{first}（第 {first_turn} 轮）出现在 {then}（第 {then_turn} 轮）之前",
                     "en": "{first} (turn {first_turn}) comes before {then} (turn {then_turn})"},
    "ev_before_late": {"zh": "第 {then_turn} 轮说了 {then}，此前没有 {first}；它在第 {first_turn} 轮才首次出现",
                       "en": "turn {then_turn} says {then} before any of {first}; it first appears in turn "
                             "{first_turn}"},
    "ev_before_absent": {"zh": "第 {then_turn} 轮说了 {then}，此前没有 {first}；它从未出现",
                         "en": "turn {then_turn} says {then} before any of {first}; it never appears"},
    "ev_failed_bot_turn": {"zh": "第 {turn} 轮：{span}", "en": "turn {turn}: {span}"},
    "ev_failed_user_turn": {"zh": "第 {turn} 轮用户说：{span}", "en": "user at turn {turn}: {span}"},
    "ev_escalate_ok": {"zh": "连续 {failures} 轮未解决（{streak}），随后第 {turn} 轮转人工",
                       "en": "{failures} failed bot turn(s) ({streak}), then handover at turn {turn}"},
    "ev_escalate_missed": {"zh": "连续 {failures} 轮未解决（{streak}），但第 {turn} 轮没有转人工（{handover}）",
                           "en": "{failures} consecutive failed bot turn(s) ({streak}), but turn {turn} does not hand "
                                 "over ({handover})"},
    "ev_escalate_ended": {"zh": "连续 {failures} 轮未解决（{streak}），对话结束前也没有转人工（{handover}）",
                          "en": "{failures} consecutive failed bot turn(s) ({streak}), and the conversation ends "
                                "without a handover ({handover})"},
    "ev_escalate_early": {"zh": "在连续 {failures} 轮未解决之前，第 {turn} 轮已转人工",
                          "en": "handover at turn {turn} before {failures} consecutive failures"},
    "ev_escalate_never": {"zh": "没有连续 {failures} 轮未解决（客服轮次：{turns}）",
                          "en": "never {failures} consecutive failed bot turns (bot turns: {turns})"},
    "ev_count": {"zh": "{n} 个{roles}轮次包含 {phrases}", "en": "{n} {roles} turn(s) contain {phrases}"},
    "ev_count_where": {"zh": "{n} 个{roles}轮次包含 {phrases}（第 {turns} 轮）",
                       "en": "{n} {roles} turn(s) contain {phrases} (turns {turns})"},
    "ev_count_over": {"zh": "{counted}；最多允许 {max} 轮，第 {turn} 轮超出",
                      "en": "{counted}; at most {max} allowed, turn {turn} is one too many"},
    "ev_count_under": {"zh": "{counted}；至少需要 {min} 轮", "en": "{counted}; at least {min} required"},
    "ev_count_ok": {"zh": "{counted}；允许 {min}–{max} 轮", "en": "{counted}; allowed {min}–{max}"},
    "ev_final_turn": {"zh": "最后一轮客服回复（第 {turn} 轮）：{check}", "en": "last assistant turn ({turn}): {check}"},
    "ev_final_turn_says": {"zh": "最后一轮客服回复（第 {turn} 轮）：{check}；它说的是：“{said}”",
                           "en": "last assistant turn ({turn}): {check}; it says: “{said}”"},
    "ev_first_turn": {"zh": "第一轮客服回复（第 {turn} 轮）：{check}", "en": "first assistant turn ({turn}): {check}"},
    "ev_first_turn_says": {"zh": "第一轮客服回复（第 {turn} 轮）：{check}；它说的是：“{said}”",
                           "en": "first assistant turn ({turn}): {check}; it says: “{said}”"},
    # -- response_time (首响 / 回复超时) ------------------------------------------------------------------------------
    "ev_response_time_ok": {"zh": "{n} 次回复都在 {max} 秒内（最慢：第 {turn} 轮，{delay} 秒）",
                            "en": "all {n} repl(ies) within {max} s (slowest: turn {turn}, {delay} s)"},
    "ev_response_time_late": {"zh": "第 {turn} 轮客服在用户消息（第 {asked} 轮）{delay} 秒后才回复，超过上限 {max} 秒",
                              "en": "turn {turn} replies {delay} s after the customer's message (turn {asked}), over "
                                    "the {max} s limit"},
    "ev_response_time_late_many": {"zh": "{first}（共 {n} 次超时：第 {turns} 轮）",
                                   "en": "{first} ({n} late replies: turns {turns})"},
    "ev_response_time_unknown": {"zh": "无法判断：第 {turn} 轮没有可读的时间戳，第 {reply} 轮回复用户消息（第 {asked} 轮）"
                                       "用了多久不得而知",
                                 "en": "cannot decide: turn {turn} has no readable timestamp, so how long turn {reply} "
                                       "took to answer the customer (turn {asked}) is unknown"},
    "ev_response_time_none": {"zh": "没有等待客服回复的用户消息", "en": "no customer message waits for a reply"},
    # -- predicates: entities, regex, per-turn questions (rubriceval/rubric/predicate.py) ----------------------------
    "ev_before_first": {"zh": "{first}（第 {first_turn} 轮）出现时，{then} 还没有出现",
                        "en": "{first} (turn {first_turn}) comes before any {then}"},
    "ev_match_shown": {"zh": "出现了 {what}：{said}", "en": "shows {what}: {said}"},
    "ev_match_missing": {"zh": "没有出现 {what}", "en": "does not show {what}"},
    "ev_turns_share": {"zh": "{passed}/{asked} 个轮次通过（共 {total} 轮，至少需要 {need} 轮）",
                       "en": "{passed} of {asked} turn(s) read pass ({total} in all, {need} needed)"},
    "ev_match_and": {"zh": "{check}；{match}", "en": "{check}; {match}"},
    "ev_turns_all_pass": {"zh": "全部 {n} 个{role}轮次都通过", "en": "all {n} {role} turn(s) pass"},
    "ev_turns_none": {"zh": "没有{role}轮次", "en": "no {role} turn"},
    "ev_turn_failed": {"zh": "第 {turn} 轮：{check}", "en": "turn {turn}: {check}"},
    "ev_turns_failed": {"zh": "第 {turn} 轮：{check}（未通过的轮次：{turns}）",
                        "en": "turn {turn}: {check} (failing turns: {turns})"},
}
