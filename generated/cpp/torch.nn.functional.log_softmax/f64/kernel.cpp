// torch.nn.functional.log_softmax, overload f64: log-softmax of a float64 tensor along `dim`.
//
// Per slice, as PyTorch defines it: m = max, s = sum(exp(x - m)), out = (x - m) - log(s).
// Never log(softmax): very negative entries keep their finite value.
// exp runs in 8-lane double vectors (range reduction x = k*ln2 + r, |r| <= ln2/2, degree-13
// Taylor polynomial: about 1 ulp); the sum in 8 double lanes (per lane blocks of 64 terms);
// log(s) by std::log. The last pass, (x - m) - L, is two roundings, each at most half an ulp
// of |out| (x - m and L are both <= |out|). Where x - m < -708 exp is taken as 0: next to the
// max's own term 1 it is far below an ulp of the sum; -inf entries give (-inf - m) - L = -inf.
// Special slices follow PyTorch: a nan anywhere, a +inf (inf - inf), or all -inf give a
// slice of nan. A slice of one element gives 0.
// Layouts: a slice contiguous in x and in out (dim last) is read and written in place; a
// C-contiguous x with `dim` not the last has up to 64 neighbouring slices processed side by
// side, a row at a time (contiguous, vectorised rows); otherwise each thread gathers the slice
// into its own buffer and scatters the result (out is contiguous; its slices are `inner` apart
// when `dim` is not the last dim). Any strides
// (0, negative). 0-d and 0-size tensors. Large tensors spread their slices over OpenMP threads.
#include "opgen_kernel.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>
#ifdef _OPENMP
#include <omp.h>
#endif

