"""The kernel ABI end to end: generated shims around tiny hand-written kernels, built
with opgen.build.cpp and called through opgen.verify.ffi, for every kind of value the ABI carries."""

from __future__ import annotations

import ctypes
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from opgen.verify import ffi
from opgen.spec.abi import c_declaration, c_symbol
from opgen.build.cpp import BuildJob, build
from opgen.spec.dtypes import DTYPES
from opgen.targets.cpp.shim import render_shim
from opgen.spec.model import load_spec

OP = "abitest.ops"

SPEC = """\
op: abitest.ops
summary: synthetic overloads covering every kind of value the kernel ABI carries
reference: operator.add
overloads:
  - name: scale_ints
    signature: "(xs: list[int], k: int) -> list[int]"
    raises:
      - {error: OverflowError, when: a product does not fit in int64}
  - name: scale_floats
    signature: "(xs: list[float], k: float) -> list[float]"
  - name: suffix
    signature: "(xs: list[str], suffix: str) -> list[str]"
  - name: join
    signature: "(xs: list[str], sep: str) -> str"
  - name: nbytes
    signature: "(s: str) -> int"
  - name: negate
    signature: "(xs: list[bool]) -> list[bool]"
  - name: describe
    signature: "(s: str, flag: bool, x: float, n: int) -> str"
  - name: is_empty
    signature: "(s: str) -> bool"
  - name: divide
    signature: "(a: float, b: float) -> float"
    raises:
      - {error: ZeroDivisionError, when: b is zero}
      - {error: ValueError, when: a is negative}
  - name: fail
    signature: "(code: int) -> int"
    raises:
      - {error: OverflowError, when: code is 1}
      - {error: ZeroDivisionError, when: code is 2}
      - {error: ValueError, when: code is 3 or 6}
  - name: add
    signature: "(a: tensor[float64], b: tensor[float64]) -> tensor[float64]"
    shape: elementwise
  - name: strides
    signature: "(a: tensor[float64], b: tensor[float64]) -> tensor[int64]"
    shape: elementwise
  - name: mm
    signature: "(a: tensor[float64], b: tensor[float64]) -> tensor[float64]"
    shape: "(m,k),(k,n)->(m,n)"
  - name: rowsum
    signature: "(a: tensor[float32], axis: int) -> tensor[float32]"
    shape: {reduce: a, axis: axis}
"""

