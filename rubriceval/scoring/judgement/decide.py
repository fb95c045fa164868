"""How a judgement item decides on one conversation (issue 39): a scorecard's `question:` item or
`applies_when.question`, a rubric checklist question — one mechanism for all three.

1. **Whose turns.** The question's wording names the party it asks about (roles.py): asked of a conversation, it is
   decomposed over that party's turns — one short question per turn, the transcript shared as the prompt prefix
   (turns.py). A question naming no party, or a single-turn sample, stays one whole question.
2. **Evidence first** (evidence.py): a kind drafted from the question; where a violation must show it (a promise,
   someone's personal data) a turn without it is "no" by rule and costs no call, and a turn with it is asked the
   kind's short per-claim question (the claim against the policy passages retrieved for it — policy.py, not the
   whole file —; whether the named details belong to someone other than the customer). Personal data the
   conversation itself places with someone else (ownership.py) is a yes by rule; a third person's is never cleared.
3. **The item's score** is the highest p(yes) over the turns asked ("did the agent ever …"; the lowest for a
   question about every turn, 每一轮), or the whole question's p(yes). A question about how turns relate
   (反复, 升级, 多轮 …) is asked whole.
4. **The decision** reads the score on the item's calibration for this judge (rubric/calibration.py): a fitted
   one the card or rubric carries (label-free, from examples, or from reviews), else rubriceval's turn checker of
   the item's evidence kind (turn_checker.py: a head over an in-process embedder's vector of every turn of the
   party, stacked with the judge's p(yes) where that adds, on a band fitted on several writers' labelled
   conversations — the score is then its probability, the evidence gate asks nothing and no word rule tips it),
   else rubriceval's own calibration of the item's evidence kind on this judge, fitted on labelled conversations
   and asked in the kind's wording (kind_calibration.py), else one made now from the item's own examples
   (anchors.py). Inside its undecided
   band — or when the judge cannot separate the item's own examples — the item is undecided: never a silent
   pass. A fatal item's band runs from its no anchor up to its yes example. Strong upset cues tip an upset
   question's band to yes and keep a score under it undecided. Without examples or calibration, the plain 0.5.
"""
from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from rubriceval.common.errors import RubricEvalError
from rubriceval.core.verdict import Usage
from rubriceval.data.conversation import Conversation
from rubriceval.rubric.calibration import ItemCalibration, ItemExample, calibration_for
from rubriceval.scoring.judgement.evidence import EvidenceKind, claim_question, evidence_kind, strong_upset
from rubriceval.scoring.judgement.kind_calibration import kind_calibration
from rubriceval.scoring.judgement.ownership import OTHERS_BY_RULE, whose_data
from rubriceval.scoring.judgement.policy import POLICY_READ_BACK, relevant_passages, states_policy
from rubriceval.scoring.judgement.roles import TurnRole, every_turn, per_turn_question, question_role, turn_question
from rubriceval.scoring.judgement.turn_checker import TurnChecker, head_logits, turn_checker
from rubriceval.scoring.judgement.turns import TurnAsker, judge_name

DecidedBy = Literal["rule", "judge", "judge_calibrated", "checker"]


class JudgementSpec(BaseModel):
    """A judgement item as the mechanism reads it (built from a scorecard item, its applies_when or a checklist
    question)."""

    question: str
    lang: str = "zh"
    examples: list[ItemExample] = Field(default_factory=list)
    calibration: list[ItemCalibration] = Field(default_factory=list)
    sees_knowledge: bool = False        # the question is about the policy / knowledge file
    fatal: bool = False                 # a fatal item: never cleared where the judge cannot place p(yes) (anchors.py)


class TurnFinding(BaseModel):
    turn: int
    evidence: list[str] = Field(default_factory=list)   # the deterministic spans found in the turn
    p_yes: float | None = None                           # the judge's, when it was asked
    passages: int = 0                                    # policy passages shown with the question
    by_rule: bool = False                # yes by rule: the conversation says the data is someone else's
    never_clear: bool = False            # the turn reads like someone else's data: "no" is undecided instead
    checker: float | None = None         # the kind's turn checker's logit for the turn (turn_checker.py)


