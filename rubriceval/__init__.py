"""rubriceval: business rubrics + RAG metrics for customer-service chatbots.

Pipeline (one module per step):
  rubric/ (YAML → Rubric) → prompt/ (Rubric + Sample → messages) → judge/ (messages → raw text → parsed verdict)
  → verdict.py (score | unscored-with-reason) → store/ (SQLite runs) → report/ and ui/.
"""
__version__ = "0.1.0"


def evaluate(*args, **kwargs):
    """Python API; see rubriceval.api.evaluate."""
    from rubriceval.api import evaluate as _evaluate

    return _evaluate(*args, **kwargs)
