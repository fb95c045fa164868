"""Do the team's own reviewed turns help as an item's examples (issue 44.1)? Measured before they are shipped.

An item's `examples:` (rubric/calibration.ItemExample: a turn and the answer it should get) are what the judgement
mechanism reads when the item carries no calibration for the judge (scoring/judgement/anchors.py: the judge is asked
about each example and a content-free turn, and the cut-off and undecided band are placed between them; examples are
also the per-turn prompt's few-shot slot). Candidates come from the reviews: on the fitting half of the reviewed
decisions (the same seeded split as the cut-off's fit, trust/fit_cutoff.split_halves), the decisive turn (highest
p(yes)) of the reviewed yes with the median p(yes) among the yes, and likewise for the no — a typical case of each,
the agent's own words. The item is then judged again on the HELD-OUT reviewed conversations with those examples and
no calibration for this judge (one-item card, the run's own scoring path), and its balanced accuracy there is
compared with the rule the proposal would otherwise leave in place (the reviewed cut-off when it is proposed, else
the current one) on the same conversations. The examples help only when they beat it; an undecided answer counts as
not right for both. Only items asked turn by turn have a decisive turn to quote."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from rubriceval.data.sample import Sample
from rubriceval.rubric.calibration import ItemCalibration, ItemExample
from rubriceval.scorecard.schema import Scorecard, ScorecardItem
from rubriceval.trust.fit_cutoff import split_halves
from rubriceval.trust.fit_reviews import ItemFit, ReviewedAnswer


class ExamplesTrial(BaseModel):
    item: str
    examples: list[ItemExample]
    n_heldout: int
    balanced_accuracy_examples: float       # the item with the examples, no calibration, on held-out reviews
    balanced_accuracy_without: float        # the rule left in place without them, on the same reviews
    undecided_with_examples: int = 0
    calls: int = 0
    helps: bool
    reason: str

    def line(self) -> str:
        verdict = "HELP" if self.helps else "do not help"
        return (f"{self.item}: examples {verdict}: held-out balanced accuracy {self.balanced_accuracy_examples:.2f} "
                f"with them vs {self.balanced_accuracy_without:.2f} without ({self.n_heldout} reviewed "
                f"conversations, {self.undecided_with_examples} undecided with them; {self.calls} calls)")


def _median(answers: list[ReviewedAnswer]) -> ReviewedAnswer:
    ranked = sorted(answers, key=lambda a: (a.p_yes, a.sample_id))
    return ranked[len(ranked) // 2]


def pick_examples(answers: Sequence[ReviewedAnswer], train: Sequence[int], samples: Mapping[str, Sample],
                  role: str) -> list[ItemExample] | None:
    """A yes and a no example from the fitting half (module doc), or None when either has no decisive turn."""
    chosen = []
    for wanted in (True, False):
        found = [answers[i] for i in train if answers[i].answer == wanted and answers[i].turn is not None]
        if not found:
            return None
        pick = _median(found)
        sample = samples.get(pick.sample_id)
        if sample is None or sample.conversation is None or pick.turn is None:
            return None
        turn = dict(sample.conversation.numbered()).get(pick.turn)
        if turn is None:
            return None
        chosen.append(ItemExample(text=turn.content, answer="yes" if wanted else "no",
                                  role="assistant" if role == "assistant" else "user",
                                  note=f"reviewed: {pick.sample_id} turn {pick.turn}"))
    return chosen


def _right(status: str, expected: bool, item: ScorecardItem) -> bool:
    if status not in ("hit", "clear"):
        return False                      # undecided, unscored or N/A: no answer to count as right
    return ((status == "hit") == item.hit_answer) == expected


def _balanced(rights: list[bool], expected: list[bool]) -> float:
    pos = [r for r, y in zip(rights, expected) if y]
    neg = [r for r, y in zip(rights, expected) if not y]
    return ((sum(pos) / len(pos) if pos else 0.0) + (sum(neg) / len(neg) if neg else 0.0)) / 2


def one_item_card(card: Scorecard, item: ScorecardItem, examples: list[ItemExample], judge: str) -> Scorecard:
    """The card reduced to `item`, with the examples and without its calibration for this judge."""
    data = card.model_dump(mode="json", exclude_none=True)
    entry = next(dict(e) for e in data["items"] if e["id"] == item.id)
    entry["examples"] = [e.model_dump(exclude_none=True) for e in examples]
    entry["calibration"] = [c for c in entry.get("calibration") or [] if c.get("judge") != judge]
    data["items"] = [entry]
    reduced = Scorecard.model_validate(data)
    reduced.source_file = card.source_file
    return reduced


async def try_examples(card: Scorecard, fit: ItemFit, answers: Sequence[ReviewedAnswer],
                       samples: Mapping[str, Sample], judge: Any, *, holdout_fraction: float = 0.5,
                       seed: int = 0) -> ExamplesTrial | None:
    """The trial of one item's reviewed examples (module doc); None when it cannot be run (too few reviews, no
    decisive turns, a whole question)."""
    from rubriceval.scorecard.score import score_scorecard
    from rubriceval.scoring.judgement.roles import question_role

    item = next(i for i in card.items if i.id == fit.item)
    if fit.fit is None or not fit.fit.enough or not item.question:
        return None
    role = question_role(item.question, card.language)
    if role is None:
        return None
    train, held = split_halves([a.answer for a in answers], holdout_fraction, seed)
    examples = pick_examples(answers, train, samples, role)
    if examples is None:
        return None
    reduced = one_item_card(card, item, examples, fit.judge)
    calls = judge.stats.calls
    rights, expected, undecided = [], [], 0
    for index in held:
        answer = answers[index]
        sample = samples.get(answer.sample_id)
        if sample is None:
            continue
        verdict = await score_scorecard(reduced, sample, judge)
        status = verdict.outcomes[0].status
        undecided += status == "undecided"
        rights.append(_right(status, answer.answer, item))
        expected.append(answer.answer)
    with_examples = _balanced(rights, expected)
    without = (fit.fit.balanced_accuracy_heldout if fit.accepted else fit.fit.balanced_accuracy_default_heldout)
    helps = with_examples > without
    reason = (f"beat the {'reviewed' if fit.accepted else 'current'} cut-off on held-out reviews" if helps else
              f"do not beat the {'reviewed' if fit.accepted else 'current'} cut-off on held-out reviews "
              f"({with_examples:.2f} ≤ {without:.2f})")
    return ExamplesTrial(item=item.id, examples=examples, n_heldout=len(rights),
                         balanced_accuracy_examples=with_examples, balanced_accuracy_without=without,
                         undecided_with_examples=undecided, calls=judge.stats.calls - calls, helps=helps,
                         reason=reason)


async def examples_rules(card: Scorecard, judge: Any) -> dict[str, ItemCalibration]:
    """item id → the rule a question item with no calibration of its own for this judge decides by on it: rubriceval's
    shipped calibration of its evidence kind on the judge, else the calibration the judgement mechanism makes from
    its examples at run time (scoring/judgement/decide.rule_in_place), asked as
    the run asked them (so from the judge cache after a run). Items asked whole (no party named, a large judge) do
    not read their examples."""
    from rubriceval.scoring.judgement.decide import JudgementSpec, judge_name, rule_in_place, small_judge
    from rubriceval.scoring.judgement.roles import question_role

    made = {}
    knowledge = card.knowledge_base()
    for item in card.items:
        if not item.question or item.calibration_for(judge_name(judge)) is not None:
            continue
        spec = JudgementSpec(question=item.question, lang=card.language, examples=item.examples,
                             calibration=item.calibration, sees_knowledge=item.judge_sees_knowledge, fatal=item.fatal)
        role = question_role(item.question, card.language)
        if role is None or not small_judge(spec, judge):
            continue
        passages = list(knowledge.passages) if knowledge is not None and item.judge_sees_knowledge else None
        # the run's own rule: rubriceval's shipped calibration of the item's kind, else its examples' (one path)
        calibration, _, _ = await rule_in_place(spec, role, judge, passages)
        if calibration is not None:
            made[item.id] = calibration
    return made
