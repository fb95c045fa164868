# Two commands for a newcomer: `make demo` and `make test`. Both set up .venv themselves.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
RE     := $(VENV)/bin/rubriceval
export GRADIO_ANALYTICS_ENABLED := False
export HF_HUB_OFFLINE := 1
export HF_HUB_DISABLE_TELEMETRY := 1

# The demo's first run took 58.5 s on an idle 2-core machine with the embedded judge (45 calls, model load included).
# With the four rubrics that meet their trust bar (below), a cold run plans 39 judge calls and made 37 (34 rubric, 3
# scorecard): 24 min 20 s on a shared 2-core machine at load 12-13, 12 s warm (all from the judge cache); the judge
# runs on the CPU, so load from other work stretches it (docs/benchmarks.md). The
# progress bar shows judge calls against the plan, calls/s and an ETA. llama.cpp processes ~20–50 prompt tokens/s
# here, so prompt tokens decide. It shows every capability on few, representative rows
# (datasets/demo_zh.jsonl: 4 single-turn answers incl. a prompt injection, 1 conversation), with only the rubrics
# whose agreement with people, measured on the embedded judge in the mode they run there (their measured: block),
# meets their trust bar's κ (0.6): process_compliance 0.70 and emotional_soothing 0.83 (checklist_fitted),
# identity_verification 0.85 (predicates), and required_link (deterministic checks, no judge). Left out:
# policy_compliance (best measured there κ 0.24 [0.00, 0.42], checklist) and closing (never measured on labelled
# data). Each rubric runs the mode measured best on the judge (no --judge-mode; DEMO_JUDGE_MODE=holistic forces one):
# - business rubrics with deterministic checks, judged as yes/no questions with p(yes) and weights fitted for the
#   embedded judge — prompts that share each sample as a prefix, so the server processes every sample once;
# - a conversation rubric (identity verification) in predicates mode: entities, phrases and a yes/no question
#   about one turn where the wording varies, stopping at the first decisive turn;
# - RAG metrics without an LLM (context precision/recall against reference contexts, ROUGE-L, BLEU); any metric of
#   `rubriceval metrics` can be added, e.g. DEMO_METRICS=$(DEMO_METRICS),faithfulness (minutes more);
# - the HTML/Excel/Markdown report.
DEMO_DATA ?= datasets/demo_zh.jsonl
DEMO_RUBRICS ?= process_compliance,emotional_soothing,required_link,identity_verification
DEMO_METRICS ?= nonllm_context_precision,nonllm_context_recall,rouge_l,bleu
DEMO_JUDGE_MODE ?=
# The e-commerce QA scorecard (质检评分表, scorecards/): a 100-point total per conversation, mostly deterministic
# items; its few yes/no questions read the transcript the conversation rubric's per-turn questions read.
DEMO_SCORECARDS ?= ecommerce_qa_zh

.PHONY: setup demo test test-fast browser-deps postgres-deps bench bench-batch bench-scale clean

setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml setup.py
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[local,ui,test]'
	touch $@

# Debian's Chromium for the real-browser tests (Playwright drives it; it never downloads a browser). Best effort:
# without root or apt-get (or if the install fails) it says so and `make test` goes on; the browser tests then skip.
browser-deps:
	@if command -v chromium >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then \
	  echo "note: no chromium, and apt-get is not usable here (needs root on Debian); browser tests will be skipped"; \
	else \
	  echo "installing Debian chromium for browser tests…"; \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver fonts-wqy-microhei fonts-noto-color-emoji) >/dev/null 2>&1 \
	  || echo "warning: could not install chromium with apt-get; browser tests will be skipped"; \
	fi

# Debian's PostgreSQL server binaries for the store tests on a real server (each test session runs `initdb` into a
# temporary folder and listens on 127.0.0.1 only; nothing is started here). Best effort, as for chromium: without
# root or apt-get the PostgreSQL half of the store tests is skipped, with the reason.
postgres-deps:
	@if ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then \
	  echo "note: no PostgreSQL server binaries, and apt-get is not usable here; PostgreSQL store tests will be skipped"; \
	else \
	  echo "installing Debian postgresql for the store tests…"; \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql) >/dev/null 2>&1 \
	  || echo "warning: could not install postgresql with apt-get; PostgreSQL store tests will be skipped"; \
	fi

demo: setup
	$(RE) validate rubrics
	$(RE) scorecard validate scorecards
	$(RE) run $(DEMO_DATA) --rubrics rubrics --only $(DEMO_RUBRICS) $(if $(DEMO_JUDGE_MODE),--judge-mode $(DEMO_JUDGE_MODE)) \
	  --metrics $(DEMO_METRICS) --scorecards scorecards --only-scorecards $(DEMO_SCORECARDS) \
	  --store out/runs.sqlite --name demo-$$(date +%Y%m%d-%H%M%S) --out out/demo
	$(RE) report latest --store out/runs.sqlite --out out/demo

test: setup browser-deps postgres-deps
	$(PY) -m pytest -q -ra

test-fast: setup postgres-deps
	$(PY) -m pytest -q -m "not local_model and not browser"

bench: setup
	$(PY) benchmarks/pipeline/run_bench.py

# Batch API at scale on the loopback stub: 100,000 judgments submitted and collected, 10,000 online beside
# (docs/benchmarks.md). `nice`: the machine may be shared.
bench-batch: setup
	nice -n 10 $(PY) benchmarks/pipeline/batch_bench.py --n 100000 --online-n 10000

# Flat memory at scale (issue 19): ROWS synthetic Chinese rows (3 contexts), a checks-and-string-metrics run, then
# report, compare, gate and opening the audit queue, each step's peak RSS and wall time (docs/benchmarks.md).
ROWS ?= 1000000
bench-scale: setup
	nice -n 10 $(PY) benchmarks/pipeline/scale_bench.py --rows $(ROWS)

clean:
	rm -rf out .pytest_cache
