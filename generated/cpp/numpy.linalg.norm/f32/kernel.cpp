// numpy.linalg.norm, overload f32: numpy.linalg.norm(x, axis=axis, keepdims=keepdims) with ord=None,
// the 2-norm sqrt(sum x^2) along one axis.
//
// Every square is formed in double and the squares summed pairwise in double: along a lane,
// blocks of up to 256 elements in 16 running sums combined as a tree; across neighbouring
// outputs, up to 256 of them reduced together one input row at a time, pairwise over the rows
// (blocks of 32 rows added row by row). The square root is taken in double and rounded to the
// output type once. Squaring in double means no square over- or underflows for float32 input
// (NumPy squares in float32: its norm of [1e20] is inf, of a lone subnormal 0; the spec's domain
// stays far below the first, and its atol forgives the second).
// An empty axis gives 0 (sqrt of the empty sum); nan anywhere in a row gives nan, inf gives inf
// (inf + nan: nan), as IEEE arithmetic does. keepdims only changes out's shape (checked by the
// shim), not its element order: out is contiguous in the row-major order of the kept dims, which
// are merged where the strides allow. Any strides (0, negative), 0-size dims.
#include "opgen_kernel.hpp"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <vector>

namespace opgen::kernels {

namespace {

using T = float;

inline double sq(T v) {
  const double d = static_cast<double>(v);
  return d * d;
}

// Pairwise sum of the squares of n elements `s` apart.
double lane_sq(const T* p, int64_t n, int64_t s) {
  if (n <= 256) {
    double acc[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    int64_t i = 0;
    if (s == 1) {
      for (; i + 16 <= n; i += 16)
        for (int j = 0; j < 16; ++j) acc[j] += sq(p[i + j]);
    } else {
      for (; i + 16 <= n; i += 16)
        for (int j = 0; j < 16; ++j) acc[j] += sq(p[(i + j) * s]);
    }
    for (int w = 8; w >= 1; w /= 2)
      for (int j = 0; j < w; ++j) acc[j] += acc[j + w];
    double r = acc[0];
    for (; i < n; ++i) r += sq(p[i * s]);
    return r;
  }
  const int64_t half = (n / 2) & ~static_cast<int64_t>(15);
  return lane_sq(p, half, s) + lane_sq(p + half * s, n - half, s);
}

// dst[j] = the sum over k < K of col[k * sK + j * rs]^2, j < m: pairwise over the rows, each
// block of up to 32 rows added row by row. `scratch` holds m doubles per level.
void col_sq(const T* col, int64_t K, int64_t sK, int64_t rs, int64_t m, double* dst, double* scratch) {
  if (K <= 32) {
    for (int64_t j = 0; j < m; ++j) dst[j] = 0.0;
    for (int64_t k = 0; k < K; ++k) {
      const T* row = col + k * sK;
      if (rs == 1) {
        for (int64_t j = 0; j < m; ++j) dst[j] += sq(row[j]);
      } else {
        for (int64_t j = 0; j < m; ++j) dst[j] += sq(row[j * rs]);
      }
    }
    return;
  }
  const int64_t half = K / 2;
  col_sq(col, half, sK, rs, m, dst, scratch + m);
  col_sq(col + half * sK, K - half, sK, rs, m, scratch, scratch + m);
  for (int64_t j = 0; j < m; ++j) dst[j] += scratch[j];
}

inline T root(double s) { return static_cast<T>(std::sqrt(s)); }

}  // namespace

void numpy_linalg_norm__f32(const opgen::Tensor& x, int64_t axis, bool keepdims, opgen::Tensor& out) {
  (void)keepdims;  // only out's shape, which the shim has checked
  const int nd = x.ndim();
  if (axis < -nd || axis >= nd) throw opgen::Error(opgen::ErrorKind::Value, "axis out of range");
  if (axis < 0) axis += nd;
  T* dst = out.data<T>();
  const int64_t n_out = out.numel();
  if (n_out == 0) return;
  const int ax = static_cast<int>(axis);
  const int64_t K = x.size(ax), sK = x.stride(ax);
  if (K == 0) {  // the empty sum: 0
    for (int64_t i = 0; i < n_out; ++i) dst[i] = T(0);
    return;
  }
  const T* src = x.data<T>();

  int kd = 0;
  int64_t shape[OPGEN_MAX_DIMS], stride[OPGEN_MAX_DIMS];
  for (int d = 0; d < nd; ++d) {
    if (d == ax || x.size(d) == 1) continue;
    if (kd > 0 && stride[kd - 1] == x.stride(d) * x.size(d)) {
      shape[kd - 1] *= x.size(d);
      stride[kd - 1] = x.stride(d);
    } else {
      shape[kd] = x.size(d);
      stride[kd] = x.stride(d);
      ++kd;
    }
  }
  if (kd == 0) {  // a single output
    dst[0] = root(lane_sq(src, K, sK));
    return;
  }
  const int64_t run = shape[kd - 1], run_stride = stride[kd - 1];
  const int64_t runs = n_out / run;
  const bool along = std::llabs(sK) <= std::llabs(run_stride);

  constexpr int64_t kCols = 256;
  std::vector<double> buf;
  if (!along) {
    int levels = 2;
    for (int64_t k = K; k > 32; k = (k + 1) / 2) ++levels;
    buf.assign(static_cast<size_t>(levels) * kCols, 0.0);
  }
  int64_t idx[OPGEN_MAX_DIMS] = {};
  int64_t off = 0;
  for (int64_t r = 0; r < runs; ++r) {
    T* o = dst + r * run;
    const T* base = src + off;
    if (along) {
      for (int64_t j = 0; j < run; ++j) o[j] = root(lane_sq(base + j * run_stride, K, sK));
    } else {
      for (int64_t j0 = 0; j0 < run; j0 += kCols) {
        const int64_t m = run - j0 < kCols ? run - j0 : kCols;
        col_sq(base + j0 * run_stride, K, sK, run_stride, m, buf.data(), buf.data() + m);
        for (int64_t j = 0; j < m; ++j) o[j0 + j] = root(buf[j]);
      }
    }
    for (int d = kd - 2; d >= 0; --d) {
      if (++idx[d] < shape[d]) {
        off += stride[d];
        break;
      }
      off -= stride[d] * (shape[d] - 1);
      idx[d] = 0;
    }
  }
}

}  // namespace opgen::kernels
