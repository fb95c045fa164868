"""Wording of official scores (human decisions beside the judge's), appeals and calibration sessions, in Chinese and
English."""
from __future__ import annotations

OFFICIAL_TEXT: dict[str, dict[str, str]] = {
    "official_scorer_note": {"zh": "{n} 行人工裁定；机器分 {machine}", "en": "{n} human-decided; machine {machine}"},
    "official_headline": {"zh": "官方分数：以最新的人工裁定（改判、仲裁、申诉通过）为准，否则为机器分；共 {n} 行人工裁定，"
                                "机器业务分 {machine}。",
                          "en": "Official scores: the latest human decision (override, adjudication, accepted appeal), "
                                "else the judge's; {n} row(s) human-decided, machine business score {machine}."},
    "official_machine_only": {"zh": "仅机器评分：人工裁定未计入（--machine-only）。",
                              "en": "Machine only: the judge's scores, human decisions left out (--machine-only)."},
    "official_human_decided": {"zh": "人工裁定", "en": "human-decided"},
    "official_machine_score": {"zh": "机器分", "en": "Machine score"},
    "official_machine_mean": {"zh": "机器均分", "en": "Machine mean"},
    "official_machine_pass_rate": {"zh": "机器通过率", "en": "Machine pass rate"},
    "official_decided_by": {"zh": "裁定来源", "en": "Decided by"},
    "official_source_override": {"zh": "改判", "en": "override"},
    "official_source_adjudication": {"zh": "仲裁", "en": "adjudication"},
    "official_source_appeal": {"zh": "申诉通过", "en": "accepted appeal"},
    "appeal_flag": {"zh": "申诉提示：{scorer} · {item}：{why}", "en": "Appeals flag {scorer} · {item}: {why}"},
    "appeal_whole_verdict": {"zh": "整体评分", "en": "the whole verdict"},
}