class Judgement(BaseModel):
    """A judgement item's answer on one sample: yes / no / undecided, or unscored (no answer), with how."""

    status: Literal["decided", "undecided", "unscored"]
    answer: bool | None = None
    score: float | None = None               # the number the decision read: max turn p(yes), or the p(yes)
    decided_by: DecidedBy | None = None
    role: TurnRole | None = None             # the party decomposed over (None: asked whole)
    evidence_kind: str | None = None
    turns: list[TurnFinding] = Field(default_factory=list)
    calibration: ItemCalibration | None = None
    reason: str = ""
    usage: Usage = Field(default_factory=Usage)

    @property
    def decisive_turn(self) -> TurnFinding | None:
        """The turn with the highest p(yes) (the one a hit cites)."""
        asked = [t for t in self.turns if t.p_yes is not None]
        return max(asked, key=lambda t: t.p_yes or 0.0) if asked else None


def small_judge(spec: JudgementSpec, judge: Any) -> bool:
    """Decompose for this judge: the embedded (small) judge, or a judge the item carries a per-turn calibration
    for. A large hosted judge keeps reading the whole conversation (one call per question)."""
    if judge is None:
        return False
    calibration = item_calibration(spec, judge_name(judge))
    return bool(judge.config.is_local or (calibration is not None and calibration.score == "turn_max"))


def decomposes(spec: JudgementSpec, conversation: Conversation | None, judge: Any = None) -> TurnRole | None:
    """The party to decompose over, or None (no conversation, a question naming no party, a large judge)."""
    if conversation is None or not small_judge(spec, judge) or not per_turn_question(spec.question, spec.lang):
        return None
    return question_role(spec.question, spec.lang)


def read_score(score: float, calibration: ItemCalibration | None) -> tuple[bool | None, DecidedBy]:
    """yes/no/undecided (None) from a score: the calibration's rule, or 0.5."""
    if calibration is None:
        return score >= 0.5, "judge"
    # a turn checker's probability (turn_checker.py): the judge may not have been asked at all
    return calibration.decide(score), "checker" if calibration.score == "checker" else "judge_calibrated"


def judgement_from_score(score: float, calibration: ItemCalibration | None, **extra: Any) -> Judgement:
    answer, how = read_score(score, calibration)
    if answer is None:
        band = calibration.undecided if calibration is not None else None
        why = ("the judge cannot tell this item apart on its own examples" if calibration and calibration.undecidable
               else f"p(yes) {score:.2f} falls in the undecided band {band}")
        return Judgement(status="undecided", score=score, calibration=calibration, reason=why, **extra)
    return Judgement(status="decided", answer=answer, score=score, decided_by=how, calibration=calibration, **extra)


def item_kind(spec: JudgementSpec, role: TurnRole) -> EvidenceKind | None:
    """The evidence kind the question drafts for its party (None for a question about every turn: each is asked)."""
    return None if every_turn(spec.question, spec.lang) else evidence_kind(spec.question, role, spec.lang)


def shipped_rule(spec: JudgementSpec, role: TurnRole, judge: Any) -> ItemCalibration | None:
    """rubriceval's own calibration of the item's evidence kind, in the kind's wording, on this judge
    (kind_calibration.py), or None."""
    kind = item_kind(spec, role)
    wording = kind.wording(spec.lang, sees_policy=spec.sees_knowledge) if kind is not None else None
    if kind is None or wording is None:
        return None
    return kind_calibration(kind.name, spec.lang, wording, judge_name(judge))


def item_checker(spec: JudgementSpec, role: TurnRole, judge: Any) -> TurnChecker | None:
    """rubriceval's turn checker of the item's evidence kind for this embedder (and the judge and wording it reads,
    where it reads one), on a judge the item is decomposed for; None without one."""
    kind = item_kind(spec, role)
    if kind is None or not small_judge(spec, judge):
        return None
    return turn_checker(kind.name, spec.lang, judge_name(judge), kind.wording(spec.lang, sees_policy=spec.sees_knowledge))


