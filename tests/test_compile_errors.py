"""Every way `opgen compile` refuses a function, pinned by its message: constructs outside the
subset (file:line, the construct, a hint), ill-typed code, and ops with no verified kernel (the
op, the argument types and the `opgen synthesize` command that would supply one). None of
these builds anything: the errors come from the tracer and from type propagation."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest

from opgen.compiler import CompileError, MissingOp, compile_function
from opgen.project import Project
from tests.compile_support import CHECKOUT

PRELUDE = """\
import numpy as np
import numpy.typing as npt

TABLE = {"a": "x", "b": "y"}
SCALE = np.float64(2.0)


def helper(x: int) -> int:
    return x
"""


def compile_source(tmp_path: Path, body: str, project: Project | None = None) -> None:
    source = tmp_path / "f.py"
    source.write_text(PRELUDE + "\n\n" + textwrap.dedent(body))
    compile_function(project or Project(CHECKOUT), source, "f", tmp_path / "out")


def error_of(tmp_path: Path, body: str, project: Project | None = None) -> CompileError:
    with pytest.raises(CompileError) as info:
        compile_source(tmp_path, body, project)
    return info.value


FIRST = PRELUDE.count("\n") + 3  # the line of `def f` in the written file


# (name, function source, line offset from `def f`, message fragment, hint fragment)
UNSUPPORTED = [
    ("while else", "def f(n: int) -> int:\n    while n > 0:\n        n -= 1\n    else:\n        n = 1\n    return n\n", 1,
     "while ... else is not supported by opgen compile", "flag before `break`"),
    ("tuple parameter", "def f(p: tuple[int, int]) -> int:\n    return 0\n", 0,
     "a tuple parameter is not supported", "pass a list"),
    ("lambda", "def f(x: int) -> list[int]:\n    return [x, (lambda y: y)]\n", 1, "a lambda here is not supported",
     "bind it to a name"),
    ("lambda closure", "def f(x: int) -> int:\n    g = lambda y: y + x\n    return g(1)\n", 1,
     "x belongs to the enclosing function; a nested function reading it (a closure) is not supported", "parameter"),
    ("lambda name rebound", "def f(x: int) -> int:\n    g = lambda y: y\n    g = 3\n    return x\n", 1,
     "g is bound to a function and to another value in f", "another name"),
    # try/except/finally compiles; leaving a finally by return or break, exception kinds the compiled code
    # never raises, and reading the caught exception do not
    ("return in finally", "def f(x: int) -> int:\n    try:\n        y = x\n    finally:\n        return 0\n", 4,
     "return in a finally clause is not supported", "move the return after the try statement"),
    ("break in finally", "def f(x: int) -> int:\n    for i in range(x):\n        try:\n            x += 1\n"
     "        finally:\n            if x > 3:\n                break\n    return x\n", 6,
     "break in a finally clause is not supported", "move the break after the try statement"),
    ("except an unknown kind", "def f(x: int) -> int:\n    try:\n        return x\n    except OSError:\n"
     "        return 0\n", 3, "except OSError is not supported", "ValueError"),
    ("reading the caught exception", "def f(xs: list[int]) -> str:\n    try:\n        return str(xs[0])\n"
     "    except IndexError as e:\n        return str(e)\n", 3, "reading the caught exception (e)",
     "`except IndexError:`"),
    ("maybe unassigned after except", "def f(xs: list[int]) -> int:\n    try:\n        y = xs[0]\n"
     "    except IndexError:\n        pass\n    return y\n", 5, "y may be used before it is assigned", "every path"),
    ("method", "def f(x: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:\n    return x.nonzero()\n", 1,
     # a NumPy array's method is ndarray's (the array's library is known from its annotation)
     "the method x.nonzero() of a tensor[float32] is not supported by opgen compile: no spec declares "
     "ndarray.nonzero", "methods: [{name: ndarray.nonzero}]"),
    ("attribute", "def f(x: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:\n    return x.real\n", 1,
     "the attribute x.real of a tensor[float32] is not supported by opgen compile: no spec declares ndarray.real",
     "module function"),
    ("transpose of a list", "def f(xs: list[int]) -> list[int]:\n    return xs.transpose()\n", 1,
     ".T of a list[int] is not supported by opgen compile", "view of an array"),
    ("swapaxes float", "def f(x: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:\n    return np.swapaxes(x, 0.5, 1)\n", 1,
     "swapping two axes takes int axes, not a float", "two int axes"),
    ("str method", "def f(s: str) -> str:\n    return s.casefold()\n", 1,
     "the method s.casefold() of a str is not supported by opgen compile: no spec declares str.casefold",
     "str.casefold"),
    ("mixed or", "def f(a: int, s: str) -> bool:\n    return bool(a or s)\n", 1,
     "`or` of int, str: Python gives back one of the operands", "compare explicitly"),
    ("is", "def f(a: int, b: int) -> bool:\n    return a is b\n", 1, "the `is` operator is not supported", "=="),
    ("mask index", "def f(x: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:\n    return x[:, x[0] > 0]\n", 1,
     "a boolean mask after other indices", "two steps"),
    ("uint64 index array", "def f(x: npt.NDArray[np.float32], i: npt.NDArray[np.uint64]) -> npt.NDArray[np.float32]:\n"
     "    return x[i]\n", 1, "indexing with a tensor[uint64] array: opgen compile takes int64, int32", "int64 array"),
    ("tuple", "def f(x: int) -> int:\n    return x, x\n", 1, "f returns a tuple, but is annotated -> int",
     "annotate it -> tuple[...]"),
    ("tuple value", "def f(x: int) -> int:\n    t = (x, x)\n    return x\n", 1, "a tuple value here is not supported",
     "unpack"),
    ("in floats", "def f(xs: list[float], v: float) -> bool:\n    return v in xs\n", 1,
     "`in` over floats is not supported", "any(x == v for x in xs)"),
    ("global", "def f(x: int) -> int:\n    global TABLE\n    return x\n", 1, "a global statement", "module constants"),
    ("print to a file", "import io\ndef f(x: int) -> int:\n    print(x, file=io.StringIO())\n    return x\n", 2,
     "print(file=io.StringIO()) is not supported", "print to sys.stdout or sys.stderr"),
    ("print with an unknown option", "def f(x: int) -> int:\n    print(x, fil=1)\n    return x\n", 1,
     "print() with fil= is not supported", "leave it out"),
    ("print of an array", "def f(x: npt.NDArray[np.float32]) -> int:\n    print(x)\n    return 1\n", 1,
     "builtins.format has no overload taking (tensor[float32], str)", "specs/builtins/format.yaml"),
    ("an expression statement", "def f(x: int) -> int:\n    abs(x)\n    return x\n", 1, "an expression statement",
     "assign"),
    ("builtin", "def f(xs: list[int]) -> int:\n    return hash(xs)\n", 1, "the builtin hash() is not supported", "len()"),
    # key= is a lambda, a function's name, str.<method>, or d.get over d itself; its keys compare as scalars
    ("sorted key of another dict's get", "def f(xs: list[str], d: dict[str, int]) -> list[str]:\n"
     "    return sorted(xs, key=d.get)\n", 1, "key=d.get is not supported", "key=lambda x: ..."),
    ("sorted key of two parameters", "def f(xs: list[int]) -> list[int]:\n"
     "    return sorted(xs, key=lambda a, b: a)\n", 1, "a key lambda takes exactly one parameter", "key=lambda x:"),
    ("max key of two arguments", "def f(a: int, b: int) -> int:\n    return max(a, b, key=abs)\n", 1,
     "max() with key= is supported over one iterable here", "max([a, b], key=...)"),
    ("sorted key giving lists", "def f(xs: list[str]) -> list[str]:\n    return sorted(xs, key=lambda s: s.split())\n",
     1, "a list of list[str] is not supported", "numpy functions on arrays"),
    ("mixed min", "def f(a: int, b: float) -> float:\n    return min(a, b)\n", 1,
     "min() of int, float: Python returns one of its arguments unchanged", "float(n)"),
    ("recursion", "def f(x: int) -> int:\n    return down(x)\n\n\ndef down(n):\n    return 0 if n <= 0 else down(n - 1)\n",
     5, "recursion (down -> down) is not supported", "loop"),
    ("closure", "def f(x: int) -> int:\n    def g(y):\n        return x + y\n    return g(1)\n", 2,
     "x belongs to the enclosing function", "pass x as a parameter"),
    ("zip tuple", "def f(xs: list[int]) -> int:\n    for p in zip(xs, xs):\n        return 1\n    return 0\n", 1,
     "p would hold a tuple", "unpack it"),
    ("unpack count", "def f(x: int) -> int:\n    a, b = x, x, x\n    return a\n", 1,
     "too many values to unpack (expected 2, got 3)", "match the names"),
    ("range float", "def f(x: float) -> int:\n    n = 0\n    for i in range(x):\n        n += i\n    return n\n", 2,
     "range() takes ints, not a float", "pass ints"),
    ("reduction keepdims without axis", "def f(x: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:\n"
     "    return np.max(x, keepdims=True)\n", 1, "keepdims=True with no axis", "leave keepdims out"),
    ("non-literal constant", "def f(x: float) -> float:\n    return x * SCALE\n", 1,
     "SCALE (module level, line 5) is not a literal constant", "pass it as a parameter"),
    ("unannotated", "def f(x) -> int:\n    return 1\n", 0, "parameter 'x' has no type annotation", "annotate with int"),
    ("list of arrays by name", "def f(a: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:\n    xs = [a, a]\n"
     "    return np.concatenate(xs)\n", 1,
     "a list of arrays is supported by opgen compile only as a literal argument of a library call",
     "inside the call"),
    ("list of arrays of two dtypes", "def f(a: npt.NDArray[np.float32], b: npt.NDArray[np.int64]) -> "
     "npt.NDArray[np.float32]:\n    return np.concatenate([a, b])\n", 1,
     "the elements of a list of arrays must be arrays of one dtype", "one dtype"),
    ("dtype that is not one", "def f(x: npt.NDArray[np.float128]) -> int:\n    return 1\n", 0,
     "np.float128 is not a dtype opgen knows", "numpy.<dtype>"),
    ("undefined", "def f(x: int) -> int:\n    return y\n", 1, "name 'y' is not defined", "parameter"),
    ("repr of a list", "def f(xs: list[str]) -> str:\n    return f\"{xs!r}\"\n", 1,
     "repr() of a list is not supported", '"[" + ", ".join(repr(v) for v in xs) + "]"'),
    ("bool with a nested format spec", "def f(b: bool, w: int) -> str:\n    return f\"{b:>{w}}\"\n", 1,
     "formatting a bool with a spec known only at run time", "int(flag) or str(flag)"),
    ("bool with a run-time spec", "def f(b: bool, spec: str) -> str:\n    return format(b, spec)\n", 1,
     "formatting a bool with a spec known only at run time", "int(flag) or str(flag)"),
    ("tensor index as a float", "def f(x: npt.NDArray[np.float32]) -> float:\n    return x[0]\n", 1,
     "f returns tensor[float32], but is annotated -> float", "change the annotation"),
    # Optional parameters compile; reading one before a test proves it present does not (a type checker's rule)
    ("Optional read untested", "def f(x: npt.NDArray[np.float32], mask: npt.NDArray[np.float32] = None) -> "
     "npt.NDArray[np.float32]:\n    return x * mask\n", 1, "mask may be None here",
     "`if mask is not None:`"),
    ("Optional read after one branch", "import typing\ndef f(x: float, s: typing.Optional[float] = None) -> float:\n"
     "    if x > 0:\n        s = 1.0\n    return x * s\n", 4, "s may be None here", "`if s is None: s = ...`"),
    ("None default unannotated", "def f(x: float, s=None) -> float:\n    return x\n", 0,
     "parameter 's' defaults to None and has no annotation", "s: Optional[np.ndarray] = None"),
    ("None among several types", "import typing\ndef f(x: typing.Union[int, str, None]) -> int:\n    return 1\n", 1,
     "admits 2 types besides None", "Optional[T] with one T"),
    # torch idioms compiled from their Python definitions (opgen/compiler/lowerings): arguments none of
    # their forms takes, and a form whose checks fail at compile time, are reported at the call
    ("lowering without a form for the arguments", "import torch\ndef f(x: torch.Tensor) -> torch.Tensor:\n"
     "    return x.squeeze(1, 2)\n", 2, "x.squeeze(1, 2): Tensor.squeeze is compiled from its Python definition",
     "positionally or by its keywords"),
    ("lowering with a str bound", "import torch\ndef f(x: torch.Tensor) -> torch.Tensor:\n"
     "    return torch.clamp(x, 'a', 'b')\n", 2, "torch.clamp(x, 'a', 'b'): torch.clamp is compiled from its "
     "Python definition", "positionally or by its keywords"),
    ("finfo of an integer dtype", "def f(x: float) -> float:\n    return x + np.finfo(np.int64).eps\n", 1,
     "numpy.finfo() of int64 raises in Python", "use iinfo for int64"),
    ("finfo of a run-time value", "def f(x: float) -> float:\n    return np.finfo(x).eps\n", 1,
     "numpy.finfo() takes a dtype known when the function compiles", "pass the dtype itself"),
    # % formatting of a literal template is the f-string it equals; what that cannot say is refused
    ("% mapping key", "def f(n: int) -> str:\n    return '%(n)d' % {'n': n}\n", 1,
     "a mapping key, a * width or %c", "use an f-string"),
    ("% too few values", "def f(n: int) -> str:\n    return '%d %d' % (n,)\n", 1,
     "not enough arguments for format string", "a value for every field"),
    ("% too many values", "def f(n: int) -> str:\n    return '%d' % (n, n)\n", 1,
     "not all arguments converted during string formatting", "as many values"),
    ("%d of a str", "def f(s: str) -> str:\n    return '%d' % s\n", 1,
     "%d of a str raises TypeError in Python", "use %s"),
    ("Optional result", "def f(x: float) -> 'float | None':\n    return None\n", 0,
     "the return value of f: float | None may be None", "only a parameter may be Optional"),
    ("Optional list element", "import typing\ndef f(xs: list[typing.Optional[int]]) -> int:\n    return 1\n", 1,
     "parameter 'xs': typing.Optional[int] may be None", "neutral value"),
    # array creation (opgen/compiler/creation.py): what has no native counterpart
    ("creation keyword", "def f(n: int) -> npt.NDArray[np.float64]:\n    return np.zeros(n, order='F')\n", 1,
     "order= has no counterpart in the native numpy.zeros", "leave it out"),
    ("creation dtype not a constant", "def f(n: int, t: str) -> npt.NDArray[np.float64]:\n"
     "    return np.ones(n, dtype=t)\n", 1, "the dtype must be a constant such as np.float32", "write the dtype itself"),
    ("float torch.arange", "import torch\ndef f(n: int) -> npt.NDArray[np.float32]:\n"
     "    return torch.arange(0.0, 1.0, 0.1)\n", 2, "torch.arange with a float result is not supported", "np.arange"),
    ("creation shape of floats", "def f(x: float) -> npt.NDArray[np.float64]:\n    return np.zeros(x)\n", 1,
     "the shape must be an int or a list/tuple of ints (got float)", "write the sizes as ints"),
]


@pytest.mark.parametrize("name,body,offset,message,hint", UNSUPPORTED, ids=[u[0] for u in UNSUPPORTED])
def test_unsupported_construct_names_line_construct_and_fix(tmp_path: Path, name: str, body: str, offset: int,
                                                            message: str, hint: str) -> None:
    err = error_of(tmp_path, body)
    assert err.where == f"{tmp_path / 'f.py'}:{FIRST + offset}", err.render()
    assert message in err.message, err.render()
    assert err.hint and hint in err.hint, err.render()


# Code inside the subset that Python would run differently from any native translation.
ILL_TYPED = [
    ("type change", "def f(x: float) -> float:\n    y = 0\n    y = x\n    return y\n", 2,
     "y is int (line", "0.0 rather than 0"),
    ("maybe unbound", "def f(c: bool) -> int:\n    if c:\n        y = 1\n    return y\n", 3,
     "y may be used before it is assigned", "every path"),
    ("no return", "def f(c: bool) -> int:\n    if c:\n        return 1\n", 2, "can reach its end without returning",
     "every path"),
    ("helper returns", "def f(n: int) -> int:\n    return g(n)\n\n\ndef g(n):\n    if n > 0:\n        return 1\n    return 0.5\n",
     7, "g returns int (line", "every return the same type"),
    ("empty list no type fits", "def f(n: int) -> int:\n    xs = []\n    return xs[0].shape[0]\n", 2,
     ".shape of a", "the element type of xs (empty at line"),
    ("append to parameter", "def f(xs: list[int]) -> list[int]:\n    xs.append(1)\n    return xs\n", 0,
     "changing the parameter 'xs' in place", "copy it first: out = list(xs)"),
    ("set item of a parameter", "def f(d: dict[str, int]) -> int:\n    d['a'] = 1\n    return 0\n", 0,
     "changing the parameter 'd' in place", "copy it first: out = dict(d)"),
    ("+= on a list parameter", "def f(xs: list[int]) -> list[int]:\n    xs += [1]\n    return xs\n", 1,
     "xs += ... changes the caller's list", "copy it first"),
    ("+= on an array parameter", "def f(x: npt.NDArray[np.float64]) -> float:\n    x += 1.0\n    return float(x.sum())\n",
     1, "x += 1.0 writes into the parameter 'x' in place", "x = x.copy()"),
    ("+= on a parameter rebound on one branch only", "def f(x: npt.NDArray[np.float64], c: bool) -> "
     "npt.NDArray[np.float64]:\n    if c:\n        x = x * 2.0\n    x -= 1.0\n    return x\n", 3,
     "x -= 1.0 writes into the parameter 'x' in place", "make a new array instead"),
    ("in-place method on a tensor parameter", "import torch\n\n\ndef f(t: torch.Tensor) -> torch.Tensor:\n"
     "    t.mul_(2.0)\n    return t\n", 4, "t.mul_(2.0) writes into the parameter 't' in place", "t.clone()"),
    ("+= on an array another name holds", "def f(x: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:\n"
     "    y = x.copy()\n    z = y\n    y += 1.0\n    return z\n", 3,
     "writes into y in place, and z (line 14) may be y", "copy it"),
    ("*= through a view", "def f(x: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:\n"
     "    y = x.copy()\n    v = y[1:]\n    v *= 2.0\n    return y\n", 3,
     "v *= 2.0 (line 15) writes into v in place, and v may be the array y", "copy first"),
    ("+= of a float into an int array", "def f(x: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:\n"
     "    y = x.copy()\n    y += 1.5\n    return y\n", 2,
     "the result is float64 and y is int64; NumPy cannot write it into y in place", "a new name"),
    ("/= of a torch int tensor", "import torch\n\n\ndef f(t: torch.Tensor) -> torch.Tensor:\n"
     "    u = t.to(torch.int64)\n    u /= 2\n    return u\n", 5,
     "the result is float32 and u is int64; torch cannot write it into u in place", "a new name"),
    ("fill_ with a tensor", "import torch\n\n\ndef f(t: torch.Tensor) -> torch.Tensor:\n"
     "    u = t.clone()\n    u.fill_(t.sum())\n    return u\n", 5,
     "u.fill_(t.sum()): fill_ with a tensor value is not supported", "u.fill_(float(v))"),
    ("get without default", "def f(d: dict[str, int]) -> int:\n    return d.get('a')\n", 1,
     "d.get(k) gives None for a missing key", "pass a default"),
    ("array item assignment through an index list", "def f(x: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:\n"
     "    y = np.copy(x)\n    y[[0, 2]] = 1.0\n    return y\n", 2, "(integer-array indexing) is not supported",
     "bool mask"),
    ("list plus a number", "def f(xs: list[int]) -> list[int]:\n    return xs + 1\n", 1,
     "a list + a int (Python raises TypeError)", "append the value"),
    ("mixed list concatenation", "def f(xs: list[int], ys: list[str]) -> list[int]:\n    return xs + ys\n", 1,
     "makes a list of mixed types", "convert the elements"),
    ("int dict keys", "def f(n: int) -> int:\n    d = {1: n}\n    return n\n", 1,
     "a dict key is a int; compiled dicts are keyed by str", "key it by str"),
    ("list index assignment with a str", "def f(n: int) -> list[int]:\n    xs = [0] * n\n    xs['a'] = 1\n"
     "    return xs\n", 2, "a list is indexed with a str", "index it with an int"),
    ("aliased list", "def f(n: int) -> list[int]:\n    a: list[int] = []\n    b = a\n    b.append(n)\n    return a\n",
     2, "b = a makes both names one list in Python", "copy it"),
    ("return type", "def f(s: str) -> int:\n    return s\n", 1, "f returns str, but is annotated -> int", None),
    ("mixed branches", "def f(c: bool, s: str) -> str:\n    return s if c else 1\n", 1,
     "the branches of this conditional expression are str and int", "same type"),
    ("constant key", "def f(n: int) -> str:\n    return TABLE['zzz']\n", 1,
     "TABLE has no key 'zzz' (Python would raise KeyError)", "'a', 'b'"),
]


@pytest.mark.parametrize("name,body,offset,message,hint", ILL_TYPED, ids=[u[0] for u in ILL_TYPED])
def test_ill_typed_code_is_refused_with_a_reason(tmp_path: Path, name: str, body: str, offset: int, message: str,
                                                 hint: str | None) -> None:
    err = error_of(tmp_path, body)
    assert err.where == f"{tmp_path / 'f.py'}:{FIRST + offset}", err.render()
    assert message in err.message, err.render()
    if hint:
        assert err.hint and hint in err.hint, err.render()


# ---------------------------------------------------------------- missing ops


def partial_project(tmp_path: Path, specs: list[str]) -> Project:
    """A project with some of the checkout's specs and an empty registry."""
    root = tmp_path / "project"
    for rel in specs:
        (root / "specs" / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(CHECKOUT / "specs" / rel, root / "specs" / rel)
    (root / "generated").mkdir(parents=True)
    return Project(root)


def test_an_op_without_a_spec_names_the_op_the_types_and_how_to_add_it(tmp_path: Path) -> None:
    project = partial_project(tmp_path, ["operator/add.yaml"])
    err = error_of(tmp_path, "def f(a: float, b: float) -> float:\n    return a * b\n", project)
    assert isinstance(err, MissingOp)
    assert err.where == f"{tmp_path / 'f.py'}:{FIRST + 1}"
    assert err.message == "no spec for operator.mul, called with (float, float)"
    assert (err.op, err.arg_types, err.command) == ("operator.mul", ["float", "float"], None)
    assert "write a spec specs/operator/mul.yaml" in err.hint
    assert "`opgen synthesize operator.mul --target cpp`" in err.hint


def test_an_op_without_a_matching_overload_lists_the_ones_it_has(tmp_path: Path) -> None:
    err = error_of(tmp_path, "def f(s: str, n: int) -> str:\n    return s + n\n")
    assert isinstance(err, MissingOp)
    assert err.message == "operator.add has no overload taking (str, int)"
    assert "str: (a: str, b: str) -> str" in err.hint
    assert "Add one to specs/operator/add.yaml, then run `opgen synthesize operator.add --overload NAME --target cpp`" \
        in err.hint


def test_an_overload_with_no_verified_kernel_gives_the_exact_synthesize_command(tmp_path: Path) -> None:
    project = partial_project(tmp_path, ["operator/add.yaml", "operator/mul.yaml"])
    err = error_of(tmp_path, "def f(a: int, b: float) -> float:\n    return a * b\n", project)
    assert isinstance(err, MissingOp)
    # int * float is Python's float multiply after widening the int: the float overload.
    assert err.message.startswith("no verified cpu-cpp kernel for operator.mul(float, float) [overload float]: ")
    assert err.command == "opgen synthesize operator.mul --overload float --target cpp"
    assert err.hint == ("run `opgen synthesize operator.mul --overload float --target cpp` "
                        "(or compile with --synthesize-missing)")


def test_keyword_arguments_bind_by_the_librarys_signature(tmp_path: Path) -> None:
    """np.sum(x, dims=0) is NumPy's TypeError; the message shows NumPy's signature, the hint the native one."""
    err = error_of(tmp_path, "def f(x: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:\n"
                             "    return np.sum(x, dims=0)\n")
    assert not isinstance(err, MissingOp)
    assert "np.sum(x, dims=0): numpy.sum(a, axis=None, dtype=None, out=None" in err.message
    assert "got an unexpected keyword argument 'dims' (Python raises TypeError)" in err.message
    assert "`opgen show numpy.sum`" in err.hint


def test_an_int_compared_with_a_float_is_not_rounded(tmp_path: Path) -> None:
    """Python compares 2**53 + 1 > 2.0**53 exactly; widening the int to float would not."""
    err = error_of(tmp_path, "def f(a: int, b: float) -> bool:\n    return a < b\n")
    assert isinstance(err, MissingOp)
    assert err.message == "operator.lt has no overload taking (int, float)"
    assert err.hint.startswith("Python compares an int and a float exactly; write float(x)")
