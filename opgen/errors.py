"""The one exception type opgen raises for anything a user can fix.

The CLI prints ``OpgenError`` cleanly (message, then the hint) and exits 1;
anything else is a bug and keeps its traceback.
"""

from __future__ import annotations


class OpgenError(Exception):
    """A user-facing error: what is wrong, where, and how to fix it."""

    def __init__(self, message: str, *, hint: str | None = None, where: str | None = None):
        self.message = message
        self.hint = hint
        self.where = where
        super().__init__(self.render())

    def render(self) -> str:
        head = f"{self.where}: {self.message}" if self.where else self.message
        return f"{head}\n  fix: {self.hint}" if self.hint else head


class SpecError(OpgenError):
    """A spec file that does not parse or validate."""


class ConfigError(OpgenError):
    """Missing or contradictory configuration (endpoint, model, paths)."""


class AwaitingAnswer(OpgenError):
    """The file-exchange provider wrote a prompt and needs an answer before going on."""


class Interrupted(BaseException):
    """The run is stopping (Ctrl-C, SIGTERM): nothing more is sent, gated or admitted.

    A BaseException, like KeyboardInterrupt, so that neither the openai client (which retries any
    Exception its transport raises as a connection error) nor instructor's re-ask loop swallows it."""