namespace opgen::kernels {

namespace {

#pragma GCC diagnostic ignored "-Wpsabi"  // vector types never cross a library boundary

typedef double v8d __attribute__((vector_size(64)));
typedef int64_t v8i __attribute__((vector_size(64)));
typedef uint64_t v8u __attribute__((vector_size(64)));
constexpr int L = 8;

inline v8d splat(double v) { return v8d{} + v; }
inline v8d load(const double* p) {
  v8d v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void store(double* p, v8d v) { std::memcpy(p, &v, sizeof v); }

// exp(d) for d <= 0 (x - m of a finite slice, or -inf); lanes with d < -708 give 0.
// d = k*ln2 + r, |r| <= ln2/2, exp(r) by its degree-13 Taylor polynomial (truncation
// 4e-18 relative; about 1 ulp with the rounding of Horner's rule), 2**k in the exponent bits.
inline v8d exp8(v8d d) {
  const v8d lo = splat(-708.0);
  const v8i tiny = d < lo;
  d = d < lo ? lo : d;
  const v8d kShift = splat(0x1.8p52);
  v8d kd = d * splat(0x1.71547652b82fep+0) + kShift;
  const v8u kbits = (v8u)kd;
  kd -= kShift;
  const v8d r = (d - kd * splat(0x1.62e42fefa0000p-1)) - kd * splat(0x1.cf79abc9e3b3ap-40);
  v8d p = splat(1.0 / 6227020800.0);
  p = p * r + 1.0 / 479001600.0;
  p = p * r + 1.0 / 39916800.0;
  p = p * r + 1.0 / 3628800.0;
  p = p * r + 1.0 / 362880.0;
  p = p * r + 1.0 / 40320.0;
  p = p * r + 1.0 / 5040.0;
  p = p * r + 1.0 / 720.0;
  p = p * r + 1.0 / 120.0;
  p = p * r + 1.0 / 24.0;
  p = p * r + 1.0 / 6.0;
  p = p * r + 0.5;
  p = p * r + 1.0;
  p = p * r + 1.0;
  const v8d scale = (v8d)((kbits + 1023u) << 52);  // 2**k, k in [-1022, 0]
  const v8d e = p * scale;
  return tiny ? splat(0.0) : e;
}

// log-softmax of n >= 1 contiguous elements x into y (contiguous).
void log_softmax_contiguous(const double* x, int64_t n, double* y) {
  const double ninf = -std::numeric_limits<double>::infinity();
  v8d mv = splat(ninf);
  v8i nanv = {};
  int64_t i = 0;
  for (; i + L <= n; i += L) {
    const v8d v = load(x + i);
    nanv |= v != v;
    mv = v > mv ? v : mv;
  }
  double m = ninf;
  bool bad = false;
  for (int l = 0; l < L; ++l) {
    m = mv[l] > m ? mv[l] : m;
    bad |= nanv[l] != 0;
  }
  for (; i < n; ++i) {
    bad |= x[i] != x[i];
    m = x[i] > m ? x[i] : m;
  }
  if (bad || std::isinf(m)) {  // nan, +inf, or every entry -inf: PyTorch's slice of nan
    for (int64_t j = 0; j < n; ++j) y[j] = std::numeric_limits<double>::quiet_NaN();
    return;
  }
  const v8d mm = splat(m);
  double acc[L] = {};
  i = 0;
  while (i + L <= n) {
    const int64_t end = (n - i) / L > 64 ? i + 64 * L : i + ((n - i) / L) * L;
    v8d sv = splat(0.0f);
    for (; i < end; i += L) sv += exp8(load(x + i) - mm);
    for (int l = 0; l < L; ++l) acc[l] += static_cast<double>(sv[l]);
  }
  if (i < n) {  // the tail, padded with -inf (exp 0)
    double t[L];
    for (int l = 0; l < L; ++l) t[l] = i + l < n ? x[i + l] - m : ninf;
    const v8d e = exp8(load(t));
    for (int l = 0; l < L; ++l) acc[l] += static_cast<double>(e[l]);
  }
  double sum = 0.0;
  for (int l = 0; l < L; ++l) sum += acc[l];
  const double lse = std::log(sum);
  const v8d lv = splat(lse);
  i = 0;
  for (; i + L <= n; i += L) store(y + i, (load(x + i) - mm) - lv);
  for (; i < n; ++i) y[i] = (x[i] - m) - lse;
}


constexpr int64_t kC = 64;  // columns processed side by side when `dim` is not the last

// log-softmax of c <= kC slices side by side: slice j has its n elements at x[q * inner + j],
// and its results go to y[q * inner + j] (x contiguous, out the same layout). Every pass runs
// along rows of the c slices, so reads and writes stay contiguous.
void log_softmax_columns(const double* x, int64_t n, int64_t inner, int64_t c, double* y) {
  const double ninf = -std::numeric_limits<double>::infinity();
  alignas(64) double m[kC], lse[kC], row[kC], sum[kC];
  alignas(64) int32_t bad[kC];
  const int64_t cp = (c + L - 1) / L * L;  // padded to whole vectors
  for (int64_t j = 0; j < kC; ++j) {
    m[j] = ninf;
    bad[j] = 0;
    sum[j] = 0.0;
  }
  for (int64_t q = 0; q < n; ++q) {
    const double* r = x + q * inner;
    for (int64_t j = 0; j < c; ++j) {
      bad[j] |= r[j] != r[j];
      m[j] = r[j] > m[j] ? r[j] : m[j];
    }
  }
  for (int64_t j = 0; j < cp; ++j) {
    bad[j] |= j >= c || std::isinf(m[j]);
    if (bad[j]) m[j] = 0.0;  // such a slice is nan whatever its sum holds
  }
  for (int64_t q = 0; q < n; ++q) {
    std::memcpy(row, x + q * inner, static_cast<size_t>(c) * sizeof(double));
    for (int64_t j = c; j < cp; ++j) row[j] = ninf;  // padding: exp 0
    for (int64_t j = 0; j < cp; j += L) store(sum + j, load(sum + j) + exp8(load(row + j) - load(m + j)));
  }
  for (int64_t j = 0; j < c; ++j) lse[j] = bad[j] ? std::numeric_limits<double>::quiet_NaN() : std::log(sum[j]);
  for (int64_t q = 0; q < n; ++q) {
    const double* r = x + q * inner;
    double* w = y + q * inner;
    for (int64_t j = 0; j < c; ++j) w[j] = (r[j] - m[j]) - lse[j];
  }
}

}  // namespace

void torch_nn_functional_log_softmax__f64(const opgen::Tensor& x, int64_t dim, opgen::Tensor& out) {
  const int nd = x.ndim();
  const int rank = nd == 0 ? 1 : nd;  // PyTorch treats a 0-d tensor as one slice of one
  if (dim < -rank || dim >= rank) throw opgen::Error(opgen::ErrorKind::Value, "dim out of range");
  if (dim < 0) dim += rank;
  if (x.numel() == 0) return;
  const double* src = x.data<double>();
  double* dst = out.data<double>();
  if (nd == 0) {
    log_softmax_contiguous(src, 1, dst);
    return;
  }
  const int sd = static_cast<int>(dim);
  const int64_t n = x.size(sd), sn = x.stride(sd);
  int64_t inner = 1;  // elements of out between neighbours of a slice
  for (int d = sd + 1; d < nd; ++d) inner *= x.size(d);
  const int64_t slices = x.numel() / n;
  // The other dims, last first, to turn a slice number into x's offset.
  int64_t oshape[OPGEN_MAX_DIMS], ostride[OPGEN_MAX_DIMS];
  int od = 0;
  for (int d = nd - 1; d >= 0; --d) {
    if (d == sd) continue;
    oshape[od] = x.size(d);
    ostride[od] = x.stride(d);
    ++od;
  }
  const bool in_place = sn == 1 && inner == 1;
  // Threads only for tensors of 4M elements and more: below that one thread takes about a
  // millisecond or less, and an OpenMP team costs more than it saves on a busy machine (measured:
  // 1.5M elements took 19 ms on two contended threads, 0.75 ms on one).
  const bool parallel = x.numel() >= (int64_t(1) << 22) && slices > 1;
  bool contiguous = true;  // x C-contiguous: out's layout, slices side by side in rows
  {
    int64_t expect = 1;
    for (int d = nd - 1; d >= 0; --d) {
      if (x.size(d) != 1 && x.stride(d) != expect) contiguous = false;
      expect *= x.size(d);
    }
  }
  if (contiguous && inner > 1) {
    const int64_t outer = slices / inner, blocks = (inner + kC - 1) / kC;
#pragma omp parallel for schedule(static) if (parallel)
    for (int64_t b = 0; b < outer * blocks; ++b) {
      const int64_t o = b / blocks, j0 = (b % blocks) * kC;
      const int64_t c = inner - j0 < kC ? inner - j0 : kC;
      log_softmax_columns(src + o * n * inner + j0, n, inner, c, dst + o * n * inner + j0);
    }
    return;
  }

#pragma omp parallel if (parallel)
  {
    std::vector<double> buf(in_place ? 0 : static_cast<size_t>(2 * n));
#pragma omp for schedule(static)
    for (int64_t s = 0; s < slices; ++s) {
      int64_t off = 0, rest = s;
      if (contiguous) {
        off = s * n;  // inner == 1 here
      } else {
        for (int d = 0; d < od; ++d) {
          off += (rest % oshape[d]) * ostride[d];
          rest /= oshape[d];
        }
      }
      // Slice s of out starts at (s / inner) * n * inner + s % inner, step inner.
      double* y = inner == 1 ? dst + s * n : dst + (s / inner) * n * inner + s % inner;
      if (in_place) {
        log_softmax_contiguous(src + off, n, y);
        continue;
      }
      double* xin = buf.data();
      double* yout = buf.data() + n;
      for (int64_t q = 0; q < n; ++q) xin[q] = src[off + q * sn];
      log_softmax_contiguous(xin, n, yout);
      for (int64_t q = 0; q < n; ++q) y[q * inner] = yout[q];
    }
  }
}

}  // namespace opgen::kernels