KERNELS = r"""
#include "opgen_kernel.hpp"
#include <string>
#include <vector>

namespace {
// Offset in `t` of the i-th element in row-major order over `shape` (t's dims align with it).
int64_t offset_of(const opgen::Tensor& t, const int64_t* shape, int nd, int64_t i) {
  int64_t off = 0;
  for (int d = nd - 1; d >= 0; --d) {
    off += (i % shape[d]) * t.stride(d);
    i /= shape[d];
  }
  return off;
}
}  // namespace

namespace opgen::kernels {

std::vector<int64_t> abitest_ops__scale_ints(const std::vector<int64_t>& xs, int64_t k) {
  std::vector<int64_t> r;
  for (int64_t x : xs) {
    int64_t y;
    if (__builtin_mul_overflow(x, k, &y)) throw opgen::Error(opgen::ErrorKind::Overflow, "product does not fit in int64");
    r.push_back(y);
  }
  return r;
}

std::vector<double> abitest_ops__scale_floats(const std::vector<double>& xs, double k) {
  std::vector<double> r;
  for (double x : xs) r.push_back(x * k);
  return r;
}

std::vector<std::string> abitest_ops__suffix(const std::vector<std::string>& xs, const std::string& suffix) {
  std::vector<std::string> r;
  for (const auto& x : xs) r.push_back(x + suffix);
  return r;
}

std::string abitest_ops__join(const std::vector<std::string>& xs, const std::string& sep) {
  std::string r;
  for (size_t i = 0; i < xs.size(); ++i) r += (i ? sep : std::string()) + xs[i];
  return r;
}

int64_t abitest_ops__nbytes(const std::string& s) { return static_cast<int64_t>(s.size()); }

std::vector<bool> abitest_ops__negate(const std::vector<bool>& xs) {
  std::vector<bool> r;
  for (bool x : xs) r.push_back(!x);
  return r;
}

std::string abitest_ops__describe(const std::string& s, bool flag, double x, int64_t n) {
  return std::string(flag ? "yes" : "no") + "|" + std::to_string(n) + "|" + (x < 0 ? "neg" : x > 0 ? "pos" : "zero") + "|" + s;
}

bool abitest_ops__is_empty(const std::string& s) { return s.empty(); }

double abitest_ops__divide(double a, double b) {
  if (b == 0) throw opgen::Error(opgen::ErrorKind::ZeroDivision, "float division by zero");
  if (a < 0) throw opgen::Error(opgen::ErrorKind::Value, "negative numerator");
  return a / b;
}

int64_t abitest_ops__fail(int64_t code) {
  switch (code) {
    case 1: throw opgen::Error(opgen::ErrorKind::Overflow, "code 1 overflows");
    case 2: throw opgen::Error(opgen::ErrorKind::ZeroDivision, "code 2 divides by zero");
    case 3: throw opgen::Error(opgen::ErrorKind::Value, "code 3 is a bad value");
    case 4: throw std::runtime_error("a plain std::runtime_error");
    case 5: throw 42;
    case 6: throw opgen::Error(opgen::ErrorKind::Value, std::string(300, 'x'));
    default: return code;
  }
}

void abitest_ops__add(const opgen::Tensor& a, const opgen::Tensor& b, opgen::Tensor& out) {
  const int nd = out.ndim();
  double* o = out.data<double>();
  for (int64_t i = 0; i < out.numel(); ++i)
    o[i] = a.data<double>()[offset_of(a, out.sizes(), nd, i)] + b.data<double>()[offset_of(b, out.sizes(), nd, i)];
}

// Reports what the kernel sees: a's strides, b's strides, then both ranks; -1 elsewhere.
void abitest_ops__strides(const opgen::Tensor& a, const opgen::Tensor& b, opgen::Tensor& out) {
  const int nd = out.ndim();
  int64_t* o = out.data<int64_t>();
  const int64_t n = out.numel();
  for (int64_t i = 0; i < n; ++i) o[i] = -1;
  for (int d = 0; d < nd; ++d) {
    if (d < n) o[d] = a.stride(d);
    if (nd + d < n) o[nd + d] = b.stride(d);
  }
  if (2 * nd + 1 < n) { o[2 * nd] = a.ndim(); o[2 * nd + 1] = b.ndim(); }
}

// Naive batched matmul over the shim's aligned views: a (*batch,m,k), b (*batch,k,n).
void abitest_ops__mm(const opgen::Tensor& a, const opgen::Tensor& b, opgen::Tensor& out) {
  const int nd = out.ndim();
  const int64_t m = a.size(-2), k = a.size(-1), n = b.size(-1);
  int64_t batch = 1;
  for (int d = 0; d < nd - 2; ++d) batch *= out.size(d);
  const double* A = a.data<double>();
  const double* B = b.data<double>();
  double* O = out.data<double>();
  for (int64_t bi = 0; bi < batch; ++bi) {
    int64_t ao = 0, bo = 0, rest = bi;
    for (int d = nd - 3; d >= 0; --d) {
      int64_t idx = rest % out.size(d);
      rest /= out.size(d);
      ao += idx * a.stride(d);
      bo += idx * b.stride(d);
    }
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t p = 0; p < k; ++p)
          s += A[ao + i * a.stride(-2) + p * a.stride(-1)] * B[bo + p * b.stride(-2) + j * b.stride(-1)];
        O[(bi * m + i) * n + j] = s;
      }
  }
}

void abitest_ops__rowsum(const opgen::Tensor& a, int64_t axis, opgen::Tensor& out) {
  const int nd = a.ndim();
  const int ax = static_cast<int>(axis < 0 ? axis + nd : axis);
  float* o = out.data<float>();
  for (int64_t i = 0; i < out.numel(); ++i) {
    int64_t rest = i, base = 0;
    for (int d = nd - 1; d >= 0; --d) {
      if (d == ax) continue;
      base += (rest % a.size(d)) * a.stride(d);
      rest /= a.size(d);
    }
    double s = 0;
    for (int64_t j = 0; j < a.size(ax); ++j) s += a.data<float>()[base + j * a.stride(ax)];
    o[i] = static_cast<float>(s);
  }
}

}  // namespace opgen::kernels
"""


@pytest.fixture(scope="module")
def spec(tmp_path_factory):
    path = tmp_path_factory.mktemp("abi") / "abitest.yaml"
    path.write_text(SPEC)
    return load_spec(path)


