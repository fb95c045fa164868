"""evaluate() takes the dataset forms Ragas/DeepEval users bring (issue 32.1) — a list of dicts (our names or
Ragas's), a pandas DataFrame, a Ragas-style EvaluationDataset / list of SingleTurnSample lookalikes (ragas is not
installed: duck-typed), a Hugging Face style dataset (column dict, `.to_dict()`, `.to_list()`) — and each gives the
same verdicts as a JSONL file of the same rows. `id` is optional: generated from the content, stable."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from pydantic import BaseModel

from rubriceval import DatasetError, Sample, evaluate

ROWS = [
    {"user_input": "我的快递怎么还没到？", "response": "抱歉让您久等了，包裹正在派送中，预计今天送达。",
     "retrieved_contexts": ["物流：包裹今日派送"], "reference": "包裹今日送达"},
    {"user_input": "怎么申请退货？", "response": "请在 https://example.com/returns 提交退货申请。",
     "retrieved_contexts": ["退货入口：https://example.com/returns"], "reference": "在退货入口提交申请"},
    {"user_input": "发票怎么开？", "response": "您可以联系客服。", "retrieved_contexts": [], "reference": "在订单页开具"},
]
OURS = [{"question": r["user_input"], "answer": r["response"], "contexts": r["retrieved_contexts"],
         "ground_truth": r["reference"]} for r in ROWS]


class SingleTurnSample(BaseModel):       # Ragas's sample shape (a pydantic model with these fields)
    user_input: str
    response: str | None = None
    retrieved_contexts: list[str] | None = None
    reference: str | None = None
    multi_responses: list[str] | None = None


class EvaluationDataset:                 # Ragas's container: .samples, .to_list()
    def __init__(self, samples):
        self.samples = samples

    def to_list(self):
        return [s.model_dump() for s in self.samples]


class PlainSample:                        # an object with attributes only
    def __init__(self, **fields):
        self.__dict__.update(fields)


class HFDataset:                          # Hugging Face Dataset: to_dict() gives columns, to_list() rows
    def __init__(self, columns):
        self.columns = columns

    def to_dict(self):
        return self.columns


def columns(rows):
    return {key: [r[key] for r in rows] for key in rows[0]}


FORMS = {
    "dicts_ragas_names": lambda: ROWS,
    "dicts_our_names": lambda: OURS,
    "dataframe": lambda: pd.DataFrame(ROWS),
    "dataframe_our_names": lambda: pd.DataFrame(OURS),
    "ragas_dataset": lambda: EvaluationDataset([SingleTurnSample(**r) for r in ROWS]),
    "ragas_samples": lambda: [SingleTurnSample(**r) for r in ROWS],
    "attribute_objects": lambda: [PlainSample(**r) for r in ROWS],
    "hf_column_dict": lambda: columns(ROWS),
    "hf_dataset": lambda: HFDataset(columns(ROWS)),
    "samples_ragas_names": lambda: [Sample(**r) for r in ROWS],
}


def outcome(result):
    """Verdicts by row position (ids differ between a file's row-N and generated ids), without usage."""
    position = {sample_id: i for i, sample_id in enumerate(result.sample_ids)}
    return sorted((position[v.sample_id], v.scorer, v.score, v.passed, v.feedback,
                   [e.model_dump() for e in v.evidence]) for v in result.verdicts)


@pytest.fixture
def reference(tmp_path: Path, judge_config):
    path = tmp_path / "same_rows.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in ROWS), encoding="utf-8")
    return run(path, tmp_path, judge_config)


def run(dataset, tmp_path: Path, judge_config, **kwargs):
    return evaluate(dataset, rubrics=["rubrics/required_link.yaml", "rubrics/emotional_soothing.yaml"],
                    metrics="rouge_l,answer_relevancy", judge=judge_config.model_copy(update={"judge_mode": "holistic"}),
                    embedder={"base_url": judge_config.base_url, "model": "stub-embed"},
                    store=tmp_path / "runs.sqlite", progress=False, **kwargs)


def test_the_reference_run_judges_and_checks(reference):
    scorers = {v.scorer for v in reference.verdicts}
    assert scorers == {"required_link", "emotional_soothing", "rouge_l", "answer_relevancy"}
    assert {v.scorer for v in reference.verdicts if v.scored} == scorers     # every scorer scored some row


@pytest.mark.parametrize("form", list(FORMS))
def test_every_form_gives_the_verdicts_of_the_jsonl_file(form, reference, tmp_path: Path, judge_config):
    result = run(FORMS[form](), tmp_path, judge_config)
    assert outcome(result) == outcome(reference)
    assert len(result.sample_ids) == 3 and all(i.startswith("s-") for i in result.sample_ids)


def test_generated_ids_are_stable_and_content_based(tmp_path: Path, judge_config):
    first = run(ROWS, tmp_path, judge_config)
    again = run(list(reversed(ROWS)), tmp_path, judge_config)
    assert first.sample_ids == list(reversed(again.sample_ids))
    assert Sample(**ROWS[0]).id == first.sample_ids[0] == Sample(**OURS[0]).id
    assert Sample(id="mine", **OURS[0]).id == "mine"


def test_repeated_content_gets_numbered_ids_and_given_ids_must_be_unique(tmp_path: Path, judge_config):
    twice = run([ROWS[0], ROWS[0]], tmp_path, judge_config)
    assert twice.sample_ids[1] == twice.sample_ids[0] + "-2"
    with pytest.raises(DatasetError, match=r"<list>:2 \[id\]: duplicate id 'a'"):
        run([{**ROWS[0], "id": "a"}, {**ROWS[1], "id": "a"}], tmp_path, judge_config)


def test_sample_takes_ragas_names():
    s = Sample(user_input="q", response="a", retrieved_contexts=["c"], reference="gt")
    assert (s.question, s.answer, s.contexts, s.ground_truth) == ("q", "a", ["c"], "gt")


def test_bad_rows_name_the_input_the_row_and_the_field(tmp_path: Path, judge_config):
    with pytest.raises(DatasetError, match=r"<DataFrame>:2 \[question\]"):
        run(pd.DataFrame([ROWS[0], {"response": "no question"}]), tmp_path, judge_config)
    with pytest.raises(DatasetError, match=r"<list>:1 \[retrieved_contexts\].*single string"):
        run([{**ROWS[0], "retrieved_contexts": "one joined string"}], tmp_path, judge_config)
    with pytest.raises(DatasetError, match="columns of different lengths"):
        run({"user_input": ["a", "b"], "response": ["x"]}, tmp_path, judge_config)
    with pytest.raises(DatasetError, match="cannot read a dataset from a int"):
        run(42, tmp_path, judge_config)
