"""The run stage: evaluate() and `rubriceval run` — plan the judgments (planning.py, the dry run), judge them in
windows, resumably (runner.py, pool.py for worker processes), store every verdict."""