@pytest.fixture(scope="module")
def lib(spec):
    sources = {"kernel.cpp": KERNELS}
    for o in spec.overloads:
        sources[f"shim_{o.name}.cpp"] = render_shim(spec, o)
    (result,) = build([BuildJob(name="abitest", sources=sources)])
    assert result.ok, result.diagnostics
    return ctypes.CDLL(str(result.library))


@pytest.fixture(scope="module")
def k(spec, lib):
    """k.<overload>(*args, out=...) calls that overload's shim."""

    class Kernels:
        def __getattr__(self, name):
            if name not in {o.name for o in spec.overloads}:
                raise AttributeError(name)
            kernel = ffi.Kernel(lib, c_symbol(OP, name), spec.overload(name).sig)
            return lambda *args, out=None: kernel(args, out=out)

    return Kernels()


# ---------------------------------------------------------------- scalars, strings, lists


def test_shim_declarations_match_the_abi(spec):
    shim = render_shim(spec, spec.overload("join"))
    assert shim.startswith("// @generated by opgen from abitest.yaml (op abitest.ops, overload join). Do not edit.")
    assert ("int32_t opgen_abitest_ops__join(const opgen_string* xs, int64_t xs_len, const char* sep, "
            "int64_t sep_len, opgen_string* out, opgen_error* err)") == c_declaration(OP, "join", spec.overload("join").sig)
    assert c_declaration(OP, "join", spec.overload("join").sig) in shim


def test_list_of_int_round_trips(k):
    assert k.scale_ints([1, -2, 3, 2**62], 1) == [1, -2, 3, 2**62]
    assert k.scale_ints([1, -2, 3], -3) == [-3, 6, -9]
    assert k.scale_ints([-(2**63), 2**63 - 1], 1) == [-(2**63), 2**63 - 1]
    assert k.scale_ints([], 5) == []


def test_kernel_overflow_maps_to_overflow_error(k):
    with pytest.raises(OverflowError) as info:
        k.scale_ints([1, 2**62], 2)
    assert str(info.value) == "product does not fit in int64"


def test_int_outside_int64_is_refused_before_the_call(k):
    with pytest.raises(OverflowError, match="does not fit in int64"):
        k.scale_ints([1], 2**63)


def test_list_of_float_round_trips(k):
    got = k.scale_floats([1.5, -0.0, math.inf, math.nan, 5e-324], 2.0)
    assert got[:3] == [3.0, -0.0, math.inf]
    assert math.copysign(1, got[1]) == -1
    assert math.isnan(got[3]) and got[4] == 1e-323
    assert k.scale_floats([], 2.0) == []


def test_list_of_str_round_trips_utf8(k):
    words = ["héllo", "😀", "", "日本語", "a\x00b"]
    assert k.suffix(words, "✓") == [w + "✓" for w in words]
    assert k.suffix(words, "") == words
    assert k.suffix([], "x") == []
    assert k.suffix(["", ""], "") == ["", ""]


def test_str_result_round_trips_utf8(k):
    assert k.join(["a", "😀", "", "ß"], "—") == "a—😀——ß"
    assert k.join([], "—") == ""
    assert k.join(["only"], "") == "only"


def test_strings_cross_as_utf8_bytes(k):
    assert k.nbytes("") == 0
    assert k.nbytes("😀") == 4
    assert k.nbytes("é") == 2
    assert k.nbytes("a\x00b") == 3  # length-delimited, not NUL-terminated


def test_bool_and_list_of_bool(k):
    assert k.negate([True, False, False]) == [False, True, True]
    assert k.negate([]) == []
    assert k.is_empty("") is True
    assert k.is_empty("😀") is False


def test_mixed_scalars(k):
    assert k.describe("ü", True, -2.5, -(2**63)) == f"yes|{-(2**63)}|neg|ü"
    assert k.describe("", False, 0.0, 7) == "no|7|zero|"
    assert k.describe("x", True, math.inf, 2**63 - 1) == f"yes|{2**63 - 1}|pos|x"


def test_float_result_and_its_errors(k):
    assert k.divide(1.0, 4.0) == 0.25
    with pytest.raises(ZeroDivisionError) as info:
        k.divide(1.0, 0.0)
    assert str(info.value) == "float division by zero"
    with pytest.raises(ValueError) as info:
        k.divide(-1.0, 2.0)
    assert str(info.value) == "negative numerator"


