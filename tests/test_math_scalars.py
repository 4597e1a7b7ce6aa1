"""Python's math module on scalars (specs/math/): math.sqrt, exp, log, tanh, erf, cos, sin, floor,
ceil, isnan, isinf and isfinite, where the gate cannot look. The admitted C++ and Rust kernels
against `math` itself on every edge value (nan, +-inf, +-0.0, subnormals, int64's edges as
doubles, the overflow and domain boundaries): the same error type and message as Python's, the
sign of a zero result, nan for nan, and values within the spec's tolerance (exact where the spec
says so). Then functions that call them through `import math`, compiled for both targets and
called from Python, against the same functions run by Python (int arguments widened to float,
the int overloads of floor and ceil, errors propagating with Python's messages)."""

from __future__ import annotations

import json
import math
import random

import pytest

from opgen.compiler import compile_many
from opgen.host import load_compiled
from opgen.project import PACKAGE_ROOT, Project
from opgen.spec.dtypes import DTYPES
from tests.registry_kernels import verified_kernels

TARGETS = ("cpu-cpp", "cpu-rust")
FLOAT_OPS = ("sqrt", "exp", "log", "tanh", "erf", "cos", "sin", "floor", "ceil", "isnan", "isinf", "isfinite")
INT_OPS = ("floor", "ceil")
PAIRS = [(f"math.{n}", "float") for n in FLOAT_OPS] + [(f"math.{n}", "int") for n in INT_OPS]
I64_MIN, I64_MAX = -(2**63), 2**63 - 1
TINY = 5e-324
EDGES = [
    0.0, -0.0, TINY, -TINY, 3 * TINY, 2.2250738585072014e-308, -2.2250738585072014e-308, 1e-300, -1e-300,
    math.nan, -math.nan, math.inf, -math.inf, 1.7976931348623157e308, -1.7976931348623157e308,
    0.5, -0.5, 1.0, -1.0, 1.5, -1.5, 2.5, 0.84375, 1.25, 2.857142857142857, 5.9, 6.0, -6.0, 19.06154746539849, 20.0,
    1.0000000000000002, 0.9999999999999999, math.pi, math.pi / 2, -math.pi, 1e22, 1e300, 4503599627370495.5,
    -4503599627370495.5, 9007199254740993.0, 709.782712893384, 709.7827128933841, -708.5, -745.1332191019411,
    -745.1332191019412, -746.0, 9223372036854775807.0, 9223372036854774784.0, -9223372036854775808.0,
    -9223372036854777856.0, 1e19, -1e19,
]


def _random_floats(n: int, seed: int) -> list[float]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        kind = rng.randrange(4)
        if kind == 0:
            out.append(rng.uniform(-30, 30))
        elif kind == 1:
            out.append(rng.choice((-1, 1)) * 10.0 ** rng.uniform(-320, 308))
        elif kind == 2:
            out.append(rng.uniform(-800, 800))
        else:
            out.append(rng.randint(-50, 50) / 4)
    return out


@pytest.fixture(scope="module")
def kernels():
    return verified_kernels(PAIRS, TARGETS)


def _outcome(fn, x):
    try:
        return "ok", fn(x)
    except (ValueError, OverflowError, ZeroDivisionError) as exc:
        return type(exc).__name__, str(exc)


def _int64_outcome(fn, x):
    """Python's result where it fits a native int; a big int is the native OverflowError."""
    kind, value = _outcome(fn, x)
    if kind == "ok" and isinstance(value, int) and not isinstance(value, bool) and not I64_MIN <= value <= I64_MAX:
        return "OverflowError", None
    return kind, value


def _same_float(got: float, want: float, rtol: float, atol: float) -> bool:
    if math.isnan(want):
        return isinstance(got, float) and math.isnan(got)
    if math.isinf(want) or want == 0.0:
        return got == want and math.copysign(1.0, got) == math.copysign(1.0, want)
    return abs(got - want) <= atol + rtol * abs(want)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", FLOAT_OPS)
