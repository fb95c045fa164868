"""Issue 43.4: a Chinese report says no English sentence. The zh report (HTML, Markdown and every Excel sheet) of a
run of the demo's Chinese data with scorecards, a prompt-injection answer flagged as suspected manipulation and an
unscored row is read as text; what the data, the rubric and scorecard files and the judge wrote is taken out, and
so are identifiers (ids, file names, URLs, versions) and rule expressions. What is left must have no run of English
words and no English word outside a short list of technical terms. The trend command's console table is Chinese
when the cards are."""
from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import get_args

import pytest

from rubriceval import evaluate
from rubriceval.report.compose import RunReport
from rubriceval.safety.manipulation import Defence, FindingKind
from rubriceval.store.runs import RunStore

DATA = Path("datasets/demo_zh.jsonl")
RUBRICS = ["rubrics/process_compliance.yaml", "rubrics/required_link.yaml", "rubrics/identity_verification.yaml",
           "rubrics/policy_compliance.yaml"]
CARD = "scorecards/ecommerce_qa_zh.yaml"
# Technical terms a Chinese page says in English (as Chinese writers do); anything else in Latin letters is a leak.
TERMS = {"ID", "RAG", "tokens", "token", "prompt", "Excel", "HTML", "Markdown", "JSON", "JSONL", "CSV", "API", "URL",
         "rubriceval", "κ", "p", "yes", "n", "N", "A", "regex", "checklist", "holistic", "predicates", "Batch",
         "checklist_fitted", "LLM", "SQL", "CI", "AI", "ROUGE", "BLEU", "OK", "v", "USD", "RMB", "ms", "s",
         "Wilson", "Welch", "t"}          # statistical methods are named after people (Wilson 区间, Welch t 检验)
ENGLISH_RUN = re.compile(r"[A-Za-z]{2,}(?:[ ,;:()'’/-]+[A-Za-z]{2,})+")
URL = re.compile(r"https?(?::?/{0,2}[^\s）)]*)|<<<(?:END )?[^<>]*>>>")      # links (also cut short), fences
QUOTE = re.compile(r"“[^”\n]*(?:”|$)|「[^」\n]*(?:」|$)", re.M)
IDENTIFIER = re.compile(r"https?://[^\s）)]+|(?:/[\w.-]+)+|[\w.-]+\.(?:jsonl|json|yaml|csv|xlsx|md|html|sqlite)\b|"
                        r"\bv\d+@[0-9a-f]+\b|\b[0-9a-f]{8,}\b|[A-Za-z0-9]+(?:[_-][A-Za-z0-9]+)+|/[^/\s]+/")
RULE = re.compile(r"\b(?:and|or|not|otherwise)\b")