@pytest.mark.parametrize(
    ("code", "exc", "message"),
    [
        (1, OverflowError, "code 1 overflows"),
        (2, ZeroDivisionError, "code 2 divides by zero"),
        (3, ValueError, "code 3 is a bad value"),
        (4, ffi.KernelError, "a plain std::runtime_error"),
        (5, ffi.KernelError, "the kernel threw a non-standard exception"),
        (6, ValueError, "x" * 255),  # truncated to the ABI's message buffer, still terminated
    ],
)
def test_errors_map_to_python_exceptions(k, code, exc, message):
    with pytest.raises(exc) as info:
        k.fail(code)
    assert type(info.value) is exc
    assert str(info.value) == message


def test_int_extremes_pass_through(k):
    assert k.fail(2**63 - 1) == 2**63 - 1
    assert k.fail(-(2**63)) == -(2**63)
    assert k.fail(0) == 0


# ---------------------------------------------------------------- tensors: elementwise


@pytest.mark.parametrize(
    ("a_shape", "b_shape"),
    [((3, 1), (4,)), ((), (2, 3)), ((2, 0), (1,)), ((1, 5), (4, 1)), ((2, 3, 4), (3, 1)), ((), ())],
)
def test_elementwise_broadcasting_matches_numpy(k, a_shape, b_shape):
    rng = np.random.default_rng(0)
    a = rng.standard_normal(a_shape)
    b = rng.standard_normal(b_shape)
    out = np.full(np.broadcast_shapes(a_shape, b_shape), np.nan)
    assert k.add(a, b, out=out) is out
    np.testing.assert_array_equal(out, a + b)


def test_elementwise_reads_non_contiguous_inputs(k):
    base = np.arange(24, dtype=np.float64).reshape(4, 6)
    a = base.T[::2]  # (3, 4), transposed and strided
    b = base[0, ::-2][:, None][:3]  # (3, 1), reversed
    out = np.empty((3, 4))
    k.add(a, b, out=out)
    np.testing.assert_array_equal(out, a + b)


