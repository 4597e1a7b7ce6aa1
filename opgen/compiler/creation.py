"""Array creation in compiled code: ``np.zeros((n, d), dtype=np.float32)``, ``torch.zeros(n, d)``,
``np.full((n, n), -np.inf)``, ``np.arange(n)``, ``torch.arange(0, n, 2)``.

The native ops (specs/numpy/zeros.yaml, ones, full, arange) take the shape as one list[int] (arange:
start, stop and step) and have one overload per result dtype, which no argument carries: as for a cast
(opgen.compiler.casts), the dtype is read here, when the function compiles, and selects the overload
(``ir.Op.result``). Here each library's spelling is brought to those parameters before the call binds:

- the shape: NumPy's int or list (``np.zeros(n)``, ``np.zeros((n, d))``), torch's varargs or one list
  (``torch.zeros(n, d)``, ``torch.zeros((n, d))``), always a list[int];
- the dtype: ``dtype=`` a constant (np.float32, torch.float32, "float32"), else the library's default:
  NumPy float64 and torch float32 (torch.get_default_dtype()) for zeros and ones; full's follows its
  fill value (an int gives int64, a bool bool, a float the default float), as both libraries infer it;
- arange's bounds: one argument is stop, two are start and stop, step defaults to 1 (NumPy's and
  torch's own rule); all ints give int64, a float among them the default float.

``np.zeros_like(x)`` and ``np.ones_like(x)`` (and torch's) are ``np.zeros(x.shape, dtype=x.dtype)``, as
NumPy documents them: they compile to the sized op, not to kernels of their own, since a kernel whose
result depends on its input's shape alone is one the spec lint cannot tell from a constant
(opgen/spec/lint.py). ``dtype=`` picks another dtype, as in the libraries. full_like depends on its fill
value and has its own spec.

torch.arange with float bounds is refused: torch computes start + i*step in double where NumPy fills
start + i*delta (delta = (start + step) - start, in the result's dtype), so its floats are another
op's; its int results are NumPy's exactly. Other keywords (order=, device=, requires_grad=) have no
native counterpart and are refused, as for any library call.
"""

from __future__ import annotations

from dataclasses import dataclass

from opgen.compiler import ir
from opgen.compiler.types import BOOL, FLOAT, INT
from opgen.spec.dtypes import DTYPES


@dataclass(frozen=True)
class Creation:
    kind: str  # sized (a shape argument), full (a shape and a fill value), arange, like (an array's shape)
    library: str  # numpy | torch: whose spelling and default dtype
    op: str = ""  # like: the sized op it compiles to


CREATION_OPS: dict[str, Creation] = {
    "numpy.zeros": Creation("sized", "numpy"), "numpy.ones": Creation("sized", "numpy"),
    "numpy.full": Creation("full", "numpy"), "numpy.arange": Creation("arange", "numpy"),
    "torch.zeros": Creation("sized", "torch"), "torch.ones": Creation("sized", "torch"),
    "torch.full": Creation("full", "torch"), "torch.arange": Creation("arange", "torch"),
    "numpy.zeros_like": Creation("like", "numpy", "numpy.zeros"), "numpy.ones_like": Creation("like", "numpy", "numpy.ones"),
    "torch.zeros_like": Creation("like", "torch", "torch.zeros"), "torch.ones_like": Creation("like", "torch", "torch.ones"),
    # empty: the values are unspecified, so zeros are one right answer (and a deterministic one)
    "numpy.empty": Creation("sized", "numpy", "numpy.zeros"), "torch.empty": Creation("sized", "torch", "torch.zeros"),
    "numpy.empty_like": Creation("like", "numpy", "numpy.zeros"), "torch.empty_like": Creation("like", "torch", "torch.zeros"),
}
LIKE_KEYWORD = {"numpy": "a", "torch": "input"}
# The float dtype a call that names none gets: NumPy's float64, torch's default dtype.
DEFAULT_FLOAT = {"numpy": "float64", "torch": "float32"}
SHAPE_KEYWORD = {"numpy": "shape", "torch": "size"}
ARANGE_KEYWORDS = {"numpy": ("start", "stop", "step"), "torch": ("start", "end", "step")}


class CreationError(Exception):
    """What is wrong with a creation call, and how to fix it (the caller adds file:line)."""

    def __init__(self, message: str, hint: str):
        super().__init__(message)
        self.hint = hint


