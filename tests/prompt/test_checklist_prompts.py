"""Holistic prompt options for small judges: one few-shot example per level, no examples, and the seeded
shuffling of level descriptions (deterministic per rubric and sample)."""
import re

from rubriceval.data.sample import Sample
from rubriceval.prompt.prompt_options import level_order, shown_examples
from rubriceval.prompt.rubric_prompts import compile_rubric
from rubriceval.rubric.loader import load_rubric
from rubriceval.rubric.schema import Rubric

SAMPLE = Sample(id="d1", question="订单延迟了", tags=["订单延迟"], answer="请耐心等待。", contexts=["杭州转运中心"])
LEVEL_LINE = re.compile(r"^分数 (\d)：", re.M)
EXAMPLE_SCORE = re.compile(r'"score": (\d)\}')


def soothing(**update) -> Rubric:
    """The shipped rubric judged holistically (it ships checklist_fitted: these options are the holistic prompt's)."""
    rubric = load_rubric("rubrics/emotional_soothing.yaml")
    extra = [{"question": "又一个例子", "answer": f"第二个 {s} 分的例子", "score": s, "feedback": "同档"} for s in (1, 5)]
    data = {**rubric.model_dump(), "examples": [e.model_dump() for e in rubric.examples] + extra,
            "judge_mode": "holistic", **update}
    return Rubric.model_validate(data)


def user_message(rubric: Rubric, sample: Sample = SAMPLE) -> str:
    return compile_rubric(rubric, sample)[0].messages[-1]["content"]


def test_per_level_shows_one_example_per_level_lowest_first():
    rubric = soothing(few_shot="per_level")
    assert [e.score for e in shown_examples(rubric)] == [1, 2, 3, 4, 5]
    text = user_message(rubric)
    assert [int(s) for s in EXAMPLE_SCORE.findall(text)] == [1, 2, 3, 4, 5]
    assert "第二个" not in text                                    # the second example of a level is left out
    assert [int(s) for s in EXAMPLE_SCORE.findall(user_message(soothing()))] == [1, 2, 3, 4, 5, 1, 5]   # all


def test_no_examples_in_zero_shot():
    text = user_message(soothing(few_shot="none"))
    assert "参考示例" not in text and not EXAMPLE_SCORE.findall(text)


def test_level_order_is_shuffled_per_sample_and_stable():
    rubric = soothing(shuffle_levels=True)
    orders = {tuple(int(x) for x in LEVEL_LINE.findall(user_message(rubric, SAMPLE.model_copy(update={"id": f"s{i}"}))))
              for i in range(12)}
    assert len(orders) > 3                                          # differs between samples
    assert all(sorted(order) == [1, 2, 3, 4, 5] for order in orders)  # every level still listed once
    again = [LEVEL_LINE.findall(user_message(rubric)) for _ in range(3)]
    assert again[0] == again[1] == again[2]                        # the same prompt every time for one sample
    assert [int(x) for x in LEVEL_LINE.findall(user_message(soothing()))] == [1, 2, 3, 4, 5]


def test_shuffled_order_depends_on_the_rubric_too():
    levels = [(lvl, str(lvl)) for lvl in range(1, 6)]
    a = [level_order(soothing(shuffle_levels=True, id=f"r{i}"), "same-sample", levels) for i in range(8)]
    assert len({tuple(x) for x in a}) > 2


def test_options_change_the_version_tag_but_defaults_keep_it():
    base = load_rubric("rubrics/emotional_soothing.yaml")
    same = Rubric.model_validate({**base.model_dump(), "few_shot": "all", "shuffle_levels": False})
    assert same.version_tag == base.version_tag
    assert soothing(few_shot="per_level").version_tag != soothing().version_tag
    assert soothing(shuffle_levels=True).version_tag != soothing().version_tag
