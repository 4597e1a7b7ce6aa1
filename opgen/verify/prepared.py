"""Arguments a caller prepares once with another op and hands to every call (a domain's
``prepared_by``): a tokenizer's vocabulary laid out as a lookup table at load, say. The gate
draws the preparing op's own arguments, runs that op's reference on them, and passes the result,
so a kernel is tested on exactly the values its contract promises it, and on no others."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import numpy as np

from opgen.errors import OpgenError
from opgen.project import Project
from opgen.references import DeclaredError, call_declaring
from opgen.spec.model import Overload, Spec, load_all, load_spec
from opgen.spec.nativetypes import NativeType


class NotPrepared(Exception):
    """The preparing op refused the drawn arguments (an error its overload declares)."""


@functools.cache
def preparing(op: str, specs_root: Path | None = None) -> tuple[Spec, Overload]:
    """The spec and the one overload of the op a ``prepared_by`` names."""
    root = specs_root or Project.locate().specs
    path = root.joinpath(*op.split(".")).with_suffix(".yaml")
    spec = load_spec(path) if path.is_file() else load_all(root).get(op)
    if spec is None or spec.op != op:
        raise OpgenError(f"prepared_by names {op!r}, which no spec under {root} defines",
                         hint="name the op whose result the argument is (its spec, e.g. specs/opgen/text/...yaml)")
    if len(spec.overloads) != 1:
        raise OpgenError(f"prepared_by names {op!r}, which has {len(spec.overloads)} overloads",
                         hint="a preparing op has exactly one overload, so the argument's contract is one result")
    return spec, spec.overloads[0]


def prepare(op: str, args: dict[str, Any], param_type: NativeType) -> Any:
    """``op``'s reference result for ``args`` (its parameters by name), as ``param_type`` takes it;
    NotPrepared where the reference raises an error the preparing overload declares."""
    spec, overload = preparing(op)
    try:
        result = call_declaring(spec.reference_for(overload), [args[p.name] for p in overload.sig.params],
                                {r.error for r in overload.raises})
    except DeclaredError as exc:
        raise NotPrepared(str(exc)) from None
    if param_type.is_tensor:
        return np.asarray(result, dtype=param_type.dtype.np).reshape(-1)
    return list(result)
