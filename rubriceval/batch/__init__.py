"""Judging through a provider's Batch API (or an offline runner such as `vllm run-batch`): plan the requests,
write and submit JSONL files, collect the results in rounds, and turn them into verdicts through the same judge
path as online runs. See rubriceval/batch/README.md."""
