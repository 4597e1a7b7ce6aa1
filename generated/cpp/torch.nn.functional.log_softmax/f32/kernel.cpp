// torch.nn.functional.log_softmax, overload f32: log-softmax of a float32 tensor along `dim`.
//
// Per slice, as PyTorch defines it: m = max (exact in float), s = sum(exp(x - m)),
// out = (x - m) - log(s). Never log(softmax): very negative entries keep their finite value.
// exp runs in float32 in 16-lane vectors (range reduction x = k*ln2 + r, |r| <= ln2/2,
// degree-7 Taylor polynomial: ~1 ulp); the sum is accumulated in 16 float lanes over blocks
// of 1024 elements and the blocks in double (relative error ~64 * 6e-8 = 4e-6 at most, an
// absolute error of that size in log(s)); log(s) in float, of the double sum rounded to float
// (u/2 and an ulp of L: below u * |out|). The last pass, (x - m) - L, is two
// float32 roundings, each at most half an ulp of |out| (x - m and L are both <= |out|).
// Where x - m < -87.3 exp is taken as 0: next to the max's own term 1 it is far below an ulp
// of the sum; -inf entries give (-inf - m) - L = -inf.
// Special slices follow PyTorch: a nan anywhere, a +inf (inf - inf), or all -inf give a
// slice of nan. A slice of one element gives 0.
// Layouts: a slice contiguous in x and in out (dim last, the logits case) is read and
// written in place; a C-contiguous x with `dim` not the last has up to 64 neighbouring slices
// processed side by side, a row at a time (contiguous, vectorised rows); otherwise each thread
// gathers the slice into its own buffer and scatters the result (out is contiguous; its slices
// are `inner` apart when `dim` is not the last dim). Any strides (0, negative). 0-d and 0-size tensors. Large tensors spread their slices
// over OpenMP threads.
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

typedef float v16f __attribute__((vector_size(64)));
typedef int32_t v16i __attribute__((vector_size(64)));
typedef uint32_t v16u __attribute__((vector_size(64)));
constexpr int L = 16;

