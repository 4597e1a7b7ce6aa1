"""Whether an array's item assignment may be compiled as a rebinding.

Python writes ``a[mask] = v`` into the array object ``a`` names; every other name holding that
object, or a view of its memory (``b = a``, ``row = a[0]``, ``t = a.T``, ``for r in a``), sees the
change, and so does the caller when ``a`` is (a view of) an argument. Compiled arrays are values:
the assignment makes a new array and binds it to ``a`` (opgen.masked_fill), which the other names
never see. The two agree exactly when no other name can hold ``a``'s object or memory, which is
what this module proves, conservatively, from the typed IR:

- every value ever bound to ``a`` is a new array in Python (a copy, an arithmetic or library
  result, a gather, a cast to another dtype), never a parameter, another name, a view (basic
  indexing, a transpose, reshape and the other view-making ops) or a helper's result;
- ``a`` itself is never bound to another name, alone or through a view, a tuple, a loop over it
  or a helper's parameter;
- a NumPy ``a`` is always an ndarray, even 0-d (a copy, or a mask's rows): NumPy gives a scalar for
  a ufunc's or a reduction's 0-d result, and item assignment into that raises TypeError.

Anything this module cannot prove is refused with the fix: copy first (``y = x.copy()``).
"""

from __future__ import annotations

from opgen.compiler import casts, flavor, ir
from opgen.compiler.errors import CompileError
from opgen.spec.shapes import CREATION

# NumPy's functions that make an array like another's shape: always an ndarray, even 0-d.
ARRAY_LIKE = {"numpy.full_like", "numpy.zeros_like", "numpy.ones_like", "numpy.empty_like"}
# Shape rules of the ops whose results NumPy and torch may return as views of their first input.
VIEW_RULES = {"permute", "reshape", "expand_dims", "squeeze", "broadcast_to"}


def shares(e: ir.Expr) -> set[str]:
    """The names whose array object (or memory) the value of ``e`` may be, or be a view of, in Python."""
    if isinstance(e, ir.Var):
        return {e.name}
    if isinstance(e, ir.Const):
        return set()
    if isinstance(e, (ir.Index, ir.Subscript)):
        if e.gather is not None:  # integer-array or mask indexing: NumPy and torch copy
            return set()
        return shares(e.base)
    if isinstance(e, ir.Op) and _new_array(e):
        return set()
    found: set[str] = set()  # anything else (a helper's result, a conditional, a view): any of its parts
    for c in e.children:
        found |= shares(c)
    return found


def _new_array(e: ir.Op) -> bool:
    """Whether the op's result is a new array in Python (never its input, nor a view of it)."""
    if e.native == "same":  # x.copy() and the like are new; x.astype(x's own dtype) may be x (torch's .to)
        return bool(getattr(e, "fresh_copy", False))
    if e.native:
        return False
    if e.op == casts.CAST_OP:  # to another dtype: a new array in both libraries
        return True
    if e.spec is None or e.overload is None:
        return False
    return not any(r.kind in VIEW_RULES for r in e.overload.rules.values())


def always_array(e: ir.Expr) -> bool:
    """Whether NumPy gives an ndarray for ``e`` even where it is 0-d: a copy (np.copy of a NumPy scalar
    is a 0-d array), an array made from a shape (np.zeros, np.full_like) or a mask's rows (at least 1-d). A ufunc, a reduction or basic indexing gives a NumPy
    scalar for a 0-d result, and item assignment into a NumPy scalar raises TypeError."""
    if isinstance(e, ir.Op) and getattr(e, "fresh_copy", False):
        return True
    if isinstance(e, ir.Op) and e.overload is not None and e.overload.rule is not None and \
            (e.overload.rule.kind in CREATION or e.op in ARRAY_LIKE):  # np.zeros(()) is a 0-d array
        return True
    return isinstance(e, (ir.Index, ir.Subscript)) and isinstance(e.gather, ir.Op) and e.gather.native == "bounded_rows"


def check(fn: ir.Function) -> None:
    """Raise CompileError at the first array item assignment of ``fn`` that a rebinding cannot stand for."""
    writes = [s for s in ir.walk_statements(fn.body) if isinstance(s, ir.SetItem) and s.rebind]
    if not writes:
        return
    written = {s.name for s in writes}
    params = {p.name for p in fn.params}
    for s, name, value in _bindings(fn):
        held = shares(value) - {name}
        if name in written and held:
            other = sorted(held)[0]
            first = next(w for w in writes if w.name == name)
            what = "the parameter" if other in params else "the array"
            raise CompileError(
                f"{_written(first)} (line {first.line}) writes into {name} in place, and {name} may be {what} "
                f"{other} or a view of it (bound at line {s.line}): Python changes {other} too, a compiled "
                "function cannot", where=f"{fn.path}:{first.line}",
                hint=f"copy first: {name} = {other}.copy() (NumPy) or {name} = {other}.clone() (torch)")
        for w in sorted(held & written):
            first = next(x for x in writes if x.name == w)
            raise CompileError(
                f"{_written(first)} (line {first.line}) writes into {w} in place, and {name} (line {s.line}) may be "
                f"{w} or a view of it: Python changes {name} too, a compiled function cannot",
                where=f"{fn.path}:{first.line}",
                hint=f"copy it: {name} = {w}.copy() (NumPy) or {w}.clone() (torch), or write into a copy of {w}")

    # Only then (a parameter or a view is the likelier mistake): NumPy scalars where an array is 0-d.
    # Not for `a += v`: on a NumPy scalar it rebinds a in Python too, which is what compiled code does.
    item_written = {s.name for s in writes if s.augmented is None}
    for s, name, value in _bindings(fn):
        if name in item_written and not isinstance(s, ir.SetItem) and getattr(value, "flavor", None) != flavor.TORCH \
                and not always_array(value):  # a NumPy array, or one of no known library (it may be NumPy's)
            first = next(w for w in writes if w.name == name and w.augmented is None)
            raise CompileError(
                f"{name}[...] = ... (line {first.line}) writes into {name}, bound at line {s.line} to a NumPy result "
                f"that is a NumPy scalar, not an array, where it is 0-d (Python raises TypeError there)",
                where=f"{fn.path}:{first.line}",
                hint=f"copy it into an array first: {name} = np.copy(...) (a copy is an array of any shape)")


def _written(s: ir.SetItem) -> str:
    return s.augmented or f"{s.name}[...] = ..."


def _bindings(fn: ir.Function):
    """(statement, name, the expression whose value the name is bound to) for every binding of a name
    that can hold an array: assignments, unpacking (each name to the whole value: its parts may be any
    of it), loop targets (the iterated value: a row of an array is a view of it). A comprehension's
    names live only while it runs, and nothing can write an array meanwhile."""
    types = {**{p.name: p.type for p in fn.params}, **(fn.locals or {})}

    def holds_array(name: str) -> bool:
        t = types.get(name)
        return t is None or t.kind == "tensor" or (t.kind == "tuple" and any(i.kind in ("tensor", "tuple")
                                                                             for i in t.items))

    for s in ir.walk_statements(fn.body):
        if isinstance(s, (ir.Assign, ir.SetItem)) and holds_array(s.name):
            if isinstance(s, ir.Assign) or s.rebind:
                yield s, s.name, s.value
        elif isinstance(s, ir.Unpack):
            for name in ir.target_names(s.target):
                if holds_array(name):
                    yield s, name, s.value
        elif isinstance(s, ir.For):
            for name in ir.target_names(s.target):
                if holds_array(name):
                    yield s, name, s.iterable
