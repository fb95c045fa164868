"""benchmarks/judge/checker_fit.py: a turn checker's head learns from labelled turns, its stacker and band are
fitted on scores of sets the head never saw (cross-fitted by writer), its band replays the package's own decision,
keeps the undecided share within its limit on every set and puts "no silent pass" first."""
from __future__ import annotations

import pytest

from benchmarks.judge import checker_fit
from benchmarks.judge.kind_fit import Case
from rubriceval.data.conversation import Conversation
from rubriceval.scoring.judgement.decide import JudgementSpec, TurnFinding

pytest.importorskip("sklearn")

LEAK = "客服是否透露了当前用户以外的其他客户的个人信息？"
SPECS = {"leak_other": (JudgementSpec(question=LEAK, fatal=True), True)}


class KeywordEmbeddings:
    """A stand-in embedder: a turn's vector says whether it names the neighbour (or, faintly, another person), and a
    little of its length."""
    model, identity = "local", "in-process:test==1"

    def of(self, texts: list[str]) -> list[list[float]]:
        return [[1.0, len(t) % 7 / 10] if "隔壁" in t else [0.3, 0.0] if "张先生" in t else [0.0, len(t) % 7 / 10]
                for t in texts]


def labelled(prefix: str, leaks: int, clean: int, *, quiet_leak: bool = False) -> checker_fit.Labelled:
    """A set of two-turn conversations: the agent's turn gives the neighbour's address (a leak) or the customer's
    own; `quiet_leak`: one more leak worded without the neighbour, beside six clean turns the head reads the same
    (the customer, 张先生, is named)."""
    cases, positive, training = [], {}, {}
    texts = [(f"您的包裹在隔壁王女士家，地址幸福路 {i} 号", True) for i in range(leaks)]
    texts += [(f"您的包裹已放在您家门口，幸福路 {i} 号", False) for i in range(clean)]
    if quiet_leak:
        texts.append(("另外那单寄到了张先生的公司", True))
        texts += [("张先生您好，包裹在您公司前台", False)] * 6
    for i, (text, leak) in enumerate(texts):
        cid = f"{prefix}{i}"
        talk = Conversation.model_validate({"id": cid, "turns": [{"role": "user", "content": "查快递"},
                                                                 {"role": "assistant", "content": text}]})
        cases.append(Case(cid, "leak_other", [TurnFinding(turn=2)], leak, talk))
        positive[cid], training[cid] = ({2} if leak else set()), [2]
    return checker_fit.Labelled(cases, positive, training)


def fit(*sets: checker_fit.Labelled):
    return checker_fit.fit_item("leak_other", list(sets), checker_fit.Variant(("local",), False),
                                {"local": KeywordEmbeddings()}, SPECS, "judge-x", None)


def test_the_checker_decides_through_the_package_with_undecided_within_its_limit():
    got = fit(labelled("a", 6, 20), labelled("b", 5, 18))
    assert got is not None
    checker = got.checker
    assert checker.calibration.score == "checker" and checker.judge is None and checker.judge_weight == 0.0
    (head,) = checker.heads
    assert head.logits([[1.0, 0.0]])[0] > head.logits([[0.0, 0.0]])[0]
    for figures in got.figures:
        assert figures.silent == 0 and figures.fp == 0
        assert figures.undecided <= checker_fit.MAX_UNDECIDED * figures.n


def test_the_band_is_fitted_on_scores_of_a_set_the_head_never_saw():
    a, b = labelled("a", 6, 20), labelled("b", 5, 18)
    got = fit(a, b)
    embed = KeywordEmbeddings()
    only_b = checker_fit.fit_head([b], {"local": embed}, ("local",))
    expected = only_b.logits([c.conversation.turns[1].content for c in a.cases])
    assert [c.findings[0].checker for c in got.oof[0]] == pytest.approx([round(float(x), 4) for x in expected])


def test_no_silent_pass_comes_before_precision():
    # one leak the head reads like six clean turns, above the other clean ones: a band that does not clear it costs
    # false hits (too many to leave undecided), yet it is the one kept — precision first would clear the leak
    got = fit(labelled("a", 6, 20, quiet_leak=True), labelled("b", 5, 18))
    assert got is not None and all(figures.silent == 0 for figures in got.figures)
