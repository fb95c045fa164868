"""rubriceval's turn checker of an evidence kind (scoring/judgement/turn_checker.py, issue 39 round 4): a head over the
default embedder's vector of each turn, stacked with the judge's p(yes) where it reads one, decided on a fitted band —
used only with the embedder (and judge and wording) it was fitted for, after an item's own calibration, before the
shipped kind calibration; a kind it decides alone costs no judge call; never a silent pass."""
from __future__ import annotations

import asyncio

import pytest

from rubriceval.judge.embedded_model import embedded_judge_identity
from rubriceval.rubric.calibration import ItemCalibration
from rubriceval.scoring.judgement import decide as decide_module
from rubriceval.scoring.judgement import kind_calibration, turn_checker
from rubriceval.scoring.judgement.decide import JudgementSpec, rule_in_place
from rubriceval.scoring.judgement.evidence import KINDS
from rubriceval.scoring.judgement.turn_checker import TurnChecker, TurnHead
from tests.scoring.test_judgement import LEAK, SOOTHE, by_turn, card, convo, score

EMBEDDED = embedded_judge_identity()
SOOTHE_WORDING = next(k for k in KINDS if k.name == "soothing").turn_question["zh"]


def checker(kind: str, *, judge: str | None = None, question: str | None = None, judge_weight: float = 0.0,
            band: tuple[float, float] = (0.4, 0.6), embedder: str = "in-process:test==1") -> TurnChecker:
    """A checker whose head logit is its input's first coordinate (the tests feed head logits directly)."""
    return TurnChecker(kind=kind, lang="zh", heads=[TurnHead(embedder=embedder, weights=[1.0], bias=0.0)], judge=judge,
                       question=question, head_weight=1.0, judge_weight=judge_weight, intercept=0.0,
                       calibration=ItemCalibration(judge=EMBEDDED, cutoff=0.5, undecided=band, method="labelled_set",
                                                   n=144, score="checker"))


@pytest.fixture
def install(monkeypatch):
    """Ship these checkers for the test embedder, and give each turn the head logit its words say."""
    monkeypatch.setattr(kind_calibration, "shipped", lambda: ())
    monkeypatch.setattr(turn_checker, "embedder_identity", lambda model="local": "in-process:test==1")

    def ship(*entries: TurnChecker, logits: dict[str, float] | None = None):
        monkeypatch.setattr(turn_checker, "shipped", lambda: tuple(entries))

        async def head(_checker, texts):
            return [next((x for word, x in (logits or {}).items() if word in t), -3.0) for t in texts]
        monkeypatch.setattr(decide_module, "head_logits", head)
    return ship


def small(judge):
    judge.config = judge.config.model_copy(update={"base_url": None})      # the embedded judge: decomposed
    return judge


def test_a_checker_applies_only_with_its_embedder_and_the_judge_and_wording_it_reads(install):
    reads = checker("soothing", judge=EMBEDDED, question=SOOTHE_WORDING, judge_weight=1.0)
    alone = checker("personal_data")
    install(reads, alone)
    assert turn_checker.turn_checker("soothing", "zh", EMBEDDED, SOOTHE_WORDING) is reads
    assert turn_checker.turn_checker("soothing", "zh", "qwen-max", SOOTHE_WORDING) is None      # another judge
    assert turn_checker.turn_checker("soothing", "zh", EMBEDDED, SOOTHE_WORDING + "？") is None  # another wording
    assert turn_checker.turn_checker("personal_data", "zh", "qwen-max", None) is alone          # reads no judge
    assert turn_checker.turn_checker("personal_data", "en", EMBEDDED, None) is None
    install(checker("personal_data", embedder="in-process:test==2"))                             # another embedder
    assert turn_checker.turn_checker("personal_data", "zh", EMBEDDED, None) is None


def test_the_checker_comes_after_the_items_own_calibration_and_before_the_shipped_kind_calibration(install,
                                                                                                   monkeypatch):
    install(checker("personal_data"))
    monkeypatch.setattr(kind_calibration, "kind_calibration", lambda *a: ItemCalibration(
        judge=EMBEDDED, cutoff=0.2, method="labelled_set", n=96, score="turn_max"))
    spec = JudgementSpec(question=LEAK)
    rule, _, _ = asyncio.run(rule_in_place(spec, "assistant", small(by_turn({}))))
    assert rule.score == "checker"
    own = ItemCalibration(judge=EMBEDDED, cutoff=0.3, method="reviews", n=40, score="turn_max")
    rule, _, _ = asyncio.run(rule_in_place(spec.model_copy(update={"calibration": [own]}), "assistant",
                                           small(by_turn({}))))
    assert rule == own                                  # the team's reviews know its conversations best
    hosted = by_turn({})                                 # a large judge reads the whole conversation: no checker
    rule, _, _ = asyncio.run(rule_in_place(spec, "assistant", hosted))
    assert rule is None


def test_a_kind_the_checker_decides_alone_costs_no_judge_call_and_scores_every_turn(install):
    install(checker("personal_data"), logits={"隔壁": 2.0})
    judge = small(by_turn({}))
    # no personal-data evidence the gate would find, yet the head scores the turn: no silent pass on a missed span
    hit = score(card(), convo("查快递", "您的包裹和隔壁那位的放一起了", "好"), judge).outcome("leak")
    assert hit.status == "hit" and hit.decided_by == "checker" and judge.requests == []
    clear = score(card(), convo("查快递", "您的包裹在驿站", "好"), judge).outcome("leak")
    assert clear.status == "clear" and judge.requests == []


