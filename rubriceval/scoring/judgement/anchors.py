"""A label-free calibration made at run time from the item's own examples (issue 39, options c and d): the judge
is asked the item's per-turn question about each author-written example (the 示例 of a QA sheet, a yes and a no)
and about a content-free turn ("Calibrate Before Use": a turn that does nothing must be a no), each as a one-turn
conversation, and the item's cut-off and undecided band are placed between what it answered for the no anchors
and for the yes examples — on this judge, whatever its p(yes) scale (the embedded judge's ranks well but sits
under 0.5). When the judge gives some no anchor at least the p(yes) of some yes example, it cannot separate the
item's own examples: the item is undecidable on this judge (undecided wherever it applies).

The anchors are asked once per run and item (kept here by judge and item; the judge cache keeps the answers across
runs), so they cost a few calls per run, not per conversation."""
from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from rubriceval.core.verdict import Usage
from rubriceval.data.conversation import Conversation, Turn
from rubriceval.rubric.calibration import ItemCalibration, ItemExample
from rubriceval.scoring.judgement.evidence import claim_question, evidence_kind
from rubriceval.scoring.judgement.policy import relevant_passages
from rubriceval.scoring.judgement.roles import TurnRole, turn_question
from rubriceval.scoring.judgement.turns import TurnAsker, judge_name
from rubriceval.stats.log_odds import logit, sigmoid

CONTENT_FREE = {"zh": "好的。", "en": "OK."}
# Where in the gap between the no anchors and the yes examples (in log-odds) the cut-off sits, and the share of the
# gap on either side of it that stays undecided. Chosen on the dev half of the contact-centre set (docs/benchmarks.md).
CUTOFF_AT = 0.5
UNDECIDED_HALF_WIDTH = 0.15
_MADE: dict[str, tuple[ItemCalibration | None, Usage]] = {}


def band_between(no_top: float, yes_bottom: float, *, at: float = CUTOFF_AT, half_width: float = UNDECIDED_HALF_WIDTH
                 ) -> tuple[float, tuple[float, float]]:
    """The cut-off and undecided band placed in the log-odds gap between the highest no anchor and the lowest yes
    example."""
    low, high = logit(no_top), logit(yes_bottom)
    gap = high - low
    cut = low + at * gap
    return sigmoid(cut), (round(sigmoid(cut - half_width * gap), 4), round(sigmoid(cut + half_width * gap), 4))


def _one_turn(text: str, role: TurnRole) -> Conversation:
    """The example alone, as the one turn of a conversation (built without the rule that a conversation holds a
    bot reply: a customer's example has none, and nothing else is shown to the judge)."""
    return Conversation.model_construct(id="example", turns=[Turn(role=role, content=text)], metadata={})


async def anchor_p_yes(question: str, example: ItemExample, role: TurnRole, judge: Any, lang: str,
                       passages: list[str]) -> tuple[float | None, Usage]:
    """The judge's p(yes) for the item's per-turn question about one example, as a one-turn conversation."""
    conversation = _one_turn(example.text, example.role or role)
    asker = TurnAsker(judge, conversation, lang)
    kind = evidence_kind(question, role, lang)
    spans = kind.find(example.text, []) if kind is not None else []
    if kind is not None and kind.gate and not spans:
        spans = [example.text]             # a no example without evidence (a relay) still calibrates the claim question
    shown = relevant_passages(" ".join(spans), passages) if passages else []
    # asked exactly as a conversation's turn is (the kind's per-claim question where its evidence shows), and
    # whatever the evidence: the anchors calibrate the judge's scale
    short = claim_question(kind, spans, lang, sees_policy=bool(shown))
    answer = await asker.answer(short or turn_question(question, lang), 1, shown)
    return answer.p_yes, asker.usage


async def examples_calibration(question: str, examples: list[ItemExample], role: TurnRole, judge: Any,
                               lang: str = "zh", passages: list[str] | None = None, fatal: bool = False
                               ) -> tuple[ItemCalibration | None, Usage]:
    """The item's calibration on this judge from its examples and a content-free turn (None without examples or
    when an anchor could not be answered: then the item keeps the plain 0.5). A fatal item's undecided band runs
    from its highest no anchor up to its lowest yes example: where the judge cannot place a turn clearly below the
    no anchor, a fatal item is not cleared."""
    if not any(e.answer == "yes" for e in examples) or not any(e.answer == "no" for e in examples):
        return None, Usage()
    model = judge_name(judge) or ""
    key = "\x1f".join([str(id(judge)), model, lang, role, question, str(fatal),
                       *(e.model_dump_json() for e in examples), *(passages or [])])
    if key in _MADE:
        return _MADE[key][0], Usage()
    spent = Usage()
    kind = evidence_kind(question, role, lang)
    # The content-free turn anchors a question every turn is asked; a gate kind's turns without evidence are never
    # asked (and the judge reads a per-claim question there), so its examples alone place the cut-off.
    free = [] if kind is not None and kind.gate else [
        ItemExample(text=CONTENT_FREE.get(lang, CONTENT_FREE["en"]), answer="no", role=role)]
    anchors = [*examples, *free]
    yes: list[float] = []
    no: list[float] = []
    for example in anchors:
        p_yes, usage = await anchor_p_yes(question, example, role, judge, lang, passages or [])
        spent = spent + usage
        if p_yes is None:
            _MADE[key] = (None, spent)
            return None, spent
        (yes if example.answer == "yes" else no).append(p_yes)
    now = datetime.now(timezone.utc).isoformat(timespec="seconds")
    if min(yes) <= max(no):
        calibration = ItemCalibration(judge=model, cutoff=0.5, undecided=(0.0, 1.0), method="examples",
                                      n=len(anchors), fitted_at=now, score="turn_max",
                                      note=f"the judge cannot separate the item's examples: yes ≥ {min(yes):.3f}, "
                                           f"no ≤ {max(no):.3f}")
    else:
        cutoff, band = band_between(max(no), min(yes))
        if fatal:
            band = (round(max(no), 4), round(min(yes), 4))
        calibration = ItemCalibration(judge=model, cutoff=round(cutoff, 4), undecided=band, method="examples",
                                      n=len(anchors), fitted_at=now, score="turn_max",
                                      note=f"no anchors ≤ {max(no):.3f}, yes examples ≥ {min(yes):.3f}")
    _MADE[key] = (calibration, spent)
    return calibration, spent