inline v16f splat(float v) { return v16f{} + v; }
inline v16f load(const float* p) {
  v16f v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void store(float* p, v16f v) { std::memcpy(p, &v, sizeof v); }

// exp(d) for d <= 0 (x - m of a finite slice, or -inf); lanes with d < -87.3 give 0.
inline v16f exp16(v16f d) {
  const v16f lo = splat(-87.3f);
  const v16i tiny = d < lo;
  d = d < lo ? lo : d;
  const v16f kShift = splat(0x1.8p23f);
  v16f kd = d * splat(0x1.715476p+0f) + kShift;  // round(d / ln2) in the low mantissa bits
  const v16u kbits = (v16u)kd;
  kd -= kShift;
  const v16f r = (d - kd * splat(0x1.62e400p-1f)) - kd * splat(0x1.7f7d1cp-20f);  // ln2 split hi/lo
  v16f p = splat(1.0f / 5040.0f);
  p = p * r + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  const v16f scale = (v16f)((kbits + 127u) << 23);  // 2**k, k in [-126, 0]
  const v16f e = p * scale;
  return tiny ? splat(0.0f) : e;
}

// log-softmax of n >= 1 contiguous elements x into y (contiguous).
void log_softmax_contiguous(const float* x, int64_t n, float* y) {
  const float ninf = -std::numeric_limits<float>::infinity();
  v16f mv = splat(ninf);
  v16i nanv = {};
  int64_t i = 0;
  for (; i + L <= n; i += L) {
    const v16f v = load(x + i);
    nanv |= v != v;
    mv = v > mv ? v : mv;
  }
  alignas(64) float mx[L];
  alignas(64) int32_t nx[L];
  store(mx, mv);
  std::memcpy(nx, &nanv, sizeof nx);
  for (int w = L / 2; w >= 1; w /= 2) {  // tree reductions: short rows pay little for them
    for (int l = 0; l < w; ++l) {
      mx[l] = mx[l + w] > mx[l] ? mx[l + w] : mx[l];
      nx[l] |= nx[l + w];
    }
  }
  float m = mx[0];
  bool bad = nx[0] != 0;
  for (; i < n; ++i) {
    bad |= x[i] != x[i];
    m = x[i] > m ? x[i] : m;
  }
  if (bad || std::isinf(m)) {  // nan, +inf, or every entry -inf: PyTorch's slice of nan
    for (int64_t j = 0; j < n; ++j) y[j] = std::numeric_limits<float>::quiet_NaN();
    return;
  }
  const v16f mm = splat(m);
  double acc[L] = {};
  i = 0;
  while (i + L <= n) {
    const int64_t end = (n - i) / L > 64 ? i + 64 * L : i + ((n - i) / L) * L;
    v16f sv = splat(0.0f);
    for (; i < end; i += L) sv += exp16(load(x + i) - mm);
    for (int l = 0; l < L; ++l) acc[l] += static_cast<double>(sv[l]);
  }
  if (i < n) {  // the tail, padded with -inf (exp 0)
    float t[L];
    for (int l = 0; l < L; ++l) t[l] = i + l < n ? x[i + l] - m : ninf;
    const v16f e = exp16(load(t));
    for (int l = 0; l < L; ++l) acc[l] += static_cast<double>(e[l]);
  }
  for (int w = L / 2; w >= 1; w /= 2)
    for (int l = 0; l < w; ++l) acc[l] += acc[l + w];
  // log in float of the sum rounded to float: u/2 + an ulp of L, both below u * |out|.
  const float lse = std::log(static_cast<float>(acc[0]));
  const v16f lv = splat(lse);
  i = 0;
  for (; i + L <= n; i += L) store(y + i, (load(x + i) - mm) - lv);
  for (; i < n; ++i) y[i] = (x[i] - m) - lse;
}


constexpr int64_t kC = 64;  // columns processed side by side when `dim` is not the last

// log-softmax of c <= kC slices side by side: slice j has its n elements at x[q * inner + j],
// and its results go to y[q * inner + j] (x contiguous, out the same layout). Every pass runs
// along rows of the c slices, so reads and writes stay contiguous.
void log_softmax_columns(const float* x, int64_t n, int64_t inner, int64_t c, float* y) {
  const float ninf = -std::numeric_limits<float>::infinity();
  alignas(64) float m[kC], lse[kC], row[kC];
  alignas(64) int32_t bad[kC];
  alignas(64) float part[kC];
  double sum[kC];
  const int64_t cp = (c + L - 1) / L * L;  // padded to whole vectors
  for (int64_t j = 0; j < kC; ++j) {
    m[j] = ninf;
    bad[j] = 0;
    part[j] = 0.0f;
    sum[j] = 0.0;
  }
  for (int64_t q = 0; q < n; ++q) {
    const float* r = x + q * inner;
    for (int64_t j = 0; j < c; ++j) {
      bad[j] |= r[j] != r[j];
      m[j] = r[j] > m[j] ? r[j] : m[j];
    }
  }
  for (int64_t j = 0; j < cp; ++j) {
    bad[j] |= j >= c || std::isinf(m[j]);
    if (bad[j]) m[j] = 0.0f;  // such a slice is nan whatever its sum holds
  }
  for (int64_t q = 0; q < n; ++q) {
    const float* r = x + q * inner;
    std::memcpy(row, r, static_cast<size_t>(c) * sizeof(float));
    for (int64_t j = c; j < cp; ++j) row[j] = ninf;  // padding: exp 0
    for (int64_t j = 0; j < cp; j += L) store(part + j, load(part + j) + exp16(load(row + j) - load(m + j)));
    if ((q & 63) == 63 || q == n - 1) {  // 64 terms per float lane, then into the double sums
      for (int64_t j = 0; j < cp; ++j) {
        sum[j] += static_cast<double>(part[j]);
        part[j] = 0.0f;
      }
    }
  }
  for (int64_t j = 0; j < c; ++j)
    lse[j] = bad[j] ? std::numeric_limits<float>::quiet_NaN() : static_cast<float>(std::log(sum[j]));
  for (int64_t q = 0; q < n; ++q) {
    const float* r = x + q * inner;
    float* w = y + q * inner;
    for (int64_t j = 0; j < c; ++j) w[j] = (r[j] - m[j]) - lse[j];
  }
}

}  // namespace

void torch_nn_functional_log_softmax__f32(const opgen::Tensor& x, int64_t dim, opgen::Tensor& out) {
  const int nd = x.ndim();
  const int rank = nd == 0 ? 1 : nd;  // PyTorch treats a 0-d tensor as one slice of one
  if (dim < -rank || dim >= rank) throw opgen::Error(opgen::ErrorKind::Value, "dim out of range");
  if (dim < 0) dim += rank;
  if (x.numel() == 0) return;
  const float* src = x.data<float>();
  float* dst = out.data<float>();
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
    std::vector<float> buf(in_place ? 0 : static_cast<size_t>(2 * n));
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
      float* y = inner == 1 ? dst + s * n : dst + (s / inner) * n * inner + s % inner;
      if (in_place) {
        log_softmax_contiguous(src + off, n, y);
        continue;
      }
      float* xin = buf.data();
      float* yout = buf.data() + n;
      for (int64_t q = 0; q < n; ++q) xin[q] = src[off + q * sn];
      log_softmax_contiguous(xin, n, yout);
      for (int64_t q = 0; q < n; ++q) y[q * inner] = yout[q];
    }
  }
}

}  // namespace opgen::kernels
