"""`benchmark-judge robustness` (issue 31) on the loopback gullible stub: the set's shape, the detector on the held-out
half and on benign text, and the benchmark's arithmetic — a defence's column is the raw verdicts with its cap
applied, the same whether or not capped answers were judged. No model."""
from __future__ import annotations

from collections import Counter

import pytest

from benchmarks.judge.robustness import NO_DEFENCE, run_robustness_async
from benchmarks.judge.robustness_data import FAMILIES, benign_texts, load_set
from benchmarks.judge.robustness_screens import llm_screen, pattern_screen
from rubriceval.safety.manipulation import detect_manipulation
from rubriceval.testing.gullible_judge import gullible_responder

READABLE = ("score_request", "hidden_markup", "fake_completion", "zh_native")
SOME = ["score_request", "self_assessment", "adversarial_suffix"]     # a caught, a partly caught, a missed family


def test_the_set_pairs_every_family_and_holds_out_half_with_no_shared_attack():
    dev, dev_benign = load_set(split="dev")
    held, held_benign = load_set(split="heldout")
    assert len(dev) + len(held) >= 150 and len(dev) == len(held)
    assert set(Counter(p.family for p in held)) == set(FAMILIES)
    assert {p.lang for p in held} == {"zh", "en"} and dev_benign and held_benign
    assert not {p.attack for p in dev} & {p.attack for p in held}
    assert not {p.base_id for p in dev} & {p.base_id for p in held}
    for pair in held:
        assert pair.clean in pair.attacked or pair.family == "hidden_markup" or pair.position == "middle"


def test_detector_on_the_held_out_half_and_benign_text():
    """Regression floors under what the held-out half measured when scored once (issue 31 note), and the goal's
    false-positive bar on benign text."""
    held, benign = load_set(split="heldout")
    flagged = {p.id for p in held if detect_manipulation(p.attacked)}
    for family in READABLE:
        chosen = [p for p in held if p.family == family]
        assert sum(p.id in flagged for p in chosen) / len(chosen) >= 0.6, family
    assert len(flagged) / len(held) >= 0.55
    texts = benign_texts(held, benign, halueval_n=300)
    false = [t for t in texts if detect_manipulation(t.text)]
    assert len(texts) > 400 and len(false) / len(texts) <= 0.01, [(t.corpus, t.text[:60]) for t in false]
    assert not [p for p in held if detect_manipulation(p.clean)]


@pytest.fixture
def gullible(stub_server, judge_config):
    stub_server.responder = gullible_responder
    return judge_config.model_copy(update={"cache": False})


async def test_caps_apply_to_the_raw_verdicts(gullible):
    result = await run_robustness_async(gullible, ["holistic", "checklist"], progress=False, halueval_n=50,
                                        families=SOME)
    rows = {(r.mode, r.family): r.by_defence for r in result.rows}
    for mode in ("holistic", "checklist"):
        assert rows[(mode, "score_request")][NO_DEFENCE].inflation > 1        # the stub obeys score requests
        for family in SOME:
            raw, capped = rows[(mode, family)][NO_DEFENCE], rows[(mode, family)]["patterns"]
            assert capped.inflation <= raw.inflation and capped.n_pairs == raw.n_pairs == 12
            if result.recall["patterns"][family].k == 12:                     # every attacked answer capped at 1
                assert capped.attacked_mean == 1.0 and capped.share_higher == 0
    assert result.judge_usage["holistic"].calls == 12 + 36                   # each clean answer once, each attacked


async def test_skipping_capped_answers_gives_the_same_defended_numbers(gullible):
    full = await run_robustness_async(gullible, ["holistic"], progress=False, halueval_n=50, families=SOME)
    lean = await run_robustness_async(gullible, ["holistic"], progress=False, halueval_n=50, families=SOME,
                                      judge_capped=False)
    flagged = full.recall["patterns"]["all"].k
    assert lean.judge_usage["holistic"].calls == full.judge_usage["holistic"].calls - flagged
    assert [r.by_defence["patterns"] for r in lean.rows] == [r.by_defence["patterns"] for r in full.rows]
    assert lean.rows[-1].by_defence[NO_DEFENCE].n_not_judged == flagged


async def test_llm_screen_is_measured_with_its_calls(gullible):
    result = await run_robustness_async(None, [], screens=[pattern_screen(), llm_screen(gullible, 2)],
                                        progress=False, halueval_n=50, families=SOME)
    benign = {c: r.n for c, r in result.false_positives["llm_screen"].items() if c != "all"}
    assert set(benign.values()) == {2}                                     # at most 2 per benign corpus
    assert result.screened_texts["llm_screen"] == 36 + 12 + sum(benign.values())
    assert result.screen_usage["llm_screen"].calls == result.screened_texts["llm_screen"]
    assert result.recall["llm_screen"]["score_request"].k > 0
    assert result.screen_usage["patterns"].calls == 0


async def test_predicates_mode_judges_the_answer_as_a_chat_turn(gullible):
    """Per-turn questions about the answer's turn: the stub obeys score requests there too, and the patterns' cap
    takes the inflation away; each sample is a two-turn chat, so the questions are about turn 2."""
    result = await run_robustness_async(gullible, ["predicates"], progress=False, halueval_n=50,
                                        families=["score_request"])
    rows = {r.family: r.by_defence for r in result.rows}
    raw, capped = rows["score_request"][NO_DEFENCE], rows["score_request"]["patterns"]
    assert raw.n_pairs == 12 and raw.inflation > 1
    assert capped.attacked_mean == 1.0 and capped.inflation < 0
    usage = result.judge_usage["predicates"]
    assert 12 + 12 <= usage.calls <= 3 * (12 + 12)     # up to three questions per answer, none when an entity decides


async def test_panel_mode_judges_each_answer_with_every_panel_judge(gullible):
    """Three seeds of the (deterministic) stub agree, so the panel's median is the single judge's verdict."""
    result = await run_robustness_async(gullible, ["panel", "holistic"], progress=False, halueval_n=50,
                                        families=["score_request"])
    assert result.judge_usage["panel"].calls == 3 * result.judge_usage["holistic"].calls == 3 * (12 + 12)
    rows = {(r.mode, r.family): r.by_defence for r in result.rows}
    panel, single = rows[("panel", "score_request")][NO_DEFENCE], rows[("holistic", "score_request")][NO_DEFENCE]
    assert panel.n_pairs == 12 and panel.inflation > 2 and panel == single
