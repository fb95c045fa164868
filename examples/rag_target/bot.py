"""A tiny customer-service RAG bot to point `rubriceval collect` at.

Retrieval: BM25 over character bigrams (Chinese needs no word segmenter this way) across the Markdown policies in
docs/, chunked by section and sentence. Generation, by mode:
- "extractive": the answer is the retrieved sentences that best match the question — no model, instant; used by
  tests and quick demos.
- "llm": an OpenAI-compatible chat model answers from the retrieved chunks. The endpoint is
  $RUBRICEVAL_TARGET_BASE_URL (model $RUBRICEVAL_TARGET_MODEL, key $RUBRICEVAL_TARGET_API_KEY), or else the
  embedded local judge model started by rubriceval.local.judge_server.ensure_local_judge().

Use as a callable target by its path (`examples/rag_target/bot.py:answer`, `…:answer_extractive`, `…:answer_llm`;
from another folder give the path to this file) or serve the rubriceval HTTP contract:
`python examples/rag_target/bot.py --serve 8765 [--mode llm]`.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import re
import threading
from collections import Counter
from functools import lru_cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from rubriceval.generate.chunking import chunk_documents, load_documents, split_sentences

DOCS_DIR = Path(__file__).parent / "docs"
TOP_K = 3
NOT_FOUND = "抱歉，知识库中没有找到与您的问题相关的信息，建议您联系人工客服（400-800-1234）。"
SYSTEM_PROMPT = ("你是电商平台的客服助手。只根据“参考资料”回答用户的问题，语气礼貌、简洁；资料中的链接、金额、时限和"
                 "审批人要原样给出。资料中没有答案时，请说明无法回答并建议联系人工客服。")

_TOKEN = re.compile(r"[\u4e00-\u9fff]+|[a-z0-9]+")


def tokenize(text: str) -> list[str]:
    """Character bigrams inside Chinese runs (a lone character stays a unigram), whole words elsewhere."""
    tokens: list[str] = []
    for run in _TOKEN.findall(text.lower()):
        if "\u4e00" <= run[0] <= "\u9fff" and len(run) > 1:
            tokens.extend(run[i:i + 2] for i in range(len(run) - 1))
        else:
            tokens.append(run)
    return tokens


class BM25Index:
    def __init__(self, texts: list[str], k1: float = 1.5, b: float = 0.75):
        self.texts = texts
        self.k1, self.b = k1, b
        self.term_counts = [Counter(tokenize(t)) for t in texts]
        self.lengths = [sum(c.values()) for c in self.term_counts]
        self.avg_length = sum(self.lengths) / max(1, len(self.lengths))
        document_frequency = Counter(term for counts in self.term_counts for term in counts)
        n = len(texts)
        # BM25+ style idf that stays positive for terms in most chunks.
        self.idf = {term: math.log(1 + (n - df + 0.5) / (df + 0.5)) for term, df in document_frequency.items()}

    def scores(self, query: str) -> list[float]:
        terms = set(tokenize(query))
        result = []
        for counts, length in zip(self.term_counts, self.lengths, strict=True):
            score = 0.0
            for term in terms & counts.keys():
                tf = counts[term]
                score += self.idf[term] * tf * (self.k1 + 1) / (
                    tf + self.k1 * (1 - self.b + self.b * length / self.avg_length))
            result.append(score)
        return result

    def search(self, query: str, top_k: int = TOP_K) -> list[str]:
        ranked = sorted(enumerate(self.scores(query)), key=lambda pair: -pair[1])
        return [self.texts[i] for i, score in ranked[:top_k] if score > 0]


@lru_cache(maxsize=1)
def _index() -> BM25Index:
    chunks = chunk_documents(load_documents(DOCS_DIR), chunk_size=160, overlap=40)
    return BM25Index([c.text for c in chunks])


def retrieve(question: str, top_k: int = TOP_K) -> list[str]:
    return _index().search(question, top_k)


def _best_sentences(question: str, contexts: list[str], limit: int = 2) -> list[str]:
    """The sentences sharing the most (idf-weighted) bigrams with the question, in reading order."""
    idf = _index().idf
    wanted = set(tokenize(question))
    candidates: list[tuple[float, int, str]] = []
    for sentence in (s for context in contexts for s in split_sentences(context)):
        text = sentence.strip()
        if not text or text.startswith("#"):
            continue
        score = sum(idf.get(term, 0.0) for term in wanted & set(tokenize(text)))
        if score > 0:
            candidates.append((score, len(candidates), text))
    best = sorted(candidates, key=lambda item: -item[0])[:limit]
    return [text for _, _, text in sorted(best, key=lambda item: item[1])]


def answer_extractive(question: str) -> dict[str, Any]:
    contexts = retrieve(question)
    sentences = _best_sentences(question, contexts)
    return {"answer": "".join(sentences) if sentences else NOT_FOUND, "contexts": contexts}


_client_lock = threading.Lock()


@lru_cache(maxsize=1)
def _chat_client() -> tuple[Any, str]:
    from openai import OpenAI  # only the llm mode needs it

    base_url = os.environ.get("RUBRICEVAL_TARGET_BASE_URL")
    if not base_url:
        from rubriceval.local.judge_server import ensure_local_judge  # started on demand, never at import

        handle = ensure_local_judge()
        base_url = handle if isinstance(handle, str) else handle.base_url
    client = OpenAI(base_url=base_url, api_key=os.environ.get("RUBRICEVAL_TARGET_API_KEY") or "not-needed",
                    timeout=300.0, max_retries=0)
    return client, os.environ.get("RUBRICEVAL_TARGET_MODEL", "local")


def answer_llm(question: str) -> dict[str, Any]:
    contexts = retrieve(question)
    if not contexts:
        return {"answer": NOT_FOUND, "contexts": []}
    with _client_lock:   # the first call may start the local model; do it once
        client, model = _chat_client()
    reference = "\n\n".join(f"[{i + 1}] {c}" for i, c in enumerate(contexts))
    completion = client.chat.completions.create(
        model=model, temperature=0.0, max_tokens=256,
        messages=[{"role": "system", "content": SYSTEM_PROMPT},
                  {"role": "user", "content": f"参考资料：\n{reference}\n\n用户问题：{question}"}])
    return {"answer": (completion.choices[0].message.content or "").strip(), "contexts": contexts}


def answer(question: str, mode: str | None = None) -> dict[str, Any]:
    """Mode: the argument, else $RUBRICEVAL_TARGET_MODE, else "llm" when $RUBRICEVAL_TARGET_BASE_URL is set,
    else "extractive"."""
    chosen = mode or os.environ.get("RUBRICEVAL_TARGET_MODE") or (
        "llm" if os.environ.get("RUBRICEVAL_TARGET_BASE_URL") else "extractive")
    if chosen == "extractive":
        return answer_extractive(question)
    if chosen == "llm":
        return answer_llm(question)
    raise ValueError(f"unknown mode {chosen!r}; use 'extractive' or 'llm'")


def serve(port: int, mode: str | None = None) -> None:
    """Serve the HTTP contract (POST {"question", "id"} → {"answer", "contexts"}) on 127.0.0.1:port."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 — http.server's naming
            try:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                reply, status = answer(str(body["question"]), mode), 200
            except (KeyError, ValueError, TypeError) as exc:
                reply, status = {"error": f"bad request: {exc}"}, 400
            payload = json.dumps(reply, ensure_ascii=False).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args: Any) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    print(f"rag_target serving on http://127.0.0.1:{port}/ (mode {mode or 'auto'}); Ctrl-C to stop")
    try:
        server.serve_forever()
    finally:
        server.server_close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("question", nargs="?", help="ask one question and print the JSON reply")
    parser.add_argument("--serve", type=int, metavar="PORT", help="serve the HTTP contract on 127.0.0.1:PORT")
    parser.add_argument("--mode", choices=("extractive", "llm"))
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, args.mode)
    elif args.question:
        print(json.dumps(answer(args.question, args.mode), ensure_ascii=False, indent=2))
    else:
        parser.error("give a question or --serve PORT")
