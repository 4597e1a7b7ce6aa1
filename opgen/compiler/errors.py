"""The compiler's errors: each names file:line, what is wrong, and how to fix it."""

from __future__ import annotations

from opgen.errors import OpgenError


class CompileError(OpgenError):
    """Source the compiler cannot translate (outside the subset, or ill-typed)."""


class MissingOp(CompileError):
    """An op with no verified kernel for the argument types; the hint says how to get one."""

    def __init__(self, message: str, *, op: str, arg_types: list[str], command: str | None,
                 where: str | None = None, hint: str | None = None):
        self.op = op
        self.arg_types = arg_types
        self.command = command  # the `opgen synthesize ...` that would supply it, when one can
        super().__init__(message, where=where, hint=hint)