def prepare(e: ir.Op, type_of) -> None:
    """Bring ``e`` (a call of a CREATION_OPS name) to its native parameters, in place, and set the dtype
    that selects its overload (``e.result``). ``type_of(expr)`` types an argument."""
    c = CREATION_OPS[e.op]
    kwargs = dict(e.kwargs)
    dtype = _dtype(e, kwargs.pop("dtype", None))
    if c.kind == "like":
        given = kwargs.pop(LIKE_KEYWORD[c.library], None)
        if len(e.args) + (given is not None) != 1:
            raise CreationError(f"{e.source}: {e.op} takes one array (and dtype=)", "write np.zeros_like(x)")
        a = given if given is not None else e.args[0]
        t = type_of(a)
        if t.kind != "tensor":
            raise CreationError(f"{e.source}: {e.op} takes an array, not a {t}", "pass an array or tensor")
        if kwargs:
            raise CreationError(f"{e.source}: {next(iter(kwargs))}= has no counterpart in the native {c.op}",
                                "leave it out (compiled arrays are C-ordered, on the CPU, without autograd)")
        e.op, e.args, e.kwargs = c.op, [ir.Builtin(e.line, "shape", [a])], {}
        e.result = dtype or t.dtype.name
        e.library_bound = True
        return
    if c.kind == "arange":
        args = _arange_args(e, c, kwargs)
        types = [type_of(a) for a in args]
        if any(t not in (INT, FLOAT) for t in types):
            raise CreationError(f"{e.source}: arange's bounds must be ints or floats (got "
                                f"{', '.join(str(t) for t in types)})", "pass numbers")
        if dtype is None:
            dtype = "int64" if all(t == INT for t in types) else DEFAULT_FLOAT[c.library]
        if c.library == "torch" and dtype != "int64":
            raise CreationError(f"{e.source}: torch.arange with a float result is not supported by opgen compile "
                                "(torch computes start + i*step in double; the native arange is NumPy's)",
                                "write np.arange(...) with a NumPy dtype, or int bounds for an int64 arange")
        e.args, e.kwargs = args, {}
    else:
        shape = _shape_arg(e, c, kwargs, type_of)
        args = [shape]
        if c.kind == "full":
            fill = kwargs.pop("fill_value", None)
            if len(e.args) > 2 or len(e.args) == 2 and fill is not None:
                raise CreationError(f"{e.source}: full takes the shape and the fill value by position, then "
                                    "keywords", "write np.full(shape, value, dtype=...)")
            if fill is None and len(e.args) == 2:
                fill = e.args[1]
            if fill is None:
                raise CreationError(f"{e.source}: full needs a fill value", "write np.full(shape, value)")
            args.append(fill)
            if dtype is None:
                t = type_of(fill)
                dtype = {INT: "int64", BOOL: "bool"}.get(t, DEFAULT_FLOAT[c.library])
        elif dtype is None:
            dtype = DEFAULT_FLOAT[c.library]
        if kwargs:
            raise CreationError(f"{e.source}: {next(iter(kwargs))}= has no counterpart in the native {e.op}",
                                "leave it out (compiled arrays are C-ordered, on the CPU, without autograd)")
        e.args, e.kwargs = args, {}
        if c.op:  # empty: compiled as zeros
            e.op = c.op
    e.result = dtype
    e.library_bound = True  # bound here: the library's varargs and defaults are the ones above


def _dtype(e: ir.Op, value: ir.Expr | None) -> str | None:
    if value is None or isinstance(value, ir.Const) and value.value is None:
        return None
    if isinstance(value, ir.DTypeConst):
        return value.dtype
    if isinstance(value, ir.Const) and isinstance(value.value, str) and value.value in DTYPES:
        return value.value
    raise CreationError(f"{e.source}: the dtype must be a constant such as np.float32, torch.float32 or 'float32'",
                        "write the dtype itself; it selects the kernel when the function compiles")


def _shape_arg(e: ir.Op, c: Creation, kwargs: dict[str, ir.Expr], type_of) -> ir.Expr:
    """The shape as one list[int] expression: NumPy's first argument (an int or a list), torch's sizes
    (varargs, or one list)."""
    keyword = SHAPE_KEYWORD[c.library]
    given = kwargs.pop(keyword, None)
    positional = e.args[:1] if c.library == "numpy" or c.kind == "full" else list(e.args)
    if given is not None:
        if positional:
            raise CreationError(f"{e.source}: the shape is given twice ({keyword}= and by position)",
                                "pass it once")
        positional = [given]
    if not positional:
        if c.library == "torch":  # torch.zeros() is a 0-d tensor
            return ir.ListLit(e.line, [])
        raise CreationError(f"{e.source}: the shape is missing", "write np.zeros((n, d))")
    if len(positional) == 1:
        t = type_of(positional[0])
        if t == INT:  # np.zeros(n), torch.zeros(n): a vector
            return ir.ListLit(e.line, positional)
        if t.kind == "list" and t.elem == INT:
            return positional[0]
        raise CreationError(f"{e.source}: the shape must be an int or a list/tuple of ints (got {t})",
                            "write the sizes as ints: (n, d)")
    for a in positional:
        if type_of(a) != INT:
            raise CreationError(f"{e.source}: each size must be an int (got {type_of(a)})", "write ints")
    return ir.ListLit(e.line, positional)


def _arange_args(e: ir.Op, c: Creation, kwargs: dict[str, ir.Expr]) -> list[ir.Expr]:
    """(start, stop, step) as Python binds arange: one positional argument is stop."""
    names = ARANGE_KEYWORDS[c.library]
    pos = list(e.args)
    if len(pos) > 3:
        raise CreationError(f"{e.source}: arange takes at most start, stop and step", "pass at most three")
    bound: dict[str, ir.Expr] = {}
    if len(pos) == 1 and names[0] not in kwargs:
        bound[names[1]] = pos[0]
    else:
        bound.update(zip(names, pos))
    for k in list(kwargs):
        if k in names:
            if k in bound:
                raise CreationError(f"{e.source}: {k} is given twice", "pass it once")
            bound[k] = kwargs.pop(k)
    if kwargs:
        raise CreationError(f"{e.source}: {next(iter(kwargs))}= has no counterpart in the native arange",
                            "leave it out (compiled arrays are on the CPU, without autograd)")
    if names[1] not in bound:
        raise CreationError(f"{e.source}: arange needs a stop", "write np.arange(n) or np.arange(start, stop)")
    start = bound.get(names[0], ir.Const(e.line, 0))
    step = bound.get(names[2], ir.Const(e.line, 1))
    return [start, bound[names[1]], step]


def is_creation(op: str) -> bool:
    return op in CREATION_OPS


