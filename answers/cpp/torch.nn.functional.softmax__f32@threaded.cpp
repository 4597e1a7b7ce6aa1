// torch.nn.functional.softmax, overload f32, variant `threaded`: softmax along `dim`,
// float32 arithmetic in 16-lane vectors, slices spread over OpenMP threads.
//
// Per slice: m = max (exact in float), e = exp(x - m) in float32 (range reduction
// x = k*ln2 + r, |r| <= ln2/2, degree-7 Taylor polynomial: ~1 ulp), the sum accumulated
// in 16 float lanes and reduced in double (each lane sums n/16 terms: relative error
// ~n/16 * 6e-8 = 3e-6 for n = 812, well inside rtol 5e-5), out = e * (1/sum).
// Where x - m < -87.3 the exact result is below float32's smallest normal (and below the
// spec's atol), so it is written as 0: this also gives masked (-inf) entries exactly 0.
// Special slices follow PyTorch: a nan anywhere, a +inf (inf - inf), or all -inf give a
// slice of nan.
// Layouts: when the slice is contiguous in x and in out (the attention-scores case) it is
// read and written in place; otherwise each thread gathers the slice into its own buffer
// and scatters the result (out is contiguous; its slices are `inner` apart when `dim`
// is not the last dim). Small tensors stay on one thread.
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

// exp(d) for d <= 0 (d - m of a finite slice); lanes with d < -87.3 give 0.
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

inline float exp1(float d) {  // the same formula on one element, for the tail
  float in[L] = {}, outv[L];
  in[0] = d;
  store(outv, exp16(load(in)));
  return outv[0];
}

// Softmax of n >= 1 contiguous elements x into y (y may equal x's buffer copy).
void softmax_contiguous(const float* x, int64_t n, float* y) {
  const float ninf = -std::numeric_limits<float>::infinity();
  v16f mv = splat(ninf);
  v16i nanv = {};
  int64_t i = 0;
  for (; i + L <= n; i += L) {
    const v16f v = load(x + i);
    nanv |= v != v;
    mv = v > mv ? v : mv;
  }
  float m = ninf;
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
    for (int64_t j = 0; j < n; ++j) y[j] = std::numeric_limits<float>::quiet_NaN();
    return;
  }
  const v16f mm = splat(m);
  v16f sv = splat(0.0f);
  i = 0;
  for (; i + L <= n; i += L) {
    const v16f e = exp16(load(x + i) - mm);
    store(y + i, e);
    sv += e;
  }
  double sum = 0.0;
  for (; i < n; ++i) {
    y[i] = exp1(x[i] - m);
    sum += y[i];
  }
  for (int l = 0; l < L; ++l) sum += sv[l];
  const float inv = static_cast<float>(1.0 / sum);
  const v16f iv = splat(inv);
  i = 0;
  for (; i + L <= n; i += L) store(y + i, load(y + i) * iv);
  for (; i < n; ++i) y[i] *= inv;
}

}  // namespace

void torch_nn_functional_softmax__f32(const opgen::Tensor& x, int64_t dim, opgen::Tensor& out) {
  const int nd = x.ndim();
  const int rank = nd == 0 ? 1 : nd;  // PyTorch treats a 0-d tensor as one slice of one
  if (dim < -rank || dim >= rank) throw opgen::Error(opgen::ErrorKind::Value, "dim out of range");
  if (dim < 0) dim += rank;
  if (x.numel() == 0) return;
  const float* src = x.data<float>();
  float* dst = out.data<float>();
  if (nd == 0) {
    softmax_contiguous(src, 1, dst);
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
  const bool parallel = x.numel() >= 32768 && slices > 1;

#pragma omp parallel if (parallel)
  {
    std::vector<float> buf(in_place ? 0 : static_cast<size_t>(2 * n));
#pragma omp for schedule(static)
    for (int64_t s = 0; s < slices; ++s) {
      int64_t off = 0, rest = s;
      for (int d = 0; d < od; ++d) {
        off += (rest % oshape[d]) * ostride[d];
        rest /= oshape[d];
      }
      // Slice s of out starts at (s / inner) * n * inner + s % inner, step inner.
      float* y = dst + (s / inner) * n * inner + s % inner;
      if (in_place) {
        softmax_contiguous(src + off, n, y);
        continue;
      }
      float* xin = buf.data();
      float* yout = buf.data() + n;
      for (int64_t q = 0; q < n; ++q) xin[q] = src[off + q * sn];
      softmax_contiguous(xin, n, yout);
      for (int64_t q = 0; q < n; ++q) y[q * inner] = yout[q];
    }
  }
}

}  // namespace opgen::kernels