def test_float_overload_is_pythons_math(kernels, name, target):
    spec, overload, kernel = kernels[(f"math.{name}", "float", target)]
    py = getattr(math, name)
    tol = spec.tolerance_for(overload, DTYPES["float64"]) if overload.sig.returns.name == "float" else None
    checked = 0
    for x in EDGES + _random_floats(4000, seed=FLOAT_OPS.index(name)):
        want = _int64_outcome(py, x)
        got = _outcome(lambda v: kernel([v]), x)
        if want[0] != "ok":
            assert got[0] == want[0], (name, x, got, want)
            if want[1] is not None:  # Python's own words (a big int has none: ours names int64)
                assert got[1] == want[1], (name, x, got, want)
            else:
                assert "int64" in got[1], (name, x, got)
            continue
        assert got[0] == "ok", (name, x, got, want)
        g, w = got[1], want[1]
        assert type(g) is type(w), (name, x, g, w)
        if tol is None:
            assert g == w, (name, x, g, w)
        else:
            assert _same_float(g, w, tol.rtol, tol.atol), (name, x, g, w, tol)
        checked += 1
    assert checked > 1000


@pytest.mark.parametrize("target", TARGETS)
def test_sqrt_is_correctly_rounded_bit_for_bit(kernels, target):
    """sqrt has no tolerance at all: every bit, and the sign of -0.0, as Python's."""
    _, _, sqrt = kernels[("math.sqrt", "float", target)]
    for x in EDGES + [abs(v) for v in _random_floats(3000, seed=99)]:
        if x < 0.0:
            continue
        got, want = sqrt([x]), math.sqrt(x)
        assert (math.isnan(got) and math.isnan(want)) or (got == want and math.copysign(1, got) == math.copysign(1, want)), x


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", INT_OPS)
def test_int_overload_is_the_int_itself(kernels, name, target):
    _, _, kernel = kernels[(f"math.{name}", "int", target)]
    py = getattr(math, name)
    rng = random.Random(7)
    values = [0, 1, -1, 2**53, 2**53 + 1, -(2**53) - 1, I64_MAX, I64_MIN, I64_MAX - 1, I64_MIN + 1]
    values += [rng.randint(I64_MIN, I64_MAX) for _ in range(500)]
    for n in values:
        got = kernel([n])
        assert got == py(n) == n and type(got) is int, (name, n, got)


# ---------------------------------------------------------------- compiled through `import math`

SOURCE = '''\
import math


def inv_sqrt_dim(d: int) -> float:
    return 1.0 / math.sqrt(d)


def gelu_erf(x: float) -> float:
    return 0.5 * x * (1.0 + math.erf(x / math.sqrt(2.0)))


def gelu_tanh(x: float) -> float:
    return 0.5 * x * (1.0 + math.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x * x * x)))


def log_sum_exp2(a: float, b: float) -> float:
    m = a if a > b else b
    return m + math.log(math.exp(a - m) + math.exp(b - m))


def rope_angles(pos: int, i: int, dim: int) -> tuple[float, float]:
    theta = pos / 10000.0 ** (2 * i / dim)
    return math.cos(theta), math.sin(theta)


def buckets(x: float, width: float) -> tuple[int, int]:
    return math.floor(x / width), math.ceil(x / width)


def int_buckets(n: int) -> int:
    return math.floor(n) - math.ceil(n) + math.floor(n)


def classify(x: float) -> str:
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf"
    if math.isfinite(x):
        return "finite"
    return "?"


def raw(x: float) -> tuple[float, float, float]:
    return math.sqrt(x), math.exp(x), math.log(x)
'''
FUNCTIONS = ["inv_sqrt_dim", "gelu_erf", "gelu_tanh", "log_sum_exp2", "rope_angles", "buckets", "int_buckets",
             "classify", "raw"]