async def judge_turns(spec: JudgementSpec, conversation: Conversation, role: TurnRole, asker: TurnAsker,
                      passages: list[str], kind_wording: bool = False, checker: TurnChecker | None = None
                      ) -> tuple[list[TurnFinding], EvidenceKind | None, str | None, Usage]:
    """Every turn of the party: its evidence, and the judge's p(yes) where the evidence lets the question through.
    Then why an answer is missing (a judge error; None when none is), and what the calls cost. `kind_wording`: a
    mood kind's turns are asked in the kind's own wording (the one its shipped calibration was fitted for). With a
    `checker`, every turn gets its checker logit and the judge is asked only where the checker reads it."""
    kind = item_kind(spec, role)
    asked_as = turn_question(spec.question, spec.lang)
    if kind_wording and kind is not None and kind.turn_question is not None:
        asked_as = kind.turn_question.get(spec.lang, kind.turn_question["en"])
    findings: list[TurnFinding] = []
    spent = Usage()
    party = conversation.numbered(role)
    try:
        logits = await head_logits(checker, [t.content for _, t in party]) if checker is not None else []
    except (RubricEvalError, RuntimeError, OSError, MemoryError) as exc:
        # an in-process embedder that cannot run (the judge's model file gone, memory): unscored, not a crash
        return findings, kind, f"the turn checker's embedder failed: {exc}", spent
    for index, (number, turn) in enumerate(party):
        # the customer's words so far: what they said before this turn is theirs (what they say after is not)
        customer = [t.content for n, t in conversation.numbered("user") if n < number]
        spans = kind.find(turn.content, customer) if kind is not None else []
        finding = TurnFinding(turn=number, evidence=spans, checker=logits[index] if checker is not None else None)
        if kind is not None and kind.name == "personal_data" and spans:
            later = [t.content for n, t in conversation.numbered("user") if n > number]
            whose = whose_data(turn.content, customer, later[0] if later else None)
            if whose == "other":                   # the conversation says whose it is: no call
                findings.append(finding.model_copy(update={"evidence": [*spans, OTHERS_BY_RULE], "by_rule": True}))
                continue
            finding = finding.model_copy(update={"never_clear": whose == "maybe_other"})
        if checker is not None and not checker.reads_judge:
            findings.append(finding)           # the checker alone decides this kind: no judge call
            continue
        if kind is not None and kind.name == "promise" and spans and passages and states_policy(spans, passages):
            # the turn reads out a policy rule (a commitment in the policy's own words): it states the policy
            findings.append(finding.model_copy(update={"evidence": [*spans, POLICY_READ_BACK]}))
            continue
        if kind is None or spans or not kind.gate:
            shown = relevant_passages(" ".join(spans) or turn.content, passages) if spec.sees_knowledge else []
            short = claim_question(kind, spans, spec.lang, sees_policy=bool(shown))
            answer = await asker.answer(short or asked_as, number, shown)
            spent = spent + asker.last_usage
            if answer.p_yes is None:
                return findings, kind, f"turn {number}: {answer.reason or answer.unscored_kind}", spent
            finding = finding.model_copy(update={"p_yes": answer.p_yes, "passages": len(shown)})
        findings.append(finding)
    return findings, kind, None, spent


async def decide_turns(spec: JudgementSpec, conversation: Conversation, role: TurnRole, asker: TurnAsker,
                       calibration: ItemCalibration | None, passages: list[str] | None = None,
                       kind_wording: bool = False, checker: TurnChecker | None = None) -> Judgement:
    """The item decided over the party's turns (see the module docstring)."""
    findings, kind, failed, spent = await judge_turns(spec, conversation, role, asker, passages or [], kind_wording,
                                                      checker)
    if failed:
        return Judgement(status="unscored", reason=failed, role=role, evidence_kind=kind.name if kind else None,
                         turns=findings, usage=spent)
    return decide_findings(spec, conversation, role, kind, findings, calibration, spent, checker)


def decide_findings(spec: JudgementSpec, conversation: Conversation, role: TurnRole, kind: EvidenceKind | None,
                    findings: list[TurnFinding], calibration: ItemCalibration | None, spent: Usage | None = None,
                    checker: TurnChecker | None = None) -> Judgement:
    """The decision from the turns' findings on a calibration (no judge call: a fit replays it on recorded
    findings with each candidate calibration, benchmarks/judge/kind_fit.py and checker_fit.py). With a `checker`
    the number read is its stacked probability (turn_checker.py), and no word rule tips it."""
    extra: dict[str, Any] = {"role": role, "evidence_kind": kind.name if kind else None, "turns": findings,
                             "usage": spent or Usage()}
    scores = [f.p_yes for f in findings if f.p_yes is not None]
    ruled = [f.turn for f in findings if f.by_rule]
    if ruled:
        return Judgement(status="decided", answer=True, decided_by="rule", score=max(scores, default=None),
                         reason=f"turn {ruled[0]}: the conversation says the data is someone else's", **extra)
    heads = [f.checker for f in findings if f.checker is not None]
    if checker is not None and heads:
        score = checker.score(max(heads), max(scores, default=None))
        return not_cleared_with_third_persons_data(judgement_from_score(score, calibration, **extra), findings)
    if scores and every_turn(spec.question, spec.lang):      # every turn must: the weakest turn decides
        return judgement_from_score(min(scores), calibration, **extra)
    if not scores:
        why = (f"no {kind.name} evidence in any {role} turn" if kind is not None and findings else
               f"no {role} turn in the conversation")
        return Judgement(status="decided", answer=False, decided_by="rule", reason=why, **extra)
    found = not_cleared_with_third_persons_data(judgement_from_score(max(scores), calibration, **extra), findings)
    if kind is not None and kind.name == "upset":
        return upset_cues_decide(found, conversation)
    return found


