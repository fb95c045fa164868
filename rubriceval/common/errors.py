"""One error type for bad user input: it always says where (file, line, field) and what to do."""
from __future__ import annotations


class RubricEvalError(Exception):
    """A user-facing error. The CLI prints it on one line, without a traceback."""

    def __init__(self, message: str, *, file: str | None = None, line: int | None = None,
                 field: str | None = None, hint: str | None = None):
        self.message = message
        self.file = file
        self.line = line
        self.field = field
        self.hint = hint
        super().__init__(self.format())

    def format(self) -> str:
        where = ""
        if self.file:
            where = str(self.file)
            if self.line is not None:
                where += f":{self.line}"
        if self.field:
            where += (" " if where else "") + f"[{self.field}]"
        text = f"{where}: {self.message}" if where else self.message
        if self.hint:
            text += f" (hint: {self.hint})"
        return text


class DatasetError(RubricEvalError):
    """A dataset file cannot be read as samples."""


class RubricError(RubricEvalError):
    """A rubric file is invalid."""


class ConfigError(RubricEvalError):
    """Judge/embedder configuration is invalid."""