def test_broadcast_inputs_reach_the_kernel_as_stride_0_views(k):
    a = np.zeros((3, 1))
    b = np.zeros((4,))
    out = np.empty((3, 4), dtype=np.int64)
    k.strides(a, b, out=out)
    shape = (3, 4)
    expect_a = [s // 8 for s in np.broadcast_to(a, shape).strides]
    expect_b = [s // 8 for s in np.broadcast_to(b, shape).strides]
    assert expect_a == [1, 0] and expect_b == [0, 1]
    assert out.reshape(-1)[:6].tolist() == expect_a + expect_b + [2, 2]  # both aligned to out's rank


@settings(max_examples=40, deadline=None)
@given(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=4, max_side=4), st.booleans())
def test_elementwise_broadcasting_property(k, shapes, transpose):
    a_shape, b_shape = shapes.input_shapes
    a = np.arange(math.prod(a_shape), dtype=np.float64).reshape(a_shape)
    b = np.arange(math.prod(b_shape), dtype=np.float64).reshape(b_shape) * 0.5
    if transpose and a.ndim >= 2:
        a = np.ascontiguousarray(a.T).T  # same values, Fortran order (ascontiguousarray makes 0-d 1-d)
    out = np.full(shapes.result_shape, np.nan)
    k.add(a, b, out=out)
    np.testing.assert_array_equal(out, a + b)


# ---------------------------------------------------------------- tensors: the shim's checks


def raw_call(kernel: ffi.Kernel, views: list[ffi.TensorView]) -> tuple[int, str]:
    err = ffi.ErrorInfo()
    status = kernel.fn(*(ctypes.byref(v) for v in views), ctypes.byref(err))
    return status, err.message.decode()


def test_shim_rejects_a_wrong_input_dtype(spec, lib):
    kernel = ffi.Kernel(lib, c_symbol(OP, "add"), spec.overload("add").sig)
    keep: list = []
    a = ffi.tensor_view(np.zeros(3, np.float32), DTYPES["float32"], keep)  # bypasses ffi's own check
    b = ffi.tensor_view(np.zeros(3), DTYPES["float64"], keep)
    out = ffi.tensor_view(np.zeros(3), DTYPES["float64"], keep)
    status, message = raw_call(kernel, [a, b, out])
    assert ffi.ERROR_KINDS[status] is ValueError
    assert message == "tensor argument 'a' has the wrong dtype"


def test_shim_rejects_a_wrong_output_dtype(spec, lib):
    kernel = ffi.Kernel(lib, c_symbol(OP, "add"), spec.overload("add").sig)
    keep: list = []
    a = ffi.tensor_view(np.zeros(3), DTYPES["float64"], keep)
    out = ffi.tensor_view(np.zeros(3, np.int64), DTYPES["int64"], keep)
    status, message = raw_call(kernel, [a, a, out])
    assert ffi.ERROR_KINDS[status] is ValueError
    assert message == "tensor argument 'out' has the wrong dtype"


def test_shim_rejects_non_cpu_memory(spec, lib):
    kernel = ffi.Kernel(lib, c_symbol(OP, "add"), spec.overload("add").sig)
    keep: list = []
    a = ffi.tensor_view(np.zeros(3), DTYPES["float64"], keep)
    b = ffi.tensor_view(np.zeros(3), DTYPES["float64"], keep)
    b.device = ffi.Device(2, 0)  # kDLCUDA
    status, message = raw_call(kernel, [a, b, ffi.tensor_view(np.zeros(3), DTYPES["float64"], keep)])
    assert (status, message) == (3, "tensor argument 'b' is not in CPU memory")


def test_ffi_refuses_a_wrong_dtype_array(k):
    with pytest.raises(TypeError, match="expected a float64 array, got float32"):
        k.add(np.zeros(3, np.float32), np.zeros(3), out=np.zeros(3))


def test_shim_rejects_a_wrong_output_shape(k):
    out = np.zeros((4, 3))
    with pytest.raises(ValueError) as info:
        k.add(np.zeros((3, 1)), np.zeros(4), out=out)
    assert str(info.value) == "output tensor does not have the shape the spec's shape rule gives"
    assert not out.any()  # the kernel was not called


def test_shim_rejects_a_non_contiguous_output(k):
    out = np.zeros((3, 8))[:, ::2]
    with pytest.raises(ValueError) as info:
        k.add(np.zeros((3, 1)), np.zeros(4), out=out)
    assert str(info.value) == "output tensor must be contiguous"


def test_shim_rejects_shapes_that_do_not_broadcast(k):
    with pytest.raises(ValueError, match="^input shapes cannot be broadcast together$"):
        k.add(np.zeros(3), np.zeros(4), out=np.zeros(3))


def test_tensor_result_needs_an_out_array(k):
    with pytest.raises(ValueError, match="needs a caller-allocated out array"):
        k.add(np.zeros(3), np.zeros(3))


# ---------------------------------------------------------------- tensors: gufunc and reduce


def test_matmul_shim_checks_core_dims(k):
    with pytest.raises(ValueError, match="^core dimension k differs between inputs$"):
        k.mm(np.zeros((2, 3)), np.zeros((4, 5)), out=np.zeros((2, 5)))
    with pytest.raises(ValueError, match="^a needs at least 2 dims$"):
        k.mm(np.zeros(3), np.zeros((3, 5)), out=np.zeros(5))
    with pytest.raises(ValueError, match="^output tensor does not have the shape"):
        k.mm(np.zeros((2, 3)), np.zeros((3, 5)), out=np.zeros((5, 2)))


def test_matmul_shim_broadcasts_batch_dims(k):
    rng = np.random.default_rng(1)
    a = rng.integers(-5, 5, (2, 1, 3, 4)).astype(np.float64)
    b = rng.integers(-5, 5, (5, 4, 6)).astype(np.float64)
    out = np.full((2, 5, 3, 6), np.nan)
    k.mm(a, b, out=out)
    np.testing.assert_array_equal(out, np.matmul(a, b))


@st.composite
def matmul_operands(draw):
    shapes = draw(hnp.mutually_broadcastable_shapes(signature="(m,k),(k,n)->(m,n)", max_dims=3, max_side=4))
    ops = []
    for shape in shapes.input_shapes:
        values = np.arange(math.prod(shape), dtype=np.float64).reshape(shape) % 7 - 3
        layout = draw(st.sampled_from(["c", "f", "reversed"]))
        if layout == "f":
            values = np.asfortranarray(values)
        elif layout == "reversed" and values.ndim:
            values = np.ascontiguousarray(values[..., ::-1])[..., ::-1]
        ops.append(values)
    return ops, shapes.result_shape


@settings(max_examples=60, deadline=None)
@given(matmul_operands())
def test_matmul_batch_broadcasting_matches_numpy(k, operands):
    (a, b), result_shape = operands
    out = np.full(result_shape, np.nan)
    k.mm(a, b, out=out)
    np.testing.assert_array_equal(out, np.matmul(a, b))


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -2, -3])
def test_reduce_shim_allows_negative_axes(k, axis):
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    out = np.full(np.sum(a, axis=axis).shape, np.nan, dtype=np.float32)
    k.rowsum(a, axis, out=out)
    np.testing.assert_array_equal(out, np.sum(a, axis=axis))


