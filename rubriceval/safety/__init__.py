"""Defences for untrusted text (answers, contexts, transcripts, uploaded datasets): one module per defence.

folding          comparison view (NFKC, case, invisible characters, homoglyphs) with a map back to the original
control_tokens   chat-template control-token look-alikes, defused before any judge sees them
delimiters       look-alikes of the prompt's `<<<…>>>` block delimiters
untrusted        neutralise_untrusted: the one step the prompt environment's `fence` filter applies
spreadsheet      CSV/Excel formula-injection escaping that the project's own reader undoes
manipulation     deterministic detector of judge-directed text; manipulation_policy applies a rubric's policy
pii / redaction  personal data found and masked with typed placeholders, restorable for logged-in experts
entities         the built-in entities conversation checks look for (order/tracking numbers, money, dates, URLs,
                 and pii's kinds), with the near misses they keep apart (订单号 vs 手机号, 元旦 vs 元)

See docs/security.md for what each defence covers and what it does not.
"""
