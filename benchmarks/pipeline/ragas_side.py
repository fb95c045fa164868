"""Run Ragas's metrics over a JSONL dataset against an OpenAI-compatible base URL; print one JSON result line.

Runs inside benchmarks/pipeline/.venv-ragas (see ragas_env.py), never in the project venv: it imports only the standard library
and Ragas (+ its LangChain dependencies).

    benchmarks/pipeline/.venv-ragas/bin/python benchmarks/pipeline/ragas_side.py --dataset rows.jsonl --base-url http://127.0.0.1:PORT/v1 \
        --metrics answer_correctness,faithfulness --workers 16

Output (stdout, last line): {"wall_s", "cpu_s", "import_s", "rows", "scores": {metric: [..]}, "nan": {metric: n},
"errors": [...], "max_rss_mb", "ragas_version"}. `wall_s` is the `ragas.evaluate()` call alone, the same span
the project side measures around `rubriceval.run.evaluate.evaluate()`.
"""
from __future__ import annotations

import argparse
import json
import logging
import math
import os
import resource
import sys
import time

os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")   # no analytics calls to the internet during a benchmark

_started_import = time.perf_counter()
from langchain_openai import ChatOpenAI, OpenAIEmbeddings  # noqa: E402
from ragas import EvaluationDataset, RunConfig, SingleTurnSample, evaluate  # noqa: E402
from ragas import __version__ as ragas_version  # noqa: E402
from ragas.embeddings import LangchainEmbeddingsWrapper  # noqa: E402
from ragas.llms import LangchainLLMWrapper  # noqa: E402
from ragas.metrics import AnswerCorrectness, AnswerRelevancy, ContextPrecision, ContextRecall, Faithfulness  # noqa: E402

IMPORT_S = time.perf_counter() - _started_import

METRIC_CLASSES = {
    "answer_correctness": AnswerCorrectness,
    "faithfulness": Faithfulness,
    "answer_relevancy": AnswerRelevancy,
    "context_precision": ContextPrecision,
    "context_recall": ContextRecall,
}


class _ErrorCollector(logging.Handler):
    """Ragas logs (rather than raises) a failed metric job when raise_exceptions=False; keep those messages."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage()[:300])


def _dataset(path: str) -> EvaluationDataset:
    samples = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            samples.append(SingleTurnSample(user_input=row["question"], response=row["answer"],
                                            retrieved_contexts=row["contexts"], reference=row["ground_truth"]))
    return EvaluationDataset(samples=samples)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dataset", required=True)
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--metrics", default=",".join(METRIC_CLASSES))
    parser.add_argument("--workers", type=int, default=16, help="RunConfig(max_workers=…)")
    parser.add_argument("--model", default="stub")
    args = parser.parse_args()

    names = [m for m in args.metrics.split(",") if m]
    dataset = _dataset(args.dataset)
    run_config = RunConfig(max_workers=args.workers, timeout=180, max_retries=3)
    # Client-side retries stay off: Ragas's RunConfig retries (tenacity) are its retry policy, as in a default setup.
    chat = ChatOpenAI(model=args.model, base_url=args.base_url, api_key="not-needed", temperature=0,
                      max_retries=0, timeout=180)
    # check_embedding_ctx_length=False: otherwise LangChain tokenizes with tiktoken, which downloads its
    # vocabulary at run time (and sends token ids instead of text).
    embedder = OpenAIEmbeddings(model=args.model, base_url=args.base_url, api_key="not-needed",
                                check_embedding_ctx_length=False, max_retries=0)
    llm = LangchainLLMWrapper(chat, run_config=run_config)
    embeddings = LangchainEmbeddingsWrapper(embedder, run_config=run_config)
    metrics = [METRIC_CLASSES[name]() for name in names]

    collector = _ErrorCollector()
    logging.getLogger("ragas").addHandler(collector)
    started, cpu_started = time.perf_counter(), time.process_time()
    result = evaluate(dataset, metrics=metrics, llm=llm, embeddings=embeddings, run_config=run_config,
                      show_progress=False, raise_exceptions=False)
    wall_s, cpu_s = time.perf_counter() - started, time.process_time() - cpu_started

    frame = result.to_pandas()
    scores = {name: [None if (v is None or (isinstance(v, float) and math.isnan(v))) else float(v)
                     for v in frame[name].tolist()] for name in names}
    nan = {name: sum(v is None for v in values) for name, values in scores.items()}
    print(json.dumps({
        "side": "ragas", "ragas_version": ragas_version, "rows": len(dataset), "workers": args.workers,
        "metrics": names, "wall_s": wall_s, "cpu_s": cpu_s, "import_s": IMPORT_S, "scores": scores, "nan": nan,
        "errors": collector.messages[:20], "error_count": len(collector.messages),
        "max_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }, ensure_ascii=False))


if __name__ == "__main__":
    sys.exit(main())
