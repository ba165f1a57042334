"""The kit's one error type.

Every error a user can cause (bad config, bad arguments, a store in the wrong place) is raised as
`DonegateError` with what is wrong and how to fix it; `cli.main` turns it into one or two lines and an
exit code. Anything else is a kit bug: its traceback goes to the log file, never to the user.
"""

from __future__ import annotations


class DonegateError(Exception):
    """A problem the user can fix. `str()` is the message; `fix` says what to do."""

    def __init__(self, message: str, fix: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.fix = fix

    def __str__(self) -> str:
        if self.fix:
            return f"{self.message}\n  fix: {self.fix}"
        return self.message


class ConfigError(DonegateError):
    """`donegate.yaml` is unreadable or does not match the schema (the message names the key path)."""


class StoreError(DonegateError):
    """The acceptance store is missing, misplaced or does not match its manifest."""
