"""generate: chunking, and the exact keep/drop/unscored logic with a scripted judge (plus one real-model run)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from rubriceval import DatasetError, JudgeConfig, read_dataset
from rubriceval.generate import chunk_documents, generate, load_documents, split_text
from rubriceval.generate.chunking import split_sentences
from rubriceval.generate.generator import CRITIQUE_SCHEMA, QA_SCHEMA, _judge_with_seed, detect_language
from rubriceval.judge.client import JudgeClient, JudgeResponse
from rubriceval.testing.scripted_judge import RecordedRequest, ScriptedJudge

REPO = Path(__file__).resolve().parents[2]
EXAMPLE_DOCS = REPO / "examples" / "rag_target" / "docs"


# ---------------------------------------------------------------- chunking

def test_sentences_split_on_chinese_and_western_punctuation_but_not_inside_urls_or_numbers():
    text = "请访问 https://oa.example.com/expense/form 填写。金额3.5元！“好的。”Done. Next?\n下一行"
    sentences = split_sentences(text)
    assert "".join(sentences) == text
    assert sentences == ["请访问 https://oa.example.com/expense/form 填写。", "金额3.5元！", "“好的。”",
                         "Done. ", "Next?\n", "下一行"]


def test_headings_start_chunks_and_long_sections_split_on_sentences_with_overlap():
    body = "".join(f"第{i}条规定说明一件事。" for i in range(1, 13))
    text = f"# 总则\n## 审批\n{body}\n\n## 附则\n本规定自发布之日起施行。\n"
    chunks = split_text(text, chunk_size=60, overlap=25)
    headings = [h for h, _ in chunks]
    assert headings[0] == "总则 > 审批" and headings[-1] == "总则 > 附则"
    assert chunks[0][1].startswith("# 总则\n## 审批\n第1条")         # empty parent heading travels with the child
    assert chunks[-1][1] == "## 附则\n本规定自发布之日起施行。"          # a new section never carries overlap
    approval = [c for h, c in chunks if h == "总则 > 审批"]
    assert len(approval) >= 3
    for chunk in approval:
        assert len(chunk) <= 60 and chunk.endswith("。")              # whole sentences, heading counted
    for previous, current in zip(approval, approval[1:], strict=False):
        # The overlap is the longest run of whole trailing sentences of the previous chunk within 25 characters.
        head = split_sentences(current)
        carried = max(k for k in range(len(head) + 1) if previous.endswith("".join(head[:k])))
        assert 0 < len("".join(head[:carried])) <= 25 < len("".join(head[:carried + 1]))
    # Every sentence of the section survives chunking.
    assert all(f"第{i}条" in "".join(approval) for i in range(1, 13))


def test_paragraphs_are_packed_together_up_to_chunk_size():
    text = "第一段。\n\n第二段。\n\n" + "长" * 50 + "。"
    chunks = split_text(text, chunk_size=30, overlap=0)
    assert [c for _, c in chunks] == ["第一段。\n\n第二段。", "长" * 30, "长" * 20 + "。"]


def test_load_documents_reads_txt_and_md_and_names_unsupported_files(tmp_path: Path):
    (tmp_path / "a.md").write_text("# 标题\n内容。", encoding="utf-8")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.txt").write_text("文本内容。", encoding="utf-8")
    (tmp_path / ".hidden.pdf").write_bytes(b"%PDF")
    assert [d.source for d in load_documents(tmp_path)] == ["a.md", "sub/b.txt"]
    (tmp_path / "manual.pdf").write_bytes(b"%PDF-1.4")
    with pytest.raises(DatasetError, match=r"manual\.pdf.*PDF documents are not supported.*pdftotext"):
        load_documents(tmp_path)
    (tmp_path / "manual.pdf").unlink()
    (tmp_path / "notes.docx").write_bytes(b"PK")
    with pytest.raises(DatasetError, match=r"notes\.docx.*unsupported document type '\.docx'"):
        load_documents(tmp_path)


def test_example_docs_chunk_into_sections():
    chunks = chunk_documents(load_documents(EXAMPLE_DOCS), chunk_size=500, overlap=50)
    sources = {c.source for c in chunks}
    assert sources == {"报销流程.md", "订单延迟与退款.md", "退换货政策.md", "会员积分.md", "发票开具.md"}
    reimbursement = "\n".join(c.text for c in chunks if c.source == "报销流程.md")
    assert "https://oa.example.com/expense/form" in reimbursement and "二级主管" in reimbursement


def test_language_detection():
    assert detect_language("报销需要二级主管审批 (OA system)") == "zh"
    assert detect_language("Refunds arrive within 3 days.") == "en"


# ---------------------------------------------------------------- generate with a scripted judge

def ok(data: dict) -> JudgeResponse:
    return JudgeResponse(text=json.dumps(data, ensure_ascii=False), data=data, prompt_tokens=10,
                         completion_tokens=5)


def critique(groundedness: int | str, standalone: int | str, usefulness: int | str) -> JudgeResponse:
    def item(name, score):
        return {"feedback": f"{name} 评语", "score": score}
    return ok({"groundedness": item("groundedness", groundedness), "standalone": item("standalone", standalone),
               "usefulness": item("usefulness", usefulness)})


# marker in the chunk → (generation reply, critique reply or None when the critique must not be called)
SCRIPT: dict[str, tuple[JudgeResponse, JudgeResponse | None]] = {
    "条款A": (ok({"question": "报销单链接是什么？", "answer": "https://oa.example.com/expense/form"}),
              critique(5, 4, 4)),
    "条款B": (ok({"question": "它需要多久？", "answer": "5个工作日"}), critique(5, 2, 4)),
    "条款C": (JudgeResponse(text="我无法回答这个问题", data=None), None),
    "条款D": (ok({"question": "积分多久过期？", "answer": "12个月"}), critique(3, 3, 3)),
    "条款E": (ok({"question": "发票能换开几次？", "answer": "一次"}), critique(6, 5, 5)),
    "条款F": (ok({"question": "根据上下文，报销需要谁审批？", "answer": "二级主管"}), None),
    "条款G": (ok({"question": "退款几天到账？", "answer": "1至3个工作日"}),
              JudgeResponse(error="HTTP 500: overloaded (after 4 attempt(s))", error_kind="provider_error")),
    "条款H": (ok({"question": "天气怎么样？", "answer": "晴"}), critique(2, 4, 1)),
    "Clause I": (ok({"question": "How long do refunds take?", "answer": "3 days"}), critique(4, 4, 5)),
}


def _reply_by_marker(request: RecordedRequest) -> JudgeResponse:
    """Answers from SCRIPT by the marker found in the prompt."""
    marker = next(m for m in SCRIPT if m in request[-1]["content"])
    generation, critique_reply = SCRIPT[marker]
    if request.json_schema == QA_SCHEMA:
        return generation
    assert request.json_schema == CRITIQUE_SCHEMA
    assert critique_reply is not None, f"critique must not be called for {marker}"
    return critique_reply


class MarkerJudge(ScriptedJudge):
    """The shared scripted judge answering from SCRIPT; `calls` lists (schema_name, marker, prompt)."""

    def __init__(self):
        super().__init__(_reply_by_marker)
        self.config = None      # like a judge without a JudgeConfig: generate cannot seed it, passes it as is

    @property
    def calls(self) -> list[tuple[str, str, str]]:  # type: ignore[override]
        prompts = [(r.schema_name, r[-1]["content"]) for r in self.requests]
        return [(schema, next(m for m in SCRIPT if m in prompt), prompt) for schema, prompt in prompts]


@pytest.fixture
def scripted_docs(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    sections = "\n\n".join(f"## {m}\n这是{m}的内容，说明一项公司政策的具体规定。"
                             for m in SCRIPT if m.startswith("条款"))
    (docs / "政策.md").write_text(f"# 公司政策\n\n{sections}\n", encoding="utf-8")
    (docs / "refunds.txt").write_text("Clause I. Refunds are paid back within 3 days of approval.\n", encoding="utf-8")
    return docs


async def test_generate_keeps_drops_and_reports_unscored_exactly(scripted_docs: Path, tmp_path: Path):
    judge = MarkerJudge()
    out = tmp_path / "testset.jsonl"
    summary = await generate(scripted_docs, out, judge=judge, n=50, threshold=3, progress=False)

    assert (summary.chunks_total, summary.requested, summary.attempted) == (9, 50, 9)
    assert (summary.kept, summary.dropped, summary.unscored) == (3, 2, 4)
    status = {_marker_of(o): o for o in summary.outcomes}
    assert {m: o.status for m, o in status.items()} == {
        "条款A": "kept", "条款B": "dropped", "条款C": "unscored", "条款D": "kept", "条款E": "unscored",
        "条款F": "unscored", "条款G": "unscored", "条款H": "dropped", "Clause I": "kept"}

    dropped_b = status["条款B"]
    assert [(r.criterion, r.score, r.threshold, r.feedback) for r in dropped_b.drop_reasons] == [
        ("standalone", 2, 3, "standalone 评语")]
    assert [(r.criterion, r.score) for r in status["条款H"].drop_reasons] == [("groundedness", 2), ("usefulness", 1)]
    assert summary.drops_by_criterion == {"groundedness": 1, "standalone": 1, "usefulness": 1}

    c, e, f, g = status["条款C"], status["条款E"], status["条款F"], status["条款G"]
    assert (c.stage, c.unscored_kind) == ("generation", "invalid_output") and "not a JSON object" in c.unscored_reason
    assert (e.stage, e.unscored_kind) == ("critique", "invalid_output")
    assert "groundedness" in e.unscored_reason and "6" in e.unscored_reason and e.scores == {}
    assert (f.stage, f.unscored_kind) == ("generation", "invalid_output") and "根据上下文" in f.unscored_reason
    assert (g.stage, g.unscored_kind) == ("critique", "provider_error") and "HTTP 500" in g.unscored_reason
    # No critique call for a pair whose generation was unusable.
    unusable = sorted((schema, m) for schema, m, _ in judge.calls if m in ("条款C", "条款F"))
    assert unusable == [("qa_pair", "条款C"), ("qa_pair", "条款F")]

    rows = {s.question: s for s in read_dataset(out, require=("question", "ground_truth"))}
    assert set(rows) == {"报销单链接是什么？", "积分多久过期？", "How long do refunds take?"}
    link = rows["报销单链接是什么？"]
    assert link.ground_truth == "https://oa.example.com/expense/form"
    assert len(link.reference_contexts) == 1 and "条款A" in link.reference_contexts[0]
    assert link.metadata["source"] == "政策.md" and link.metadata["heading"] == "公司政策 > 条款A"
    assert link.metadata["critique"]["standalone"] == {"feedback": "standalone 评语", "score": 4}
    assert rows["How long do refunds take?"].metadata["language"] == "en"

    report = summary.describe()
    assert report.startswith("kept 3/9 pairs (dropped 2, unscored 4)")
    assert "standalone 2 < 3: standalone 评语" in report and "provider_error" in report


def _marker_of(outcome) -> str:
    """The script marker of an outcome's chunk: its section heading, or the English file's clause."""
    return "Clause I" if outcome.source == "refunds.txt" else outcome.heading.split(" > ")[-1]


async def test_prompts_follow_the_chunk_language_and_forbid_passage_references(scripted_docs: Path, tmp_path: Path):
    judge = MarkerJudge()
    await generate(scripted_docs, tmp_path / "t.jsonl", judge=judge, n=50, progress=False)
    zh_generation = next(p for s, m, p in judge.calls if s == "qa_pair" and m == "条款A")
    en_generation = next(p for s, m, p in judge.calls if s == "qa_pair" and m == "Clause I")
    en_critique = next(p for s, m, p in judge.calls if s == "qa_critique" and m == "Clause I")
    assert "根据上下文" in zh_generation and "不要" in zh_generation and "事实型问题" in zh_generation
    assert 'do NOT write "according to the passage"' in en_generation
    assert "How long do refunds take?" in en_critique and "feedback before score" in en_critique
    assert list(CRITIQUE_SCHEMA["properties"]["standalone"]["properties"]) == ["feedback", "score"]

    judge = MarkerJudge()
    await generate(scripted_docs, tmp_path / "t.jsonl", judge=judge, n=50, language="en", progress=False)
    assert all("Passage:" in p for _, _, p in judge.calls)


async def test_threshold_per_criterion_and_sampling_is_seeded(scripted_docs: Path, tmp_path: Path):
    summary = await generate(scripted_docs, tmp_path / "t.jsonl", judge=MarkerJudge(), n=50, progress=False,
                             threshold={"groundedness": 4, "standalone": 1, "usefulness": 1})
    # D (3,3,3) now fails groundedness; B (standalone 2) now passes; H fails groundedness only.
    kept = {o.question for o in summary.outcomes if o.status == "kept"}
    assert kept == {"报销单链接是什么？", "它需要多久？", "How long do refunds take?"}

    first = await generate(scripted_docs, tmp_path / "a.jsonl", judge=MarkerJudge(), n=4, seed=7, progress=False)
    again = await generate(scripted_docs, tmp_path / "b.jsonl", judge=MarkerJudge(), n=4, seed=7, progress=False)
    assert first.attempted == 4 and [o.id for o in first.outcomes] == [o.id for o in again.outcomes]


def test_seed_is_passed_to_a_judge_client_without_touching_the_original():
    client = JudgeClient(JudgeConfig(base_url="http://127.0.0.1:9/v1", cache=False, seed=0))
    seeded = _judge_with_seed(client, 7)
    assert seeded.config.seed == 7 and client.config.seed == 0
    assert seeded.stats is client.stats                      # counters stay shared
    assert _judge_with_seed(client, 0) is client
    fake = MarkerJudge()
    assert _judge_with_seed(fake, 7) is fake


# ---------------------------------------------------------------- the real local judge

@pytest.mark.local_model
async def test_generate_with_the_local_judge_on_two_chunks(tmp_path: Path):
    from rubriceval.local.judge_server import ensure_local_judge

    handle = ensure_local_judge()
    base_url = handle if isinstance(handle, str) else handle.base_url
    judge = JudgeClient(JudgeConfig(base_url=base_url, cache=False, max_tokens=768, concurrency=1))
    try:
        summary = await generate(EXAMPLE_DOCS, tmp_path / "testset.jsonl", judge=judge, n=2, seed=0,
                                 domain="电商客服", progress=False)
    finally:
        await judge.close()
    assert summary.attempted == 2 and summary.kept + summary.dropped + summary.unscored == 2
    for outcome in summary.outcomes:
        if outcome.status == "unscored":
            assert outcome.unscored_reason
        else:
            assert set(outcome.scores) == {"groundedness", "standalone", "usefulness"}
            assert all(1 <= s.score <= 5 for s in outcome.scores.values())
            assert outcome.question and outcome.answer
    written = (tmp_path / "testset.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(written) == summary.kept
