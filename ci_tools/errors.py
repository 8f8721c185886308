"""Errors that end a command before any finding can be reported.

A :class:`UsageError` is the user's to fix (bad flag, unknown revision,
missing file the command needs) and maps to exit code 2. Anything else that
escapes is an internal failure (exit code 3).
"""

from __future__ import annotations


class UsageError(Exception):
    """Bad input that prevents the command from running at all.

    The message must say what was found, what was expected and, where it
    helps, what to do about it.
    """

    def __init__(self, message: str, *, path: str | None = None, line: int = 0) -> None:
        self.path = path
        self.line = line
        where = ""
        if path:
            where = f"{path}:{line}: " if line else f"{path}: "
        super().__init__(f"{where}{message}")
