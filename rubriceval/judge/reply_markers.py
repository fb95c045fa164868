"""What counts as a result marker in a judge reply: the normalisation tables and the marker patterns, strongest
tier first (the rules they serve are listed in parser.py)."""
from __future__ import annotations

import re
from dataclasses import dataclass

# ── normalisation ────────────────────────────────────────────────────────────────────────────────────────────────────

# Full-width ASCII (［ＲＥＳＵＬＴ］：４) → ASCII, ideographic space → space, minus sign → hyphen. One code point to one,
# so offsets found in the normalised text are valid in the original (feedback keeps the judge's own characters).
TO_ASCII = {cp: cp - 0xFEE0 for cp in range(0xFF01, 0xFF5F)} | {0x3000: 0x20, 0x2212: ord("-")}

CHINESE_NUMERALS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7,
                     "八": 8, "九": 9, "十": 10}

# ── marker patterns (matched case-insensitively on the normalised text) ──────────────────────────────────────────────

# Every pattern below puts exactly one whitespace/markup run between two tokens and makes each optional part begin
# with its own token, so no two `*` runs can share the same characters: matching stays linear on adversarial input.

# The score itself: an integer or decimal (decimals are read so they can be rejected, not truncated), or a single
# Chinese numeral when it stands alone ("五分", "得分：三") — never the 一 of 一般.
_NUM = (r"(?P<num>[-+]?\d+(?:\.\d+)?(?!\.?\d)"
        r"|[零〇一二两三四五六七八九十](?=\s*分|\s*$|[\s。.,，;；!！)）\]】]))(?![A-Za-z])")
# "/5", "out of 5", "(out of 5)" after the number: the scale the judge used (checked, never rescaled).
_DENOMINATOR = (r"(?:[ \t]*(?:[(（][ \t]*)?(?:/|out[ \t]+of)[ \t]*(?P<den>\d+)(?!\.?\d)(?:[ \t]*分)?"
                r"(?:[ \t]*[)）])?)?")
# "4分（满分5分）".
_FULL_MARKS = r"(?:[ \t]*[(（][ \t]*满分[ \t]*(?P<full>\d+)(?:[ \t]*分)?[ \t]*[)）])?"
# "3-4", "3 or 4", "3 或 4": a range is not a verdict.
_RANGE = r"(?P<alt>[ \t]*(?:or|to|或者?|到|至|~|～|-|–|—)[ \t]*\d+)?"
# The value after a marker and its whitespace: an optional opening bracket ("[RESULT] (5)"), the number, its 分,
# scale, full marks and a would-be range.
_SCORE_VALUE = r"(?:[(\[（][\s*_]*)?" + _NUM + r"(?:[ \t]*分)?" + _DENOMINATOR + _FULL_MARKS + _RANGE
# Whitespace and markdown emphasis between a marker and its value: "**[RESULT]** **4**".
_GAP = r"[\s*_]*"

# After a tag: an optional separator and label, "[RESULT]: 4", "[Result] Score: 2", "[RESULT] score of 1",
# "【结果】得分为4分". Each optional part starts with its own token and carries its trailing gap.
_AFTER_TAG = (_GAP + r"(?:[:=]" + _GAP + r")?"
              r"(?:(?:score|result|rating|得分|评分|分数)" + _GAP + r"(?:(?:of|is|为|是)" + _GAP + r")?(?:[:=]"
              + _GAP + r")?)?")
# Chinese labels and how they join the number: "得分：4", "最终得分为4分", "分数是：4".
_ZH_SCORE_LABEL = r"(?:(?:最终|总|综合|整体|总体)?(?:得分|评分|分数|打分)|(?:最终|评分|评估)结果)"
_ZH_JOINER = r"(?:(?:为|是|应为|应该为|应该是)(?:[ \t]*[:=])?|[:=])"

# The preferred response in a pairwise reply; case-sensitive so the article "a" is never read as Response A.
_CHOICE_VALUE = r"(?:(?:Response|回答)[ \t]*)?(?P<num>(?-i:[AB]))(?![A-Za-z])"


@dataclass(frozen=True)
class Marker:
    form: str
    tier: int                # 1 explicit result tag, 2 labelled score, 3 bare ratio — lower is stronger
    pattern: re.Pattern[str]
    may_be_rubric_echo: bool  # labelled forms are also how rubrics and prompts list score levels


def marker(form: str, tier: int, regex: str, *, may_be_rubric_echo: bool = False) -> Marker:
    return Marker(form, tier, re.compile(regex, re.I), may_be_rubric_echo)


