"""Checks whose predicates ask the judge a yes/no question about one turn (`ask:`), run through the one judge path.

A check runs as a plain function; when it needs an answer it does not have yet it raises NeedAnswer
(rubriceval/checks/turn_answers.py), and `run_check_asking` asks that one question and runs the check again. So:

* only the turns the check's logic reaches are asked about (`before` stops at its first decisive turn, `max_count`
  once over its limit, a per-turn must_not_mention at its first failing turn, `escalate_after` asks about a
  handover only while failures are pending);
* questions go out one at a time in the order the check reads turns, each prompt being the transcript up to the
  turn, then the turn and the question (zh|en/turn_question.j2): a question about turn 6 reuses the judge
  server's prefix cache of the one about turn 4 up to turn 4, and two questions about one turn share all but the
  question;
* an answer is kept per (question, turn) for every item of the sample, and the judge cache keeps it across runs
  (the prompt holds exactly the transcript up to the turn, so a later turn added to a conversation changes nothing);
* p(yes) comes from the answer token's logprobs, read as checklist questions read it (scoring/checklist.py).

`plan_turn_questions` lists, for the dry run, every question a check may ask (the early stops can only make it
fewer; which of them are already cached is looked up as for any planned call).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rubriceval.checks import dispatch_check
from rubriceval.checks.predicates import needs_question
from rubriceval.checks.turn_answers import NeedAnswer, TurnAnswer, TurnAnswers, Unanswered, using_answers
from rubriceval.core.verdict import Evidence, Usage
from rubriceval.data.conversation import Conversation
from rubriceval.data.knowledge import Knowledge, load_knowledge
from rubriceval.data.sample import Sample
from rubriceval.i18n import msg
from rubriceval.judge.ask import JudgeRequest, TemplateReask, ask
from rubriceval.judge.options import choices_schema
from rubriceval.prompt.checklist import CHOICES, SCHEMA_NAME, call_options
from rubriceval.prompt.compile import CompiledPrompt, environment
from rubriceval.prompt.environment import render_text, templates_fingerprint
from rubriceval.prompt.transcript import render_transcript
from rubriceval.rubric.items import CHECK_KINDS
from rubriceval.rubric.predicate import Predicate, as_predicate
from rubriceval.scoring.yes_no import read_yes_no

TEMPLATES = ("turn_question_system", "turn_question", "checklist_reask")
ROLE_NAMES = {"zh": {"user": "用户", "assistant": "客服", "tool": "工具结果", "system": "系统", "bot": "机器人"},
              "en": {"user": "user", "assistant": "assistant", "tool": "tool result", "system": "system",
                     "bot": "bot"}}
MAX_QUESTIONS_PER_CHECK = 500      # a guard against a check that keeps asking (each turn asked at most once)


def compile_turn_question(conversation: Conversation, turn: int, question: str, lang: str = "zh",
                          knowledge: str = "", template_dir: str | None = None) -> CompiledPrompt:
    """The messages for one question about turn `turn` (from 1): the transcript up to it, the turn, the question."""
    env = environment(template_dir)
    said = conversation.turns[turn - 1]
    user = render_text(env, lang, "turn_question", knowledge=knowledge, turn=turn,
                       transcript=render_transcript(conversation, lang, upto=turn),
                       role=ROLE_NAMES[lang].get(said.role, said.role), content=said.content, question=question)
    messages = [{"role": "system", "content": render_text(env, lang, "turn_question_system")},
                {"role": "user", "content": user}]
    fingerprint = templates_fingerprint(env, [f"{lang}/{name}.j2" for name in TEMPLATES])
    return CompiledPrompt(rubric_id="", item_id=f"turn{turn}", messages=messages, json_schema=choices_schema(CHOICES),
                          options=call_options(), schema_name=SCHEMA_NAME, cache_tag=f"turn_question/{fingerprint}")


class QuestionAsker:
    """Asks the questions of one sample's checks and keeps the answers (and what they cost)."""

    def __init__(self, judge: Any, conversation: Conversation | None, lang: str = "zh",
                 knowledge: Knowledge | None = None, template_dir: str | None = None):
        self.judge, self.conversation, self.lang = judge, conversation, lang
        self.knowledge = knowledge.text if knowledge is not None else ""
        self.template_dir = template_dir
        self.answers = TurnAnswers(judge_model=judge.config.model if judge is not None else None,
                                   can_ask=judge is not None and conversation is not None,
                                   knowledge=knowledge.passages if knowledge is not None else [])
        self.usage = Usage()

    async def answer(self, question: str, turn: int) -> None:
        if self.conversation is None:      # can_ask is False without one: TurnAnswers never asks
            raise ValueError("a turn question needs a conversation")
        prompt = compile_turn_question(self.conversation, turn, question, self.lang, self.knowledge,
                                       self.template_dir)
        request = JudgeRequest(messages=prompt.messages, json_schema=prompt.json_schema, schema_name=SCHEMA_NAME,
                               cache_tag=prompt.cache_tag, options=prompt.options)
        reask = TemplateReask(template=environment(self.template_dir).get_template(f"{self.lang}/checklist_reask.j2"))
        asked = await ask(self.judge, request, read_yes_no, reask=reask,
                          max_input_tokens=self.judge.config.max_input_tokens)
        self.usage = self.usage + asked.usage
        if asked.ok and asked.value is not None:
            self.answers.record(TurnAnswer(turn=turn, question=question, p_yes=round(asked.value.p_yes, 4),
                                           source=asked.value.source))
        else:
            self.answers.record(TurnAnswer(turn=turn, question=question, unscored_kind=asked.unscored_kind,
                                           reason=asked.reason))


