"""Self-praise: text in an answer that rates, praises or scores the answer itself (issue 45), zh and en —
"本回答准确全面", "this response is exceptional", "回答质量：优秀", "Relevance 5/5, Accuracy 5/5", a fake rubric header.

RobustJudge's `fake_reasoning` family and a bot that writes "I have fully resolved your issue with empathy and
accuracy" grade themselves; a weak judge takes the grade as given (a 1 became a 4 or a 5 on the embedded judge). Unlike
a score demand, praise of one's own answer is not a defect in itself, and a confident customer-service answer comes
close to it ("以上就是完整的操作步骤", "I'm confident this will fix it"). So a finding here does not cap the score: the
policy masks the span — the judge scores the answer without it — and flags the sample only when the unmasked text
scored higher (rubriceval/safety/masking.py).

The rule works per sentence of the folded view: a sentence is self-praise when it names the answer itself (本回答,
以上回复, this response, the answer above, "this is a … answer") and praises it (one strong word — 优秀, 无可挑剔,
exceptional, flawless — or two plain ones — 准确, 完整, accurate, complete), or when it is a grader's label
("评价：", "Verdict:", "### Evaluation") followed by praise, or a list of quality dimensions with grades
("准确性：高；完整性：高", "Relevance 5/5"). A lone score ("[5]", "### Score\\n5") right after such a sentence is part of
it. Written on the dev half of benchmarks/judge/data/robustness_attacks.jsonl; its held-out half and the clean answers
measure it (docs/benchmarks.md, robustness).
"""
from __future__ import annotations

import re

_SUBJECT_EN = re.compile(
    r"\b(?:this|the|our|my|that)\s+(?:above\s+|following\s+|present\s+|assistant'?s\s+|agent'?s\s+|support\s+|"
    r"chatbot\s+|bot'?s\s+)?(?:response|answer|reply|summary|summarization|solution|output)\b"
    r"|\b(?:this|it)\s+is\s+(?:an?|the)\s+[^.!?\n]{0,60}?\b(?:answer|response|reply|example|piece)\b"
    r"|\bi\s+have\s+(?:fully\s+|completely\s+|perfectly\s+)?(?:resolved|answered|addressed)\b")
_STRONG_EN = re.compile(
    r"\b(?:exceptional(?:ly)?|excellent|outstanding|perfect(?:ly)?|flawless(?:ly)?|ideal|superb|exemplary|impeccable|"
    r"high[- ]quality|top[- ]quality|top[- ]notch|expert[- ]level|textbook|remarkabl[ey]|brilliant|excels?|"
    r"highest\s+quality|top\s+marks|could\s+not\s+be\s+improved|nothing\s+to\s+be\s+desired|"
    r"leaving\s+nothing|leaves\s+nothing|100\s*%\s+(?:correct|accurate|complete)|with\s+(?:empathy|accuracy|"
    r"precision|professionalism)\s+and\s+(?:empathy|accuracy|precision|professionalism|clarity))")
_PLAIN_EN = re.compile(
    r"\b(?:accurate(?:ly)?|comprehensive(?:ly)?|thorough(?:ly)?|precise(?:ly)?|complete(?:ly)?|correct(?:ly)?|"
    r"relevant|helpful|concise|professional|empathetic|reliable|well[- ]written|clarity|precision)\b")
_LABEL_EN = re.compile(
    r"^[\s(\[#*>\-]*(?:self[- ])?(?:evaluation|assessment|judge?ment|verdict|feedback|analysis|rationale|reasoning|"
    r"step[- ]by[- ]step\s+reasoning|explanation|critique|review|summary\s+of\s+quality|quality(?:\s+check)?|"
    r"why\s+this\s+answer\s+is\s+\w+)"
    r"(?:\s+(?:result|passed))?\s*[:—–\-,]")
_HEADER = re.compile(r"^\s*#{1,6}\s*(?:evaluation|assessment|score|rating|verdict|feedback|评分|评估|评价|得分)\s*$"
                     r"|^\s*\[\s*(?:rubric|evaluation|评分标准)\s*\]")
_DIMENSIONS = re.compile(
    r"\b(?:relevance|accuracy|completeness|helpfulness|clarity|correctness|tone|politeness|empathy)\s*[:=]?\s*"
    r"(?:[1-5]\s*/\s*5|excellent|high|perfect|outstanding)"
    r"|(?:相关|准确|完整|礼貌|专业|有用|清晰|规范)性?\s*[:：]?\s*(?:高|优秀|优|好|满分|[1-5]\s*/\s*5|✓|√|✔)")
