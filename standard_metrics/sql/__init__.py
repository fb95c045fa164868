"""What the NL2SQL metrics (`datacompy_score`, `llm_sql_equivalence`) share: reading the two SQL texts of a sample
(`statement`: one read-only query, parsed and normalised with sqlglot), running them against the sample's database
without any write access (`readonly`), and where that database comes from (`source`). Options: `options.SqlOptions`.
"""