async def run_check_asking(item: Any, sample: Sample, asker: QuestionAsker) -> Evidence:
    """The check's evidence, asking the judge whatever questions its predicates need (raises Unanswered when one
    cannot be answered: provider error, unreadable reply, no judge)."""
    return await answering(lambda: dispatch_check(item, sample), asker, f"check '{item.id}'")


async def answering(check: Callable[[], Evidence], asker: QuestionAsker, name: str) -> Evidence:
    """`check()` run until it needs no more answers, each question it raises asked of the judge in turn (the one
    loop of run_check_asking, also for a scorecard's per-occurrence count that reads every turn)."""
    for _ in range(MAX_QUESTIONS_PER_CHECK):
        needed: NeedAnswer | None = None
        with using_answers(asker.answers):
            try:
                return check()
            except NeedAnswer as need:
                needed = need
        await asker.answer(needed.question, needed.turn)
    raise RuntimeError(f"{name} asked more than {MAX_QUESTIONS_PER_CHECK} questions")


def rubric_knowledge(rubric: Any, run_knowledge: str | None = None) -> Knowledge | None:
    """The knowledge file a rubric reads: its own `knowledge:` (relative to the rubric file), else the run's."""
    if getattr(rubric, "knowledge", None):
        return rubric.knowledge_base()
    return load_knowledge(run_knowledge) if run_knowledge else None


def idle_question_checks(rubric: Any) -> set[str]:
    """Checks whose questions could not change this rubric's score, so they are not asked: under judge_capped
    (outside judge_mode predicates) only `must` checks count, as caps. Their evidence says they were not run."""
    if rubric.judge_mode == "predicates" or rubric.combine.rule != "judge_capped":
        return set()
    return {item.id for item in rubric.check_items if not item.must and item_questions(item)}


async def run_checks_asking(items: list[Any], sample: Sample, judged: Sample, judge: Any, lang: str = "zh",
                            knowledge: Knowledge | None = None, idle: frozenset[str] | set[str] = frozenset()
                            ) -> tuple[list[Evidence], Usage, list[TurnAnswer], Unanswered | None]:
    """Every check's evidence (questions asked about `judged`, the sample as the judge may see it: masked when
    redaction is on), their cost, the answers, and the first question that could not be answered (None: all).
    Checks named in `idle` are not run (see idle_question_checks)."""
    asker = QuestionAsker(judge, judged.conversation, lang, knowledge)
    evidence: list[Evidence] = []
    failed: Unanswered | None = None
    for item in items:
        if item.id in idle:
            evidence.append(Evidence(item=item.id, passed=None, detail="not run: its per-turn questions count "
                                     "only in judge_mode predicates (or as a must check)",
                                     message=msg("ev_idle_questions")))
            continue
        try:
            evidence.append(await run_check_asking(item, sample, asker))
        except Unanswered as why:
            failed = failed or why
            evidence.append(Evidence(item=item.id, passed=None, turn=why.turn, question=why.question,
                                     detail=f"turn {why.turn}: {why.reason}"))
    return evidence, asker.usage, asker.answers.asked(), failed


def asks_judge(rubric: Any) -> bool:
    """Whether scoring this rubric (in its judge_mode) may call a judge: its judge or checklist items, or a check's
    per-turn question that counts (judge_mode predicates asks only those). A run makes its judge when any rubric
    does; counting judge items alone left predicates mode without one (every question unscored, issue 43.1)."""
    idle = idle_question_checks(rubric)
    return bool(rubric.judge_items) or any(item_questions(item) for item in rubric.check_items
                                           if item.id not in idle)


def item_questions(item: Any) -> list[tuple[Predicate, list[str]]]:
    """(predicate with a question, roles of the turns it may be asked about) for every `ask:` in the item: the
    fields its check kind's registration says hold a predicate (rubric/check_kinds.py `asks`)."""
    found: list[tuple[Predicate, list[str]]] = []
    for field, whose in CHECK_KINDS[item.type].asks:
        predicate = as_predicate(getattr(item, field, None))
        if predicate is not None and predicate.ask:
            found.append((predicate, _roles(item, whose)))
    return found


def _roles(item: Any, whose: str) -> list[str]:
    """A role as registered, or the roles the item's field names ("@turns": none given means the assistant's)."""
    if not whose.startswith("@"):
        return [whose]
    value = getattr(item, whose[1:], None)
    if value is None:
        return ["assistant"]
    return [value] if isinstance(value, str) else list(value)


def plan_turn_questions(items: list[Any], conversation: Conversation | None, lang: str = "zh",
                        knowledge: Knowledge | None = None) -> list[CompiledPrompt]:
    """Every question the checks may ask about this conversation (at most: early stops only remove some), once per
    (question, turn). Kinds registered with asked_turns first/last (first_turn, final_turn) ask about that one turn;
    the others about each turn of their roles (a turn whose text already matches, or says an `unless` phrase, is not
    asked)."""
    if conversation is None:
        return []
    wanted: dict[tuple[str, int], None] = {}
    for item in items:
        asked_turns = CHECK_KINDS[item.type].asked_turns
        for predicate, roles in item_questions(item):
            if asked_turns != "each":
                turns = conversation.assistant_turns
                numbers = [turns[-1] if asked_turns == "last" else turns[0]] if turns else []
            else:
                numbers = [n for n, t in conversation.numbered() if t.role in roles]
            for n in numbers:
                if predicate.ask and needs_question(predicate, conversation.turns[n - 1].content, n,
                                                    item.case_sensitive):
                    wanted.setdefault((predicate.ask, n))
    text = knowledge.text if knowledge is not None else ""
    return [compile_turn_question(conversation, n, q, lang, text) for q, n in sorted(wanted, key=lambda k: k[1])]
