// numpy.mean, overload f64: numpy.mean(a, axis=axis, keepdims=keepdims) for double tensors.
//
// The sum along the axis (accumulated in double, as numpy.sum's kernel: pairwise along a
// fast-moving axis, blocked column sums otherwise) divided by the axis length, rounded to
// the output type once. keepdims only changes out's shape, not its element order (the
// shim has checked the shape). An empty axis gives nan (0/0); nan and inf propagate.
#include "opgen_kernel.hpp"

#include <cstdint>
#include <cstdlib>
#include <limits>

namespace opgen::kernels {

namespace {

using T = double;

// Pairwise sum of n elements `s` apart.
double pairwise(const T* p, int64_t n, int64_t s) {
  if (n <= 128) {
    double acc[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    int64_t i = 0;
    if (s == 1) {
      for (; i + 16 <= n; i += 16)
        for (int j = 0; j < 16; ++j) acc[j] += static_cast<double>(p[i + j]);
    } else {
      for (; i + 16 <= n; i += 16)
        for (int j = 0; j < 16; ++j) acc[j] += static_cast<double>(p[(i + j) * s]);
    }
    for (int w = 8; w >= 1; w /= 2)
      for (int j = 0; j < w; ++j) acc[j] += acc[j + w];
    double r = acc[0];
    for (; i < n; ++i) r += static_cast<double>(p[i * s]);
    return r;
  }
  const int64_t half = (n / 2) & ~static_cast<int64_t>(15);
  return pairwise(p, half, s) + pairwise(p + half * s, n - half, s);
}

// dst[j] += src[j * s] for j < m.
inline void add_row(double* __restrict dst, const T* __restrict src, int64_t s, int64_t m) {
  if (s == 1) {
    for (int64_t j = 0; j < m; ++j) dst[j] += static_cast<double>(src[j]);
  } else {
    for (int64_t j = 0; j < m; ++j) dst[j] += static_cast<double>(src[j * s]);
  }
}

// dst[j] += (r0[j*s] + r1[j*s]) + (r2[j*s] + r3[j*s]) for j < m, rows rK apart.
inline void add_4rows(double* __restrict dst, const T* __restrict src, int64_t rK, int64_t s, int64_t m) {
  const T* r0 = src;
  const T* r1 = src + rK;
  const T* r2 = src + 2 * rK;
  const T* r3 = src + 3 * rK;
  if (s == 1) {
    for (int64_t j = 0; j < m; ++j)
      dst[j] += (static_cast<double>(r0[j]) + static_cast<double>(r1[j])) +
                (static_cast<double>(r2[j]) + static_cast<double>(r3[j]));
  } else {
    for (int64_t j = 0; j < m; ++j)
      dst[j] += (static_cast<double>(r0[j * s]) + static_cast<double>(r1[j * s])) +
                (static_cast<double>(r2[j * s]) + static_cast<double>(r3[j * s]));
  }
}

}  // namespace

void numpy_mean__f64(const opgen::Tensor& a, int64_t axis, bool keepdims, opgen::Tensor& out) {
  (void)keepdims;
  const int nd = a.ndim();
  if (axis < -nd || axis >= nd) throw opgen::Error(opgen::ErrorKind::Value, "axis out of range");
  if (axis < 0) axis += nd;
  T* dst = out.data<T>();
  const int64_t n_out = out.numel();
  if (n_out == 0) return;
  const int64_t K = a.size(static_cast<int>(axis)), sK = a.stride(static_cast<int>(axis));
  if (K == 0) {
    for (int64_t i = 0; i < n_out; ++i) dst[i] = std::numeric_limits<T>::quiet_NaN();
    return;
  }
  const T* src = a.data<T>();
  const double inv_n = static_cast<double>(K);

  // The kept dims in order (out is contiguous in that order), size-1 dims dropped and
  // neighbours merged where the strides allow.
  int kd = 0;
  int64_t shape[OPGEN_MAX_DIMS], stride[OPGEN_MAX_DIMS];
  for (int d = 0; d < nd; ++d) {
    if (d == axis || a.size(d) == 1) continue;
    if (kd > 0 && stride[kd - 1] == a.stride(d) * a.size(d)) {
      shape[kd - 1] *= a.size(d);
      stride[kd - 1] = a.stride(d);
    } else {
      shape[kd] = a.size(d);
      stride[kd] = a.stride(d);
      ++kd;
    }
  }
  if (kd == 0) {  // a single output
    dst[0] = static_cast<T>(pairwise(src, K, sK) / inv_n);
    return;
  }
  const int64_t run = shape[kd - 1], run_stride = stride[kd - 1];
  const int64_t runs = n_out / run;
  const bool along = K >= 16 && std::llabs(sK) <= std::llabs(run_stride);

  constexpr int64_t kCols = 512;   // outputs accumulated together
  constexpr int64_t kBlock = 64;   // rows per partial sum
  double total[kCols], part[kCols];

  int64_t idx[OPGEN_MAX_DIMS] = {};
  int64_t off = 0;
  for (int64_t r = 0; r < runs; ++r) {
    T* o = dst + r * run;
    const T* base = src + off;
    if (along) {
      for (int64_t j = 0; j < run; ++j) o[j] = static_cast<T>(pairwise(base + j * run_stride, K, sK) / inv_n);
    } else {
      for (int64_t j0 = 0; j0 < run; j0 += kCols) {
        const int64_t m = run - j0 < kCols ? run - j0 : kCols;
        const T* col = base + j0 * run_stride;
        for (int64_t j = 0; j < m; ++j) total[j] = 0.0;
        for (int64_t k0 = 0; k0 < K; k0 += kBlock) {
          const int64_t k1 = K - k0 < kBlock ? K : k0 + kBlock;
          for (int64_t j = 0; j < m; ++j) part[j] = 0.0;
          int64_t k = k0;
          for (; k + 4 <= k1; k += 4) add_4rows(part, col + k * sK, sK, run_stride, m);
          for (; k < k1; ++k) add_row(part, col + k * sK, run_stride, m);
          for (int64_t j = 0; j < m; ++j) total[j] += part[j];
        }
        for (int64_t j = 0; j < m; ++j) o[j0 + j] = static_cast<T>(total[j] / inv_n);
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
