"""The repository's benchmarks, kept out of the installed package (a wheel ships the product only):

- judge/     how far a judge agrees with people, per judge mode (`rubriceval benchmark-judge`), and the labelled data
             it reads (judge/data/, with licences) and the rubrics it measures (judge/rubrics/);
- pipeline/  rubriceval itself: calls, tokens, speed and memory at scale, and conformance with Ragas
             (`make bench`, `make bench-batch`, `make bench-scale`).

Run them from a clone (the repository root on sys.path: `python -m benchmarks.judge.rag_zh`,
`python benchmarks/pipeline/run_bench.py`); results feed rubric files' measured: blocks and docs/benchmarks.md."""
