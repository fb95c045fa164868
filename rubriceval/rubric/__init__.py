"""Stage 1 — rubrics: the YAML a QA lead writes, loaded into typed models with file:line [field] errors, linted by
`rubriceval validate`, versioned by content hash."""
