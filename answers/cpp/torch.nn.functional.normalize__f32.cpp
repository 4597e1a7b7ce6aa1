// torch.nn.functional.normalize, overload f32: out = x / max(||x||_2, eps) along `dim`.
//
// Only p = 2 is native (anything else throws ValueError). The sum of squares is taken in
// double (eight lanes at a time), so it neither overflows nor loses the small terms; the
// norm is clamped to eps as PyTorch's clamp_min does (a nan norm stays nan), and each
// element is x * (1 / norm) in double, rounded once to float32: within an ulp of the exact
// quotient. An inf in a slice makes its norm inf: finite entries become 0, infinite ones
// nan (inf * 0), as PyTorch's inf / inf. A 0-d input is one slice of one element.
//
// Layout: out is contiguous with x's shape, viewed as (outer, n, inner) around `dim`. When
// the slices are contiguous rows (inner == 1, x's stride along dim 1) each row is reduced
// and scaled with vector loops. Otherwise the inner positions of one outer index are
// processed side by side: the sums of squares of all of them accumulate in a double
// buffer while x is walked in its own order, then every element is scaled.
#include "opgen_kernel.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

namespace opgen::kernels {

namespace {

#pragma GCC diagnostic ignored "-Wpsabi"  // the vector types never cross a library boundary

using T = float;
typedef double v8d __attribute__((vector_size(64)));
typedef float v8f __attribute__((vector_size(32)));

inline v8d load8(const T* p) {
  v8f v;
  std::memcpy(&v, p, sizeof v);
  return __builtin_convertvector(v, v8d);
}

inline void store8(T* p, v8d v) {
  const v8f f = __builtin_convertvector(v, v8f);
  std::memcpy(p, &f, sizeof f);
}

// PyTorch's clamp_min(eps): a nan norm stays nan.
inline double clamp_norm(double sumsq, double eps) {
  const double norm = std::sqrt(sumsq);
  return norm < eps ? eps : norm;
}

// One contiguous slice of n elements.
void normalize_row(const T* x, int64_t n, double eps, T* y) {
  v8d acc0 = {}, acc1 = {};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const v8d a = load8(x + i), b = load8(x + i + 8);
    acc0 += a * a;
    acc1 += b * b;
  }
  for (; i + 8 <= n; i += 8) {
    const v8d a = load8(x + i);
    acc0 += a * a;
  }
  acc0 += acc1;
  double s = ((acc0[0] + acc0[1]) + (acc0[2] + acc0[3])) + ((acc0[4] + acc0[5]) + (acc0[6] + acc0[7]));
  for (; i < n; ++i) s += static_cast<double>(x[i]) * static_cast<double>(x[i]);
  const double inv = 1.0 / clamp_norm(s, eps);
  const v8d vinv = {inv, inv, inv, inv, inv, inv, inv, inv};
  i = 0;
  for (; i + 8 <= n; i += 8) store8(y + i, load8(x + i) * vinv);
  for (; i < n; ++i) y[i] = static_cast<T>(static_cast<double>(x[i]) * inv);
}

}  // namespace

void torch_nn_functional_normalize__f32(const opgen::Tensor& input, double p, int64_t dim, double eps,
                                        opgen::Tensor& out) {
  if (p != 2.0) throw opgen::Error(opgen::ErrorKind::Value, "only p = 2 (the L2 norm) is supported natively");
  const int nd = input.ndim();
  const T* X = input.data<T>();
  T* Y = out.data<T>();
  if (nd == 0) {  // one slice of one element; dim must be 0 or -1
    if (dim < -1 || dim > 0) throw opgen::Error(opgen::ErrorKind::Value, "dim out of range for a 0-d tensor");
    const double x = X[0];
    Y[0] = static_cast<T>(x * (1.0 / clamp_norm(x * x, eps)));
    return;
  }
  if (dim < -nd || dim >= nd) throw opgen::Error(opgen::ErrorKind::Value, "dim out of range");
  const int ax = static_cast<int>(dim < 0 ? dim + nd : dim);
  if (input.numel() == 0) return;
  const int64_t n = input.size(ax), sn = input.stride(ax);
  int64_t inner = 1;
  for (int d = ax + 1; d < nd; ++d) inner *= input.size(d);

  // Outer positions are walked with an odometer over dims [0, ax), inner ones over (ax, nd).
  int64_t oidx[OPGEN_MAX_DIMS] = {};
  int64_t ooff = 0, obase = 0;
  int64_t outer = 1;
  for (int d = 0; d < ax; ++d) outer *= input.size(d);
  std::vector<double> acc(inner > 1 ? static_cast<size_t>(inner) : 0);
  std::vector<T> row(sn != 1 && inner == 1 ? static_cast<size_t>(n) : 0);
  for (int64_t o = 0; o < outer; ++o, obase += n * inner) {
    const T* xo = X + ooff;
    T* yo = Y + obase;
    if (inner == 1) {
      if (sn == 1) {
        normalize_row(xo, n, eps, yo);
      } else {  // gather the strided slice, then the contiguous path
        for (int64_t i = 0; i < n; ++i) row[static_cast<size_t>(i)] = xo[i * sn];
        normalize_row(row.data(), n, eps, yo);
      }
    } else {
      // All inner positions of this outer index side by side.
      std::fill(acc.begin(), acc.end(), 0.0);
      for (int pass = 0; pass < 2; ++pass) {
        for (int64_t i = 0; i < n; ++i) {
          int64_t iidx[OPGEN_MAX_DIMS] = {};
          int64_t ioff = i * sn;
          for (int64_t j = 0; j < inner; ++j) {
            const double x = xo[ioff];
            if (pass == 0) {
              acc[static_cast<size_t>(j)] += x * x;
            } else {
              yo[i * inner + j] = static_cast<T>(x * acc[static_cast<size_t>(j)]);
            }
            for (int d = nd - 1; d > ax; --d) {
              if (++iidx[d] < input.size(d)) {
                ioff += input.stride(d);
                break;
              }
              ioff -= input.stride(d) * (input.size(d) - 1);
              iidx[d] = 0;
            }
          }
        }
        if (pass == 0)
          for (double& a : acc) a = 1.0 / clamp_norm(a, eps);
      }
    }
    for (int d = ax - 1; d >= 0; --d) {
      if (++oidx[d] < input.size(d)) {
        ooff += input.stride(d);
        break;
      }
      ooff -= input.stride(d) * (input.size(d) - 1);
      oidx[d] = 0;
    }
  }
}

}  // namespace opgen::kernels