CASES = {
    "inv_sqrt_dim": [(d,) for d in (1, 2, 3, 4, 64, 768, 2**53 + 1, I64_MAX, 0, -1, I64_MIN)],
    "gelu_erf": [(x,) for x in (0.0, -0.0, 0.5, -3.0, 10.0, math.inf, -math.inf, math.nan, 1e-300)],
    "gelu_tanh": [(x,) for x in (0.0, -0.0, 0.5, -3.0, 10.0, math.inf, math.nan)],
    "log_sum_exp2": [(0.0, 0.0), (1000.0, 1000.0), (-1000.0, 3.0), (1.0, 2.0), (math.inf, 0.0)],
    "rope_angles": [(0, 0, 64), (5, 3, 64), (4095, 31, 64), (100000, 0, 128)],
    "buckets": [(7.5, 2.0), (-7.5, 2.0), (-0.0, 1.0), (1e300, 1e-10), (math.nan, 1.0), (math.inf, 1.0),
                (-9.2e18, 1.0), (5.0, 0.0)],
    "int_buckets": [(n,) for n in (0, -7, 2**53 + 1, I64_MAX, I64_MIN)],
    "classify": [(x,) for x in (0.0, -0.0, TINY, math.nan, math.inf, -math.inf, 1.7976931348623157e308)],
    "raw": [(x,) for x in (4.0, 0.0, -1.0, 710.0, -0.0, math.inf, math.nan, TINY)],
}


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("math-scalars")
    source = root / "mathfns.py"
    source.write_text(SOURCE)
    namespace: dict = {}
    exec(compile(SOURCE, str(source), "exec"), namespace)
    out, manifests = {}, {}
    for target in TARGETS:
        dirs = {f: root / target / f for f in FUNCTIONS}
        compile_many(Project(PACKAGE_ROOT), [(source, f, dirs[f]) for f in FUNCTIONS], target=target)
        for f in FUNCTIONS:
            out[(f, target)] = load_compiled(dirs[f])
            manifests[(f, target)] = json.loads(next(dirs[f].glob("*.manifest.json")).read_text())
    return namespace, out, manifests


def _call(fn, args):
    try:
        return "ok", fn(*args)
    except (ValueError, OverflowError, ZeroDivisionError) as exc:
        return type(exc).__name__, str(exc)


def _same(got, want) -> bool:
    if isinstance(want, tuple):
        return isinstance(got, tuple) and len(got) == len(want) and all(_same(g, w) for g, w in zip(got, want))
    if isinstance(want, float):
        # compiled code calls the same libm and the same kernels: bit for bit, nan for nan
        return isinstance(got, float) and ((math.isnan(got) and math.isnan(want))
                                           or (got == want and math.copysign(1, got) == math.copysign(1, want)))
    return type(got) is type(want) and got == want


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("function", FUNCTIONS)
def test_compiled_math_calls_are_pythons(compiled, function, target):
    namespace, fns, _ = compiled
    py, native = namespace[function], fns[(function, target)]
    for args in CASES[function]:
        want, got = _call(py, args), _call(native, args)
        if want[0] == "ok" and isinstance(want[1], int) and not I64_MIN <= want[1] <= I64_MAX:
            want = ("OverflowError", None)
        assert got[0] == want[0], (function, args, got, want)
        if want[0] == "ok":
            assert _same(got[1], want[1]), (function, args, got, want)
        elif want[1] is not None:
            assert got[1] == want[1], (function, args, got, want)


def test_the_compiler_finds_math_by_its_import(compiled):
    """`import math` makes math.sqrt the spec specs/math/sqrt.yaml, on both targets; an int argument
    reaches its float overload converted (math.sqrt has no int overload), while math.floor and
    math.ceil of an int take their int overloads, exact over int64."""
    _, _, manifests = compiled
    for target in TARGETS:
        linked = {(k["op"], k["overload"], k["target"]) for k in manifests[("inv_sqrt_dim", target)]["kernels"]}
        assert ("math.sqrt", "float", target) in linked, linked
        linked = {(k["op"], k["overload"]) for k in manifests[("int_buckets", target)]["kernels"]}
        assert {("math.floor", "int"), ("math.ceil", "int")} <= linked, linked
        linked = {(k["op"], k["overload"]) for k in manifests[("classify", target)]["kernels"]}
        assert {("math.isnan", "float"), ("math.isinf", "float"), ("math.isfinite", "float")} <= linked, linked
