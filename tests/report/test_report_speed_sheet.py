"""The samples sheet's fast path (report/source.py `sheet_rows`: the shown verdict columns and the sample's shown
fields read in SQL; report/excel.py: each distinct evidence item said once) writes exactly the rows the plain path
writes — a Verdict and a Sample per row, every evidence item validated and said — on SQLite and PostgreSQL, across
chunk boundaries, in both languages."""
from __future__ import annotations

import pytest

from rubriceval.core.verdict import Evidence, Usage, Verdict
from rubriceval.data.sample import Sample
from rubriceval.i18n import evidence_text, msg, t
from rubriceval.report import excel, source
from rubriceval.report.run_data import load_run
from rubriceval.store.runs import RunStore
from tests.report.test_report import EMPATHY, PROCESS, add_run

SAMPLES = [
    Sample(id="a1", question="订单12345678怎么退货？", answer="=HYPERLINK(\"http://x\")您好，请在7天内申请。",
           ground_truth="7天内无理由退货", tags=["退货", "售后"], intent="return"),
    Sample(id="a2", question="How long does a refund take?", answer="3–5 days.\u2028Thanks", tags=[], intent=""),
    Sample(id="a3", question="发票怎么开？", answer="在订单页申请发票。", ground_truth="", tags=["发票"],
           intent="invoice"),
    Sample(id="a4", question="快递到哪了？", answer="@SUM(A1)", tags=["物流", "物流"], intent="logistics"),
    Sample(id="a5", question="能便宜点吗？", answer="", tags=["价格"]),
]


def _evidence(i: int) -> list[Evidence]:
    """Items that share their text and differ by span (the cache must keep each row's span), a catalogue message
    said in either language, an item without a verdict, one with a missing list."""
    number = f"{12345678 + i}"
    return [Evidence(item="no_promise", passed=True, detail="没有出现禁用说法", message=msg("ev_forbidden_none")),
            Evidence(item="cites_order", passed=i % 2 == 0, detail=r"匹配到规则 /\d{8}/", span=number, start=i,
                     message=msg("ev_regex_matched", pattern=r"\d{8}")),
            Evidence(item="judge", score=3, passed=None, detail=f"reply {i % 2}"),
            Evidence(item="link", passed=False, detail="缺少链接 http://x", missing=["http://x"], span=None)]


def _verdicts() -> list[Verdict]:
    out = []
    for i, s in enumerate(SAMPLES):
        out.append(Verdict(sample_id=s.id, scorer=PROCESS.id, kind="rubric", score=float(1 + i % 5),
                           passed=i % 2 == 0, feedback=f"=feedback {i}", evidence=_evidence(i),
                           usage=Usage(calls=1, prompt_tokens=100 + i, completion_tokens=10, cost_usd=0.0001 * i)))
        if i != 1:
            out.append(Verdict(sample_id=s.id, scorer=EMPATHY.id, kind="rubric", unscored_kind="parse_error",
                               unscored_reason="no [RESULT]", evidence=_evidence(0)))
        unscored = {"unscored_kind": "no_statements", "unscored_reason": "没有陈述"} if i == 3 else {"score": i / 5}
        out.append(Verdict(sample_id=s.id, scorer="faithfulness", kind="metric", **unscored))
    return out


@pytest.fixture
def store(store_target) -> RunStore:
    store = RunStore(store_target)
    add_run(store, "sheet", _verdicts(), samples=SAMPLES)
    return store


def _plain_rows(data, lang) -> list[list]:
    """The samples sheet as the plain path builds it: every verdict and sample parsed, every item said."""
    names = {s.scorer: s.name for s in data.summary.scorers}
    rows = []
    for chunk in data.source.verdict_chunks():
        for v, s in chunk:
            evidence = "\n".join(f"{'✓' if e.passed else '✗' if e.passed is False else '·'} {e.item}: "
                                 f"{evidence_text(e, lang)}" + (f" 「{e.span}」" if e.span else "") for e in v.evidence)
            rows.append([v.sample_id, names.get(v.scorer, v.scorer), t(f"kind_{v.kind}", lang), v.score,
                         None if v.passed is None else t("passed" if v.passed else "failed", lang),
                         v.unscored_kind or ("error" if v.score is None else ""), v.unscored_reason or "",
                         v.feedback, evidence, s.question, s.answer, s.ground_truth, ", ".join(s.tags), s.intent,
                         v.usage.calls, v.usage.prompt_tokens + v.usage.completion_tokens,
                         round(v.usage.cost_usd, 6)])
    return rows


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("span", [2, 400])
def test_the_samples_sheet_rows_are_the_plain_rows(store, monkeypatch, lang, span):
    monkeypatch.setattr(source, "SPAN", span)                  # 2: three chunks of five samples
    excel._LINES.clear()
    excel._evidence_cell.cache_clear()
    data = load_run(store, "sheet")
    _, rows, _ = excel._sample_rows(data, lang)
    fast = list(rows)
    plain = _plain_rows(data, lang)
    assert len(fast) == len(plain) == len(_verdicts())
    assert fast == plain
    # the rows really differ where they should: each row keeps its own span
    spans = {row[8].split("\n")[1] for row in fast if row[2] == t("kind_rubric", lang) and row[3] is not None}
    assert len(spans) == len(SAMPLES)
    data.source.close()


def test_conversation_rows_are_found_on_both_engines(store_target, store):
    """The conversation views' rows (instr() before the JSON test, both engines) are the conversation samples and
    their rubric verdicts, as the loaded run holds them; a run without conversations has none."""
    from rubriceval.report.source import RunSource
    from tests.helpers.conversation_run import conversation_run

    run = conversation_run(store_target, limit=3, name="talks")
    samples, verdicts = RunSource(store, run).conversation_rows()
    loaded = [s for s in store.samples(run) if s.conversation is not None]
    assert samples == loaded and len(samples) == 3
    ids = {s.id for s in loaded}
    expected = [v for v in store.verdicts(run) if v.kind == "rubric" and v.sample_id in ids]
    key = lambda v: (v.sample_id, v.scorer)                      # noqa: E731
    assert sorted(verdicts, key=key) == sorted(expected, key=key) and expected
    assert RunSource(store, "sheet").conversation_rows() == ([], [])
