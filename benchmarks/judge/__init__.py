"""Judge benchmarks (`rubriceval benchmark-judge`) and the labelled data they ship: how far a judge agrees with people,
per judge mode. Results feed rubric files' measured: blocks and docs/benchmarks.md."""