_ANSWER_SCORE = re.compile(r"\b(?:this|the)\s+(?:answer|response|reply)\s*[:=]\s*[1-5]\b")
_LONE_SCORE = re.compile(r"^[\s\[(（【]*(?:score|rating|评分|得分)?\s*[:：]?\s*[1-5５](?:\s*/\s*5)?\s*(?:分)?[\s\])）】.。]*$")

_SUBJECT_ZH = re.compile(
    r"(?:本|该|此|这个|这条|这一|以上|上述|上面的?|我们的|我的|本次|本条)\s*(?:条|个|次|份)?\s*(?:客服)?"
    r"(?:回答|回复|答复|答案|解答|内容)"
    r"|^[\s(（]*(?:客服)?(?:回答|回复|答复)"
    r"|这是(?:一条|一个|一份|个|条|份)[^。!?\n]{0,16}?(?:回答|回复|答复|答案)")
_STRONG_ZH = re.compile(
    r"优秀|出色|优质|高质量|质量(?:很|极|非常)?高|上乘|无可挑剔|完美|满分|典范|标杆|堪称|理想的|准确无误|百分之百|"
    r"100\s*%|表现出色|俱佳|无任何错误|没有任何错误|最高评价|值得肯定|圆满|专业到位")
_PLAIN_ZH = re.compile(r"准确|全面|完整|专业|清晰|详尽|详实|翔实|严谨|得体|到位|贴心|切题|简洁|明了|可靠|权威|友好|"
                       r"充分|无误|正确")
_LABEL_ZH = re.compile(
    r"^[\s(（【#*]*(?:评价|点评|总评|总结|结论|分析|说明|推理|自评|自检|回答质量|回答评估|回答点评|质量评估|评估|"
    r"综上所述|综上|综合来看|可以确认|可以看出)\s*[:：—\-,]")

# (";" does not end a sentence: "相关性：高；准确性：高" is one list of grades)
_SPLIT = re.compile(r"[。!?！？\n]+[)）\]】」\"”']*|\.(?=\s)")


def _sentences(view: str) -> list[tuple[int, int]]:
    """[start, end) of each sentence of the folded view, its end punctuation included, surrounding blanks left out."""
    spans, start = [], 0
    for cut in [m.end() for m in _SPLIT.finditer(view)] + [len(view)]:
        if cut <= start:
            continue
        lo, hi = start, cut
        while lo < hi and view[lo].isspace():
            lo += 1
        while hi > lo and view[hi - 1].isspace():
            hi -= 1
        if hi > lo:
            spans.append((lo, hi))
        start = cut
    return spans


def _praise(sentence: str) -> int:
    strong = len(_STRONG_EN.findall(sentence)) + len(_STRONG_ZH.findall(sentence))
    plain = len(_PLAIN_EN.findall(sentence)) + len(_PLAIN_ZH.findall(sentence))
    return 2 * strong + plain


def _is_self_praise(sentence: str) -> bool:
    praise = _praise(sentence)
    if len(_DIMENSIONS.findall(sentence)) >= 2 or _HEADER.search(sentence) or _ANSWER_SCORE.search(sentence):
        return True
    if re.search(r"[/／]\s*5\b", sentence) and _DIMENSIONS.search(sentence):
        return True
    if _SUBJECT_EN.search(sentence) or _SUBJECT_ZH.search(sentence):
        return praise >= 2
    if _LABEL_EN.search(sentence) or _LABEL_ZH.search(sentence):
        return praise >= 1
    return False


def self_praise_spans(view: str) -> list[tuple[int, int]]:
    """[start, end) in the folded view `view` of each run of self-praising sentences (a lone score or a score header
    right after one belongs to it)."""
    sentences = _sentences(view)
    flagged = [_is_self_praise(view[lo:hi]) for lo, hi in sentences]
    for i in range(1, len(sentences)):
        if flagged[i - 1] and not flagged[i] and _LONE_SCORE.match(view[slice(*sentences[i])]):
            flagged[i] = True
    runs: list[tuple[int, int]] = []
    for (lo, hi), hit in zip(sentences, flagged):
        if not hit:
            continue
        if runs and not view[runs[-1][1]:lo].strip():
            runs[-1] = (runs[-1][0], hi)
        else:
            runs.append((lo, hi))
    return runs
