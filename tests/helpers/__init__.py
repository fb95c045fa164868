"""Helpers for this repository's tests (and the benchmarks that drive the same stores): stores with rows in them,
a private PostgreSQL server, scripted conversation runs. Not shipped: the package's own test doubles for users'
tests (StubServer, ScriptedJudge, assert_case, the gullible judge of `benchmark-judge --stub-judge`) stay in
rubriceval/testing/."""
