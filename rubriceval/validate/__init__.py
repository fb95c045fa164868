"""`rubriceval validate`: every finding about a rubric file (schema, templates rendered in the sandbox, checklist
rules, knowledge files, measured blocks), each naming file, line and field. It sits above the prompt and store layers
because validating a template means rendering it, and a `store:` source is read through the run store."""