def test_reduce_shim_rejects_an_axis_out_of_range(k):
    with pytest.raises(ValueError, match="^axis out of range$"):
        k.rowsum(np.zeros((2, 3), np.float32), 2, out=np.zeros(2, np.float32))
    with pytest.raises(ValueError, match="^output tensor does not have the shape"):
        k.rowsum(np.zeros((2, 3), np.float32), 0, out=np.zeros(2, np.float32))


# ---------------------------------------------------------------- parameter names vs the shim's own names

AWKWARD = """\
op: abitest.names
summary: parameter names that a generated shim must not trip over
reference: operator.add
overloads:
  - name: r_list
    signature: "(xs: list[int], r: int) -> list[int]"
  - name: r_str
    signature: "(r: str, s: list[str]) -> list[str]"
  - name: shape_int
    signature: "(a: tensor[float64], shape: int) -> tensor[float64]"
    shape: elementwise
  - name: loops
    signature: "(loop: tensor[float64], shape: tensor[float64], loops: int) -> tensor[float64]"
    shape: "(m,k),(k,n)->(m,n)"
  - name: s_axis
    signature: "(a: tensor[float64], s: int, a_v: int) -> tensor[float64]"
    shape: {reduce: a, axis: s}
  - name: i_list
    signature: "(i: list[bool], items: str) -> int"
"""

AWKWARD_KERNELS = r"""
#include "opgen_kernel.hpp"
#include <string>
#include <vector>
namespace opgen::kernels {
std::vector<int64_t> abitest_names__r_list(const std::vector<int64_t>& xs, int64_t r) {
  std::vector<int64_t> o;
  for (auto x : xs) o.push_back(x + r);
  return o;
}
std::vector<std::string> abitest_names__r_str(const std::string& r, const std::vector<std::string>& s) {
  std::vector<std::string> o;
  for (auto& x : s) o.push_back(r + x);
  return o;
}
void abitest_names__shape_int(const opgen::Tensor& a, int64_t shape, opgen::Tensor& out) {
  for (int64_t i = 0; i < out.numel(); ++i) out.data<double>()[i] = a.data<double>()[i * a.stride(0)] + shape;
}
void abitest_names__loops(const opgen::Tensor& loop, const opgen::Tensor& shape, int64_t loops, opgen::Tensor& out) {
  for (int64_t i = 0; i < out.numel(); ++i) out.data<double>()[i] = loops;
}
void abitest_names__s_axis(const opgen::Tensor& a, int64_t s, int64_t a_v, opgen::Tensor& out) {
  for (int64_t i = 0; i < out.numel(); ++i) out.data<double>()[i] = s + a_v;
}
int64_t abitest_names__i_list(const std::vector<bool>& i, const std::string& items) {
  return static_cast<int64_t>(i.size() * 100 + items.size());
}
}  // namespace opgen::kernels
"""


def test_parameter_names_never_clash_with_the_shims_locals(tmp_path):
    """Regression: a parameter named r, s, shape, loop(s) or <tensor>_v used to make the
    generated shim fail to compile (the LLM would have been blamed for it)."""
    path = tmp_path / "awkward.yaml"
    path.write_text(AWKWARD)
    spec = load_spec(path)
    sources = {"kernel.cpp": AWKWARD_KERNELS}
    sources.update({f"shim_{o.name}.cpp": render_shim(spec, o) for o in spec.overloads})
    (result,) = build([BuildJob(name="abitest-names", sources=sources)])
    assert result.ok, result.diagnostics
    lib = ctypes.CDLL(str(result.library))

    def call(name, *args, out=None):
        return ffi.Kernel(lib, c_symbol("abitest.names", name), spec.overload(name).sig)(args, out=out)

    assert call("r_list", [1, 2], 10) == [11, 12]
    assert call("r_str", "é", ["a", ""]) == ["éa", "é"]
    np.testing.assert_array_equal(call("shape_int", np.arange(3.0), 5, out=np.empty(3)), [5.0, 6.0, 7.0])
    np.testing.assert_array_equal(call("loops", np.zeros((2, 3)), np.zeros((3, 4)), 7, out=np.empty((2, 4))), 7.0)
    np.testing.assert_array_equal(call("s_axis", np.zeros((2, 3)), -1, 3, out=np.empty(2)), [2.0, 2.0])
    assert call("i_list", [True, False], "😀") == 204