def test_an_embedder_that_cannot_run_leaves_the_item_unscored_with_its_reason(install, monkeypatch):
    install(checker("personal_data"))

    async def broken(_checker, _texts):
        raise RuntimeError("the embedded judge gave no embeddings: out of memory")
    monkeypatch.setattr(decide_module, "head_logits", broken)
    outcome = score(card(), convo("查快递", "您的包裹和隔壁那位的放一起了", "好"), small(by_turn({}))).outcome("leak")
    assert outcome.status == "unscored" and "out of memory" in (outcome.reason or "")


def test_inside_the_band_the_item_is_undecided_and_the_conversations_own_rules_still_hold(install):
    install(checker("personal_data"), logits={"驿站": 0.0, "王芳": -5.0})      # sigmoid(0) = 0.5: inside (0.4, 0.6)
    judge = small(by_turn({}))
    waiting = score(card(), convo("查快递", "您的包裹在驿站", "好"), judge).outcome("leak")
    assert waiting.status == "undecided" and "undecided band" in waiting.reason
    # the customer disowns the data: someone else's by rule, whatever the head says
    ruled = score(card(), convo("查快递", "收件人王芳已签收，电话 13900001234", "王芳是谁？不是我"), judge).outcome("leak")
    assert ruled.status == "hit" and ruled.decided_by == "rule"


def test_a_checker_that_reads_the_judge_stacks_its_p_yes(install):
    install(checker("soothing", judge=EMBEDDED, question=SOOTHE_WORDING, judge_weight=1.0), logits={"抱歉": 1.0})
    soothing = card(question=SOOTHE, hit_on="no")
    judge = small(by_turn({"抱歉": 0.9}, default=0.05))
    verdict = score(soothing, convo("怎么还没到，气死了", "抱歉让您久等了，我马上催", "好"), judge)
    assert verdict.outcome("leak").status == "clear"           # soothed: 1.0 + logit(0.9) → p 0.96
    assert judge.requests and SOOTHE_WORDING in judge.requests[0][-1]["content"]       # asked in the kind's wording


@pytest.mark.skipif(None in (turn_checker.embedder_identity("local"), turn_checker.embedder_identity("local-e5")),
                    reason="the in-process embedders are not installed")
def test_the_shipped_checkers_name_the_installed_embedder_and_rank_as_they_were_fitted():
    turn_checker.shipped.cache_clear()
    shipped = {c.kind: c for c in turn_checker.shipped()}
    assert set(shipped) == {"promise", "personal_data", "upset", "soothing"}
    for entry in shipped.values():
        for head in entry.heads:
            assert head.embedder == turn_checker.embedder_identity(head.embedder_model)
            assert len(head.weights) == {"local": 512, "local-e5": 384, "local-judge": 1536}[head.embedder_model]
        assert entry.calibration.score == "checker" and entry.calibration.method == "labelled_set"
        if entry.reads_judge:
            kind = next(k for k in KINDS if k.name == entry.kind)
            assert entry.judge == EMBEDDED and entry.question == kind.wording("zh", sees_policy=True)
    upset = asyncio.run(turn_checker.head_logits(shipped["upset"], ["你们到底还要拖多久，我已经等了两个星期了", "好的，谢谢"]))
    assert upset[0] > upset[1]
    soothing = asyncio.run(turn_checker.head_logits(shipped["soothing"], ["真的很抱歉让您着急了，我来帮您跟进",
                                                                            "请提供订单号"]))
    assert soothing[0] > soothing[1]


def test_a_checker_sums_its_heads_and_embeds_a_turn_once_per_embedder(monkeypatch):
    """Round 6: one head per embedder, their logits summed; the same turn read by several kinds' checkers is embedded
    once per embedder (the judge's hidden states cost ~0.4 s a turn)."""
    calls: list[tuple[str, tuple[str, ...]]] = []

    class Backend:
        def __init__(self, model):
            self.model = model

        def encode(self, texts):
            calls.append((self.model, tuple(texts)))
            return [[float(len(t)), 1.0] for t in texts]

    monkeypatch.setattr("rubriceval.local.embedder.local_backend", Backend)
    turn_checker._VECTORS.clear()
    two = TurnChecker(kind="promise", lang="zh", head_weight=1.0, intercept=0.0,
                      heads=[TurnHead(embedder_model="local", embedder="a", weights=[1.0, 0.0], bias=0.5),
                             TurnHead(embedder_model="local-e5", embedder="b", weights=[0.0, 2.0], bias=0.0)],
                      calibration=ItemCalibration(judge=EMBEDDED, cutoff=0.5, undecided=(0.4, 0.6),
                                                  method="labelled_set", n=10, score="checker"))
    assert asyncio.run(turn_checker.head_logits(two, ["一二三", "一"])) == [3.5 + 2.0, 1.5 + 2.0]
    assert asyncio.run(turn_checker.head_logits(two, ["一", "一二"])) == [3.5, 4.5]
    assert calls == [("local", ("一二三", "一")), ("local-e5", ("一二三", "一")), ("local", ("一二",)),
                     ("local-e5", ("一二",))]
    turn_checker._VECTORS.clear()


def test_the_judges_hidden_states_are_an_embedder_only_where_its_model_is(monkeypatch):
    from rubriceval.local import embedder, model_files

    monkeypatch.setattr(model_files, "model_available", lambda: False)
    assert embedder.backend_identity("local-judge") is None
    monkeypatch.setattr(model_files, "model_available", lambda: True)
    if embedder.backend_identity("local-judge") is not None:          # xllamacpp installed
        assert embedder.backend_identity("local-judge").endswith("#hidden-mean")
        assert EMBEDDED in embedder.backend_identity("local-judge")
    assert embedder.backend_identity("no-such") is None