def not_cleared_with_third_persons_data(found: Judgement, findings: list[TurnFinding]) -> Judgement:
    """A "no" where a turn gives a third person's data (ownership.py: `maybe_other`) waits for review instead."""
    if found.answer is False and any(f.never_clear for f in findings):
        return found.model_copy(update={"status": "undecided", "answer": None, "decided_by": None,
                                        "reason": "a turn gives a third person's data: not cleared without review"})
    return found


def upset_cues_decide(found: Judgement, conversation: Conversation) -> Judgement:
    """Strong upset cues in a customer turn (evidence.strong_upset) tip a p(yes) inside the undecided band to yes,
    and keep one under the band undecided: an upset customer is never silently "not applicable"."""
    cues = [c for _, t in conversation.numbered("user") for c in strong_upset(t.content)]
    if not cues or found.answer is True:
        return found
    said = "、".join(cues[:4])
    if found.status == "undecided":
        return found.model_copy(update={"status": "decided", "answer": True, "decided_by": "rule",
                                        "reason": f"p(yes) in the undecided band and strong upset cues: {said}"})
    return found.model_copy(update={"status": "undecided", "answer": None, "decided_by": None,
                                    "reason": f"p(yes) {found.score:.2f} under the band, yet strong upset cues: {said}"})


def item_calibration(spec: JudgementSpec, judge_model: str | None) -> ItemCalibration | None:
    """The calibration the item carries for this judge (fitted: label-free, examples or reviews)."""
    return calibration_for(spec.calibration, judge_model)


async def decide(spec: JudgementSpec, conversation: Conversation, role: TurnRole, judge: Any, asker: TurnAsker,
                 passages: list[str] | None = None) -> Judgement:
    """The item decided over the party's turns, on the rule in place for this judge (rule_in_place: its own
    calibration, rubriceval's turn checker for its kind, its shipped calibration, its examples', else 0.5).
    `passages`: the knowledge file's, for a question about the policy."""

    calibration, spent, kind_wording = await rule_in_place(spec, role, judge, passages)
    checker = item_checker(spec, role, judge) if calibration is not None and calibration.score == "checker" else None
    found = await decide_turns(spec, conversation, role, asker, calibration, passages, kind_wording, checker)
    return found.model_copy(update={"usage": found.usage + spent})


async def rule_in_place(spec: JudgementSpec, role: TurnRole, judge: Any, passages: list[str] | None = None
                        ) -> tuple[ItemCalibration | None, Usage, bool]:
    """The calibration the item decides by on this judge, what making it cost, and whether its turns are asked in
    the kind's wording. In order: the item's own for the judge (from its reviews); rubriceval's turn checker of the
    item's evidence kind (turn_checker.py: its band, or the item's own band when that was fitted on the checker's
    probability); rubriceval's shipped calibration of the kind on the judge (kind_calibration.py); one made now from
    the item's examples (anchors.py); else None (0.5). Where a checker or a shipped calibration exists the turns are
    asked in the kind's wording, whichever decides."""
    from rubriceval.scoring.judgement.anchors import examples_calibration

    shipped = shipped_rule(spec, role, judge) if small_judge(spec, judge) else None
    own = item_calibration(spec, judge_name(judge))
    checker = item_checker(spec, role, judge)
    if checker is not None and (own is None or own.score == "checker"):
        # the checker's probability, read on the item's own band from reviews where it has one (fitted on the same)
        return own or checker.calibration, Usage(), True
    if own is not None and own.score == "checker":
        own = None                       # fitted on a checker's probability: without that checker it reads nothing
    if own is not None or shipped is not None:
        return own or shipped, Usage(), shipped is not None
    if spec.examples:
        made, spent = await examples_calibration(spec.question, spec.examples, role, judge, spec.lang,
                                                 passages if spec.sees_knowledge else None, fatal=spec.fatal)
        return made, spent, False
    return None, Usage(), False


def shifted_p_yes(p_yes: float, calibration: ItemCalibration | None) -> float:
    """p(yes) moved so that 0.5 is the calibration's cut-off (a shift in log-odds: the ranking is kept), for rules
    that read p ≥ 0.5 (a checklist's levels); the plain p(yes) without a calibration."""
    if calibration is None:
        return p_yes
    from rubriceval.stats.log_odds import logit, sigmoid

    return round(sigmoid(logit(p_yes, 1e-6) - logit(calibration.cutoff, 1e-6)), 4)
