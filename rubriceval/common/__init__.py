"""Pieces every stage uses: the one user-error type naming file, line and field (errors.py) and lazy package exports
(lazy.py)."""