def _strings(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _written_by_others(store: RunStore, run: str) -> list[str]:
    """Text the report quotes rather than says: the data, the rubric and scorecard files, the judge's feedback."""
    import yaml

    texts = [s for line in DATA.read_text(encoding="utf-8").splitlines() for s in _strings(json.loads(line))]
    for path in [*RUBRICS, CARD]:
        texts += _strings(yaml.safe_load(Path(path).read_text(encoding="utf-8")))
    texts += [v.feedback for v in store.verdicts(run) if v.feedback and "judge" in (v.details or {}).get("sources", ["judge"])]
    lines = [line.strip() for text in texts for line in text.splitlines()]     # a long text is shown cut short
    return sorted({t for t in [*texts, *lines] if len(t) > 1}, key=len, reverse=True)


def english_left(text: str, quoted: list[str], identifiers: set[str]) -> list[str]:
    text = QUOTE.sub(" ", URL.sub(" ", text))    # a span the report quotes (“…”, 「…」) is the data's
    for q in quoted:                             # (bare words among them are identifiers, taken out below)
        if not re.fullmatch(r"\w+", q):
            text = text.replace(q, " ")
    text = IDENTIFIER.sub(" ", text)
    for ident in sorted(identifiers, key=len, reverse=True):
        text = re.sub(rf"(?<![A-Za-z0-9_]){re.escape(ident)}(?![A-Za-z0-9_])", " ", text)
    text = RULE.sub(" ", text)
    found = [m.group(0) for m in ENGLISH_RUN.finditer(text)
             if not all(w in TERMS for w in re.findall(r"[A-Za-z]+", m.group(0)))]
    found += [w for w in re.findall(r"(?<![A-Za-z])[A-Za-z]+(?![A-Za-z])", text) if w not in TERMS]
    return sorted(set(found))


def _html_text(page: str) -> str:
    page = re.sub(r"<(script|style)[^>]*>.*?</\1>", " ", page, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", "\n", page))


def _excel_text(path: Path) -> str:
    from openpyxl import load_workbook

    book = load_workbook(path, read_only=True)       # the cells (sheet names are stable ids for scripts)
    return "\n".join("\n".join(str(c) for row in sheet.iter_rows(values_only=True) for c in row if c is not None)
                     for sheet in book.worksheets)


@pytest.fixture(scope="module")
def zh_run(tmp_path_factory):
    from rubriceval.judge.config import JudgeConfig
    from rubriceval.testing.stub_server import StubServer

    folder = tmp_path_factory.mktemp("zh")
    rows = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines()]
    # An unscored row: a policy question without the contexts policy_compliance's judge reads.
    rows.append({"id": "no-contexts", "question": "退货运费谁出？", "answer": "质量问题由商家承担运费。"})
    data = folder / "data.jsonl"
    data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    with StubServer() as stub:
        config = JudgeConfig(base_url=stub.base_url, model="stub", cache_path=str(folder / "cache.sqlite"),
                             timeout_s=5)
        result = evaluate(data, rubrics=RUBRICS, judge=config, store=folder / "runs.sqlite", scorecards=CARD,
                          metrics="rouge_l", progress=False)
    store = RunStore(folder / "runs.sqlite")
    files = RunReport.read(store, result.run_id, lang="zh").write(folder / "report")
    return store, result, files, rows


def _identifiers(store: RunStore, run: str, rows: list[dict]) -> set[str]:
    # the judge's model name, the metric, the manipulation screens' names, the summary sheet's id of the total row
    # and the summary sheet's key column "id" (scripts read the workbook by it, as by sample_id)
    ids = {"stub", "rouge_l", *get_args(Defence), *get_args(FindingKind), "total", "id"}
    for scorer in store.scorers(run):
        ids.add(scorer["scorer"])
        ids.update(str(i.get("id")) for i in (scorer.get("definition") or {}).get("items") or [])
    for row in rows:
        ids.update([str(row.get("id")), *row.get("tags", []), str(row.get("intent", ""))])
    import yaml

    for path in [*RUBRICS, CARD]:
        ids.update(_ids_and_rules(yaml.safe_load(Path(path).read_text(encoding="utf-8"))))
    return {i for i in ids if i}


def _ids_and_rules(value, key: str = "") -> set[str]:
    """Every `id:` of a rubric or scorecard file, the words of its level rules, and its judge names."""
    if isinstance(value, dict):        # its field names too (the report says "measured:")
        return {str(k) for k in value} | {w for k, v in value.items() for w in _ids_and_rules(v, str(k))}
    if isinstance(value, list):
        return {w for v in value for w in _ids_and_rules(v, key)}
    if key in ("id", "judge", "mode", "type", "rule", "judge_model") or key.isdigit() or key == "when":
        return set(re.findall(r"[A-Za-z_][A-Za-z0-9_+]*", str(value)))
    return set()


def test_the_run_has_what_the_report_must_say(zh_run):
    store, result, files, _ = zh_run
    verdicts = store.verdicts(result.run_id)
    assert any(v.score is None for v in verdicts)                                          # an unscored row
    assert any((v.details or {}).get("suspected_manipulation") for v in verdicts)          # the injection, flagged
    assert not result.scorecards().empty                                                           # scorecards scored


@pytest.mark.parametrize("output", ["html", "markdown", "excel"])
def test_the_chinese_report_says_no_english_sentence(zh_run, output):
    store, result, files, rows = zh_run
    text = {"html": lambda: _html_text(files.html.read_text(encoding="utf-8")),
            "markdown": lambda: files.markdown.read_text(encoding="utf-8"),
            "excel": lambda: _excel_text(files.excel)}[output]()
    assert "状态" in text or output == "excel"
    left = english_left(text, _written_by_others(store, result.run_id), _identifiers(store, result.run_id, rows))
    assert not left, "\n".join(left)


def test_the_scanner_finds_the_english_the_issue_quoted():
    said = "状态: complete 评审模型: embedded local judge (Qwen2.5-Coder-1.5B) 未安抚情绪 (0 review(s), the bar needs 20)"
    left = english_left(said, [], set())
    assert {"complete", "embedded local judge", "review(s), the bar needs"} <= set(left) or \
        {"complete", "embedded", "needs"} <= set(left), left
    assert english_left("等级规则 verified and not leaked_before：process_compliance v1@1d1addddaf8b", [],
                        {"verified"}) == []


def test_trend_speaks_the_language_of_the_data(zh_run, capsys):
    from rubriceval.cli import main

    store, result, _, rows = zh_run
    assert main(["trend", result.run_id, "--store", str(store.path), "--n-boot", "20"]) == 0
    printed = capsys.readouterr().out
    header = printed.splitlines()[0]
    assert "评分项" in header and "Scorer" not in header
    assert not english_left(printed, _written_by_others(store, result.run_id), _identifiers(store, result.run_id, rows))
    assert main(["trend", result.run_id, "--store", str(store.path), "--n-boot", "20", "--lang", "en"]) == 0
    assert capsys.readouterr().out.splitlines()[0].startswith("Scorer")
