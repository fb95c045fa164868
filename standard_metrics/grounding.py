"""The deterministic check every extracted statement passes before a metric counts it (issue 29).

A small judge asked to split a text into statements copies sentences from whatever else it was shown (the answer's
sentences turned up among the ground truth's), invents subjects, and lists the question itself or a greeting as
a "statement". Each statement is therefore kept only when it can be found in its own source text:

- **question**: it ends with ? / ？ (or 吗/呢 + optional punctuation), or it is a piece of the sample's question
  said again (the user's words, not the source's) → dropped;
- **greeting**: courtesy with no fact (您好, 感谢您的咨询, 祝您…, "hope this helps") → dropped;
- **not in source**: after normalisation (NFKC, case folded, punctuation and spaces removed, a few function
  characters such as 的/是/了 ignored) its coverage by the source text plus the question (the extraction prompt asks
  for subjects to be completed from the question) is below `MIN_COVERAGE` — coverage is the mean of the share of
  its characters and the share of its adjacent character pairs found there — or a number in it occurs in neither
  (an invented 15天 is not grounded by a source that says 10天) → dropped.

Completeness (answers): when some statement was kept, an answer sentence the kept statements do not cover
(coverage < 0.5) — a claim the judge skipped — is added as a statement of its own (`uncovered_sentences`), so
faithfulness checks every claim. An answer the judge found no statement in (a refusal) gets none added.

CJK is compared per character, other scripts per word. What is dropped is listed with its reason, and metrics
show it in their evidence and details (`dropped_statements`): never silently lost.
"""
from __future__ import annotations

import re
import unicodedata
from typing import Literal

from pydantic import BaseModel, Field

MIN_COVERAGE = 0.7
# A judge's "supported"/"attributed" stands only when the contexts carry the statement's words this far (and every
# number): contexts paraphrase more than a text's own statements do, so the bar is lower (call_modes `support`).
MIN_SUPPORT_COVERAGE = 0.5
DropReason = Literal["question", "greeting", "not_in_source"]

_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff"
_UNIT = re.compile(f"[{_CJK}]|[^\\W_{_CJK}]+")          # one CJK character, or one word / number
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
# Characters that carry no fact of their own: a statement rephrased around them is still its source's.
_FUNCTION_CHARS = frozenset("的是了在有和与及或也都就为被把将对于着过")
_FUNCTION_WORDS = frozenset("a an the is are was were be been of to in on at for and or with by as it its this "
                            "that".split())
_SENTENCE_END = re.compile(r"(?<=[。！？!?；;\n])|(?<=\.)\s+")
# An answer sentence this little covered by the extracted statements is a claim the extraction skipped.
MIN_SENTENCE_COVERED = 0.5
_QUESTION_END = re.compile(r"(?:[?？]|[吗呢][。.!！]?)\s*$")
_GREETING = re.compile(
    r"^\s*(?:您好|你好|亲[，,！!]|感谢|谢谢|祝您|祝你|欢迎|很高兴|请问还有|如有|如果您还有|如还有|请随时|希望(?:以上|这)|"
    r"hello\b|hi\b|dear\b|thanks?\b|thank you|glad to|happy to help|hope (?:this|that) helps|feel free|"
    r"please let (?:me|us) know|is there anything else)", re.IGNORECASE)


class DroppedStatement(BaseModel):
    statement: str
    reason: DropReason
    coverage: float | None = None      # share of its characters/words found in the source (not_in_source)


class GroundedStatements(BaseModel):
    kept: list[str] = Field(default_factory=list)
    dropped: list[DroppedStatement] = Field(default_factory=list)


def units(text: str) -> list[str]:
    """Content units of a text: CJK characters and words/numbers, NFKC-normalised and case-folded, without the
    function characters and words that rephrasing adds or removes."""
    found = _UNIT.findall(unicodedata.normalize("NFKC", text).casefold())
    return [u for u in found if u not in _FUNCTION_CHARS and u not in _FUNCTION_WORDS]


def _bigrams(seq: list[str]) -> list[tuple[str, str]]:
    return list(zip(seq, seq[1:]))


def coverage(statement: str, source: str) -> float:
    """How much of the statement occurs in the source: the mean of the share of its content units found there and
    the share of its adjacent unit pairs found there (pairs tell 请假须…提交 from a source that has the same
    characters scattered). 1.0 for a statement without any content unit."""
    wanted = units(statement)
    if not wanted:
        return 1.0
    have = units(source)
    singles = sum(u in set(have) for u in wanted) / len(wanted)
    pairs = _bigrams(wanted)
    if not pairs:
        return singles
    have_pairs = set(_bigrams(have))
    return (singles + sum(p in have_pairs for p in pairs) / len(pairs)) / 2


def _numbers(text: str) -> set[str]:
    return set(_NUMBER.findall(unicodedata.normalize("NFKC", text)))


def drop_reason(statement: str, source: str, question: str = "") -> tuple[DropReason | None, float | None]:
    """Why this statement is not a statement of `source` (None: keep it), and its coverage when that is why."""
    text = statement.strip()
    if not units(text) or _GREETING.match(text):
        return "greeting", None
    if _QUESTION_END.search(text):
        return "question", None
    if question and len(said := "".join(units(text))) >= 4 and said in "".join(units(question)):
        return "question", None     # a piece of the question said again: the user's words, not the source's
    if not _numbers(text) <= _numbers(source) | _numbers(question):
        return "not_in_source", round(coverage(text, source + "\n" + question), 3)
    covered = coverage(text, source + "\n" + question)
    if covered < MIN_COVERAGE:
        return "not_in_source", round(covered, 3)
    return None, None


def ground(statements: list[str], source: str, question: str = "") -> GroundedStatements:
    """The statements that belong to `source`, in order (duplicates once), and the others with their reason."""
    result = GroundedStatements()
    for statement in dict.fromkeys(s.strip() for s in statements):
        if not statement:
            continue
        reason, covered = drop_reason(statement, source, question)
        if reason is None:
            result.kept.append(statement)
        else:
            result.dropped.append(DroppedStatement(statement=statement, reason=reason, coverage=covered))
    return result


def text_supports(statement: str, contexts: list[str], question: str = "") -> bool:
    """Whether the contexts can be the source of this statement at all: every number in it occurs in them (or in
    the question) and `MIN_SUPPORT_COVERAGE` of its words occur in them (the question's words do not count). A necessary
    condition, not a sufficient one: the
    judge still decides, this only refuses a "supported" that no context's text bears out."""
    source = "\n".join(contexts)
    if not _numbers(statement) <= _numbers(source) | _numbers(question):
        return False
    return coverage(statement, source) >= MIN_SUPPORT_COVERAGE     # words of the question are no support


def sentences(text: str) -> list[str]:
    """The sentences of a text (split after 。！？；; newlines and ". ")."""
    return [t.strip() for t in _SENTENCE_END.split(text) if t and t.strip()]


def uncovered_sentences(statements: list[str], text: str, question: str = "") -> list[str]:
    """Sentences of `text` that the extracted statements do not cover (coverage < MIN_SENTENCE_COVERED), questions
    and greetings excepted: claims the extraction skipped. The 1.5B judge left the invented sentence out of the
    answer's statements in 5 of 6 inventing answers, so faithfulness never checked it."""
    said = "\n".join(statements)
    missed = []
    for sentence in sentences(text):
        sentence = sentence.rstrip("。！!；;.")
        if drop_reason(sentence, text, question)[0] is None and coverage(sentence, said) < MIN_SENTENCE_COVERED:
            missed.append(sentence)
    return missed
