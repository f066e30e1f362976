"""Domain errors. Adapters turn them into exit codes, HTTP statuses and MCP errors."""

from __future__ import annotations


class EngramError(Exception):
    """An error with a message a user can act on."""

    code = "error"

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message + (f"\nhint: {self.hint}" if self.hint else "")


class NotFoundError(EngramError):
    """Something named by the user does not exist; `suggestions` says what might be meant."""

    code = "not_found"

    def __init__(self, message: str, suggestions: list[str] | None = None) -> None:
        self.suggestions = suggestions or []
        hint = ("did you mean: " + ", ".join(self.suggestions)) if self.suggestions else None
        super().__init__(message, hint)


class InvalidInputError(EngramError):
    """The request is malformed (bad query syntax, bad argument)."""

    code = "invalid_input"


class ConflictError(EngramError):
    """The target changed since it was read, or already exists."""

    code = "conflict"


class UnavailableError(EngramError):
    """A capability is not available here (no model, no sqlite-vec, sync not configured)."""

    code = "unavailable"