SCORE_MARKERS: tuple[Marker, ...] = (
    # [RESULT] 4 · [SCORE] 4 · [Result] Score: 2 · [RESULT] 5 out of 5
    marker("result_tag", 1, r"\[[ \t]*(?:RESULT|SCORE)[ \t]*\]" + _AFTER_TAG + _SCORE_VALUE),
    # [RESULT: 4]
    marker("result_tag", 1, r"\[[ \t]*(?:RESULT|SCORE)[ \t]*[:=][ \t]*" + _SCORE_VALUE + r"[ \t]*\]"),
    # 【结果】4 · [结果]：4分 · 【得分】4
    marker("zh_result", 1, r"[【\[][ \t]*(?:最终)?(?:结果|得分|评分|分数)[ \t]*[】\]]" + _AFTER_TAG + _SCORE_VALUE),
    # 【结果：4】
    marker("zh_result", 1, r"【[ \t]*(?:最终)?(?:结果|得分|评分|分数)[ \t]*:[ \t]*" + _SCORE_VALUE + r"[ \t]*】"),
    # Score: 4 · Final score = 4/5 · Result: 4 · Rating is 4
    marker("score_label", 2, r"(?<![A-Za-z])(?:(?:final|overall|total)[ \t]+)?(?:score|rating|grade|result)"
            r"[ \t*_]*(?:[:=]|is\b)" + _GAP + _SCORE_VALUE, may_be_rubric_echo=True),
    # (Score 5) · [Score 4] · （得分：4）
    marker("score_label", 2, r"[(\[（][ \t]*(?:score|rating|得分|评分|分数)[ \t]*(?:[:=][ \t]*)?" + _NUM + _DENOMINATOR
            + r"(?:[ \t]*分)?[ \t]*[)\]）]", may_be_rubric_echo=True),
    # score of 1
    marker("score_of", 2, r"(?<![A-Za-z])(?:score|rating)[ \t]+of" + _GAP + _SCORE_VALUE, may_be_rubric_echo=True),
    # 得分：4分 · 最终得分为4分 · 评分：４
    marker("zh_score", 2, _ZH_SCORE_LABEL + r"[ \t*_]*" + _ZH_JOINER + _GAP + _SCORE_VALUE, may_be_rubric_echo=True),
    # 得分4分 (no joiner, so the 分 is required: "分数 1：" in a level list must not match)
    marker("zh_score", 2, _ZH_SCORE_LABEL + r"[ \t]*" + _NUM + r"[ \t]*分" + _FULL_MARKS + _RANGE,
            may_be_rubric_echo=True),
    # 结果：4 on a line of its own (not mid-sentence, where "检索结果：3 条" is no score)
    marker("zh_score", 2, r"(?:^|(?<=\n))[ \t*_#>-]*(?:最终)?结果[ \t*_]*[:=]" + _GAP + _SCORE_VALUE
            + r"[ \t]*(?:[。.][ \t]*)?(?=\n|$)", may_be_rubric_echo=True),
    # 4分（满分5分）
    marker("zh_score", 2, r"(?<![\d.])" + _NUM + r"[ \t]*分[ \t]*[(（][ \t]*满分[ \t]*(?P<full>\d+)(?:[ \t]*分)?"
            r"[ \t]*[)）]", may_be_rubric_echo=True),
    # "score": 4 in JSON that did not decode (truncated, single-quoted, trailing comma)
    marker("json_fragment", 2, r"[\"'](?:score|得分|分数|评分)[\"'][ \t]*:[ \t]*[\"']?" + _SCORE_VALUE),
    # 4 out of 5
    marker("out_of", 3, r"(?<![\w.])" + _NUM + r"[ \t]*out[ \t]+of[ \t]*(?P<den>\d+)(?!\.?\d)",
            may_be_rubric_echo=True),
)

def _preference_markers(choice: str) -> tuple[Marker, ...]:
    return (
        # [RESULT] A · [Result] Response B
        marker("result_tag", 1, r"\[[ \t]*RESULT[ \t]*\]" + _GAP + r"(?:[:=]" + _GAP + r")?" + choice),
        # [RESULT: B]
        marker("result_tag", 1, r"\[[ \t]*RESULT[ \t]*[:=][ \t]*" + choice + r"[ \t]*\]"),
        # 【结果】A · [结果] 回答B
        marker("zh_result", 1, r"[【\[][ \t]*(?:最终)?结果[ \t]*[】\]]" + _GAP + r"(?:[:=]" + _GAP + r")?" + choice),
        # [Response B]
        marker("response_tag", 1, r"\[[ \t]*Response[ \t]+(?P<num>(?-i:[AB]))[ \t]*\]"),
        # "Result: A" / "结果：B" / "Winner: A" at the start of a line
        marker("result_label", 2, r"(?:^|(?<=\n))[ \t*_#]*(?:Result|Winner|结果|更好的回答)[ \t*_]*[:=][ \t*_]*"
                + choice),
    )


PREFERENCE_MARKERS = _preference_markers(_CHOICE_VALUE)
# With `allow_tie`: "[RESULT] tie", "【结果】平局" as well.
TIE_WORDS = ("tie", "平局", "平手")
PREFERENCE_OR_TIE_MARKERS = _preference_markers(
    r"(?:(?:Response|回答)[ \t]*)?(?P<num>(?-i:[AB])|" + "|".join(TIE_WORDS) + r")(?![A-Za-z])")

# Rubric echo, after the number: the level's description follows ("分数 1：完全错误", "a score of 5 would…",
# "得分 4 分以上表示…", "Score: 5 means…").
LEVEL_DESCRIPTION_FOLLOWS = re.compile(
    r"[ \t]*(?:分[ \t]*)?(?:[:]|表示|代表|意味|指的?是|对应|(?:及|或)?以[上下]|means?\b|indicates?\b|represents?\b"
    r"|would\b|requires?\b|if\b|when\b)", re.I)
# Rubric echo, before the marker: the prompt's "Reference Answer (Score 5)" heading.
REFERENCE_HEADING_BEFORE = re.compile(r"(?:reference(?:[ \t]+answer)?|参考答案|标准答案)[ \t]*[(（\[]?[ \t]*$", re.I)

# Markers this close together (≤ this many letters/digits/汉字 between them) belong to one final result section.
MAX_SECTION_GAP_WORD_CHARS = 3
