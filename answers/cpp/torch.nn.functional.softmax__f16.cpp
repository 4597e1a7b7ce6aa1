// torch.nn.functional.softmax, overload f16: float16 storage, float32 arithmetic. Written by scripts/half_kernels.py from
// answers/cpp/torch.nn.functional.softmax__f32.cpp (its algorithm, unchanged and private) and a widening wrapper.
// torch.nn.functional.softmax, overload f32: softmax of a float32 tensor along `dim`.
//
// Each slice along `dim` is computed as PyTorch defines it: m = max(slice),
// out = exp(x - m) * (1 / sum(exp(x - m))). Max, exp, sum and scaling run in double
// with eight-lane GCC vector extensions; exp is a branch-free degree-8 polynomial after
// k*ln2 range reduction (~3e-10 relative error). Results are rounded to float32 at the
// end (when slices are processed side by side, the exps are parked in `out` as float32
// and scaled in place: two roundings), so they are within about 1 ulp of the exact
// softmax of the float32 inputs.
// Special slices follow PyTorch: any nan makes the whole slice nan; a slice that is
// all -inf is nan (exp(-inf - -inf) = exp(nan)); a +inf makes the slice nan
// (inf - inf); other -inf entries get probability exactly 0. `dim` may be negative;
// x may be strided (any strides, including 0 and negative), 0-d or empty; `out` is
// contiguous with x's shape. When `dim` is not the innermost dim, up to 256 slices are
// processed side by side, a row at a time, so that reads and writes stay contiguous.
#include "opgen_kernel.hpp"

#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <vector>

namespace opgen::kernels {

namespace {

// The vector types below never cross a library boundary; silence GCC's note that their
// calling convention depends on -m flags (it appears when -march lacks AVX/AVX-512).
#pragma GCC diagnostic ignored "-Wpsabi"

using T = float;

typedef double v8d __attribute__((vector_size(64)));
typedef uint64_t v8u __attribute__((vector_size(64)));
typedef int64_t v8i __attribute__((vector_size(64)));

inline v8d splat(double v) { return v8d{v, v, v, v, v, v, v, v}; }

// exp of eight lanes of x - max (<= 0 or nan), in double to ~3e-10 relative: more than
// enough for a result rounded to float32. x = k*ln2 + r with |r| <= ln2/2, exp(r) by
// its degree-8 Taylor polynomial, times 2**k from the exponent bits. Inputs are clamped
// at -200 (exp(-200) / sum is far below float32's smallest subnormal, so such entries,
// -inf included, still come out as exactly 0).
inline v8d exp8(v8d x) {
  const v8d kShift = splat(0x1.8p52);
  const v8d kLog2e = splat(0x1.71547652b82fep+0);
  const v8d kLn2Hi = splat(0x1.62e42fee00000p-1);
  const v8d kLn2Lo = splat(0x1.a39ef35793c76p-33);
  const v8d lo = splat(-200.0);
  x = x < lo ? lo : x;
  v8d kd = x * kLog2e + kShift;
  const v8u kbits = (v8u)kd;
  kd -= kShift;
  const v8d r = (x - kd * kLn2Hi) - kd * kLn2Lo;
  v8d p = splat(1.0 / 40320.0);
  p = p * r + 1.0 / 5040.0;
  p = p * r + 1.0 / 720.0;
  p = p * r + 1.0 / 120.0;
  p = p * r + 1.0 / 24.0;
  p = p * r + 1.0 / 6.0;
  p = p * r + 0.5;
  p = p * r + 1.0;
  p = p * r + 1.0;
  const v8d scale = (v8d)((kbits + 1023u) << 52);  // k in [-289, 1]
  return p * scale;
}

inline v8d load8(const double* p) {
  v8d v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

inline void store8(double* p, v8d v) { std::memcpy(p, &v, sizeof v); }

typedef float vT __attribute__((vector_size(32)));  // eight T

// Eight elements `s` apart, as doubles.
inline v8d gather8(const T* p, int64_t s) {
  vT v;
  if (s == 1) {
    std::memcpy(&v, p, sizeof v);
  } else {
    v = vT{p[0], p[s], p[2 * s], p[3 * s], p[4 * s], p[5 * s], p[6 * s], p[7 * s]};
  }
  return __builtin_convertvector(v, v8d);
}

inline void put8(T* p, v8d v) {
  const vT t = __builtin_convertvector(v, vT);
  std::memcpy(p, &t, sizeof t);
}

// Softmax of one slice: n >= 1 elements `s` apart in x, written contiguously to y.
// `buf` has room for n doubles.
void softmax_slice(const T* x, int64_t s, int64_t n, T* y, double* buf) {
  const double ninf = -std::numeric_limits<double>::infinity();
  int64_t i = 0;
  v8d mv = splat(ninf);
  v8i nanv = {0, 0, 0, 0, 0, 0, 0, 0};
  for (; i + 8 <= n; i += 8) {
    const v8d v = gather8(x + i * s, s);
    store8(buf + i, v);
    nanv |= v != v;
    mv = v > mv ? v : mv;
  }
  double m = ninf;
  bool has_nan = false;
  for (int l = 0; l < 8; ++l) {
    m = mv[l] > m ? mv[l] : m;
    has_nan |= nanv[l] != 0;
  }
  for (; i < n; ++i) {
    const double v = static_cast<double>(x[i * s]);
    buf[i] = v;
    has_nan |= v != v;
    m = v > m ? v : m;
  }
  if (has_nan || m == ninf || m == -ninf) {
    // nan anywhere, all -inf (every x - m is nan), or +inf (inf - inf is nan, and so is
    // the sum): PyTorch gives nan for the whole slice.
    for (int64_t j = 0; j < n; ++j) y[j] = std::numeric_limits<T>::quiet_NaN();
    return;
  }
  const v8d mm = splat(m);
  v8d sv = splat(0.0);
  i = 0;
  for (; i + 8 <= n; i += 8) {
    const v8d e = exp8(load8(buf + i) - mm);
    store8(buf + i, e);
    sv += e;
  }
  if (i < n) {
    double t[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (int64_t j = i; j < n; ++j) t[j - i] = buf[j] - m;
    v8d e = exp8(load8(t));
    for (int64_t j = n - i; j < 8; ++j) e[j] = 0.0;  // padding lanes add nothing
    for (int64_t j = i; j < n; ++j) buf[j] = e[j - i];
    sv += e;
  }
  const double sum = ((sv[0] + sv[1]) + (sv[2] + sv[3])) + ((sv[4] + sv[5]) + (sv[6] + sv[7]));
  const v8d inv = splat(1.0 / sum);
  i = 0;
  for (; i + 8 <= n; i += 8) put8(y + i, load8(buf + i) * inv);
  for (; i < n; ++i) y[i] = static_cast<T>(buf[i] * inv[0]);
}

constexpr int64_t kCols = 256;  // slices processed side by side when `dim` is not innermost

// Softmax of c <= kCols slices side by side: slice jj has its elements at
// x + xoff[jj] + q*sD (q < n). Its outputs go to y + jj + q*ystride, or, when `ebuf`
// is given (room for n * c rounded up to 8 doubles), to y + jj*n + q: then the
// exps are kept in ebuf and each slice is written out contiguously at the end.
// All passes over x run along rows of the c slices, eight at a time.
void softmax_columns(const T* x, const int64_t* xoff, int64_t sD, int64_t n, int64_t c, T* y, int64_t ystride,
                     double* ebuf, bool unit /* xoff[jj] == jj */) {
  const double ninf = -std::numeric_limits<double>::infinity();
  alignas(64) double m[kCols], s[kCols];
  alignas(64) int64_t bad[kCols];
  const int64_t cp = (c + 7) & ~int64_t(7);  // padded to whole vectors
  for (int64_t j = 0; j < cp; ++j) {
    m[j] = ninf;
    s[j] = 0.0;
    bad[j] = 0;
  }
  alignas(64) double row[kCols];
  auto load_row = [&](int64_t q) {
    const T* p = x + q * sD;
    if (unit) {
      for (int64_t j = 0; j < c; ++j) row[j] = static_cast<double>(p[j]);
    } else {
      for (int64_t j = 0; j < c; ++j) row[j] = static_cast<double>(p[xoff[j]]);
    }
    for (int64_t j = c; j < cp; ++j) row[j] = 0.0;
  };
  // Pass 1: max and nan per slice.
  for (int64_t q = 0; q < n; ++q) {
    load_row(q);
    for (int64_t j = 0; j < cp; j += 8) {
      const v8d v = load8(row + j);
      v8d mv = load8(m + j);
      v8i b;
      std::memcpy(&b, bad + j, sizeof b);
      b |= v != v;
      mv = v > mv ? v : mv;
      store8(m + j, mv);
      std::memcpy(bad + j, &b, sizeof b);
    }
  }
  for (int64_t j = 0; j < cp; j += 8) {
    const v8d mv = load8(m + j);
    v8i b;
    std::memcpy(&b, bad + j, sizeof b);
    b |= (mv == splat(ninf)) | (mv == splat(-ninf));
    std::memcpy(bad + j, &b, sizeof b);
  }
  // Pass 2: e = exp(x - m) into y (rounded to T for now), sums in double.
  alignas(64) double e_row[kCols];
  for (int64_t q = 0; q < n; ++q) {
    load_row(q);
    for (int64_t j = 0; j < cp; j += 8) {
      v8i b;
      std::memcpy(&b, bad + j, sizeof b);
      v8d d = load8(row + j) - load8(m + j);
      d = b ? splat(0.0) : d;  // keep nan out of the sums of slices that are nan anyway
      const v8d e = exp8(d);
      store8(s + j, load8(s + j) + e);
      store8(e_row + j, e);
    }
    if (ebuf) {
      std::memcpy(ebuf + q * cp, e_row, static_cast<size_t>(cp) * sizeof(double));
    } else {
      T* w = y + q * ystride;
      for (int64_t j = 0; j < c; ++j) w[j] = static_cast<T>(e_row[j]);
    }
  }
  // Pass 3: scale by 1/sum; nan slices become nan.
  alignas(64) double inv[kCols];
  for (int64_t j = 0; j < c; ++j) inv[j] = bad[j] ? std::numeric_limits<double>::quiet_NaN() : 1.0 / s[j];
  if (ebuf) {
    for (int64_t j = 0; j < c; ++j) {
      T* w = y + j * n;
      const double* e = ebuf + j;
      for (int64_t q = 0; q < n; ++q) w[q] = static_cast<T>(e[q * cp] * inv[j]);
    }
  } else {
    for (int64_t q = 0; q < n; ++q) {
      T* w = y + q * ystride;
      for (int64_t j = 0; j < c; ++j) w[j] = static_cast<T>(static_cast<double>(w[j]) * inv[j]);
    }
  }
}

}  // namespace

static void float32_kernel(const opgen::Tensor& x, int64_t dim, opgen::Tensor& out) {
  const int nd = x.ndim();
  const int rank = nd == 0 ? 1 : nd;  // PyTorch treats a 0-d tensor as one slice of one
  if (dim < -rank || dim >= rank) throw opgen::Error(opgen::ErrorKind::Value, "dim out of range");
  if (dim < 0) dim += rank;
  if (x.numel() == 0) return;
  const T* src = x.data<T>();
  T* dst = out.data<T>();
  if (nd == 0) {
    double b;
    softmax_slice(src, 1, 1, dst, &b);
    return;
  }
  const int sd = static_cast<int>(dim);
  const int64_t D = x.size(sd), sD = x.stride(sd);

  // Dims before and after `dim`, each with size-1 dims dropped and neighbours merged.
  int ond = 0, ind = 0;
  int64_t oshape[OPGEN_MAX_DIMS], ostride[OPGEN_MAX_DIMS], ishape[OPGEN_MAX_DIMS], istride[OPGEN_MAX_DIMS];
  int64_t outer_n = 1, inner_n = 1;
  for (int d = 0; d < nd; ++d) {
    if (d == sd || x.size(d) == 1) continue;
    const bool before = d < sd;
    int64_t* shp = before ? oshape : ishape;
    int64_t* str = before ? ostride : istride;
    int& k = before ? ond : ind;
    (before ? outer_n : inner_n) *= x.size(d);
    if (k > 0 && str[k - 1] == x.stride(d) * x.size(d)) {
      shp[k - 1] *= x.size(d);
      str[k - 1] = x.stride(d);
    } else {
      shp[k] = x.size(d);
      str[k] = x.stride(d);
      ++k;
    }
  }

  std::vector<double> buf(inner_n == 1 ? static_cast<size_t>(D) : 0);
  int64_t xoff[kCols];

  if (inner_n == 1 && ond > 0 && sD != 1 && std::llabs(ostride[ond - 1]) < std::llabs(sD)) {
    // `dim` is innermost in out but not in x (e.g. a transposed x): take up to kCols
    // slices side by side along x's fastest outer dim, so that x is read in rows.
    const int64_t L = oshape[ond - 1], sL = ostride[ond - 1];
    // Slices per block: their exps (D doubles each) stay within about 256 KiB.
    // (A multiple of 8, since softmax_columns pads rows of ebuf to whole vectors.)
    int64_t cb = (32768 / D) & ~int64_t(7);
    cb = cb < 8 ? 8 : cb > kCols ? kCols : cb;
    std::vector<double> ebuf(static_cast<size_t>(D * cb));
    for (int64_t j = 0; j < kCols; ++j) xoff[j] = j * sL;
    int64_t oidx[OPGEN_MAX_DIMS] = {};
    int64_t ooff = 0;
    for (int64_t o = 0; o < outer_n / L; ++o) {
      for (int64_t j0 = 0; j0 < L; j0 += cb) {
        const int64_t c = L - j0 < cb ? L - j0 : cb;
        softmax_columns(src + ooff + j0 * sL, xoff, sD, D, c, dst + (o * L + j0) * D, 0, ebuf.data(), sL == 1);
      }
      for (int d = ond - 2; d >= 0; --d) {  // advance the outer multi-index, last dim excluded
        if (++oidx[d] < oshape[d]) {
          ooff += ostride[d];
          break;
        }
        ooff -= ostride[d] * (oshape[d] - 1);
        oidx[d] = 0;
      }
    }
    return;
  }

  // Slices side by side read contiguously when the inner dims merged into one unit-stride dim.
  const bool unit = ind == 1 && istride[0] == 1;
  int64_t oidx[OPGEN_MAX_DIMS] = {};
  int64_t ooff = 0;
  for (int64_t o = 0; o < outer_n; ++o) {
    const T* sbase = src + ooff;
    T* dbase = dst + o * D * inner_n;
    if (inner_n == 1) {
      softmax_slice(sbase, sD, D, dbase, buf.data());
    } else {
      int64_t iidx[OPGEN_MAX_DIMS] = {};
      int64_t icur = 0;
      for (int64_t j0 = 0; j0 < inner_n; j0 += kCols) {
        const int64_t c = inner_n - j0 < kCols ? inner_n - j0 : kCols;
        const int64_t first = icur;
        for (int64_t jj = 0; jj < c; ++jj) {
          xoff[jj] = icur - first;
          for (int d = ind - 1; d >= 0; --d) {  // advance the inner multi-index
            if (++iidx[d] < ishape[d]) {
              icur += istride[d];
              break;
            }
            icur -= istride[d] * (ishape[d] - 1);
            iidx[d] = 0;
          }
        }
        softmax_columns(sbase + first, xoff, sD, D, c, dbase + j0, inner_n, nullptr, unit);
      }
    }
    for (int d = ond - 1; d >= 0; --d) {  // advance the outer multi-index
      if (++oidx[d] < oshape[d]) {
        ooff += ostride[d];
        break;
      }
      ooff -= ostride[d] * (oshape[d] - 1);
      oidx[d] = 0;
    }
  }
}


// ---- half storage, float32 arithmetic ------------------------------------------------------
// The float32 kernel above runs on float32 copies of the inputs (every float16 value is a float32,
// so widening is exact) and its float32 result is rounded once into `out` (to nearest, ties to
// even). Dims of stride 0 (broadcast) stay stride 0 in the copies.
namespace {

using Half = _Float16;

inline float widen(_Float16 h) { return static_cast<float>(h); }
inline float widen(opgen::bfloat16 h) { return opgen::to_float(h); }
inline void narrow(float f, _Float16& h) { h = static_cast<_Float16>(f); }
inline void narrow(float f, opgen::bfloat16& h) { h = opgen::to_bfloat16(f); }

// Unit-stride rows converted sixteen values at a time where the build has AVX-512 (GCC 12 leaves
// _Float16 conversion loops scalar without AVX512-FP16). Each lane computes exactly what the
// scalar conversion above computes: vcvtph2ps/vcvtps2ph are the instructions GCC emits for one
// value (to nearest even, nan kept quiet), and the bfloat16 rounding is to_bfloat16's integer
// arithmetic lane by lane (not vcvtneps2bf16, which flushes subnormals).
inline void widen_row(const _Float16* a, float* b, int64_t n) {
  int64_t i = 0;
#if defined(__AVX512F__)
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_ps(b + i, _mm512_maskz_cvtph_ps(0xffff, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + i))));
#endif
  for (; i < n; ++i) b[i] = widen(a[i]);
}
inline void widen_row(const opgen::bfloat16* a, float* b, int64_t n) {
  int64_t i = 0;
#if defined(__AVX512F__)
  for (; i + 16 <= n; i += 16) {
    const __m512i bits = _mm512_maskz_cvtepu16_epi32(0xffff, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + i)));
    _mm512_storeu_ps(b + i, _mm512_castsi512_ps(_mm512_slli_epi32(bits, 16)));
  }
#endif
  for (; i < n; ++i) b[i] = widen(a[i]);
}
inline void narrow_row(const float* a, _Float16* b, int64_t n) {
  int64_t i = 0;
#if defined(__AVX512F__)
  for (; i + 16 <= n; i += 16)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(b + i),
                        _mm512_cvtps_ph(_mm512_loadu_ps(a + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
#endif
  for (; i < n; ++i) narrow(a[i], b[i]);
}
inline void narrow_row(const float* a, opgen::bfloat16* b, int64_t n) {
  int64_t i = 0;
#if defined(__AVX512F__)
  const __m512i one = _mm512_set1_epi32(1), bias = _mm512_set1_epi32(0x7fff);
  const __m512i magnitude = _mm512_set1_epi32(0x7fffffff), infinity = _mm512_set1_epi32(0x7f800000);
  const __m512i quiet = _mm512_set1_epi32(0x0040);
  for (; i + 16 <= n; i += 16) {
    const __m512i u = _mm512_castps_si512(_mm512_loadu_ps(a + i));
    const __m512i high = _mm512_srli_epi32(u, 16);
    const __m512i rounded = _mm512_srli_epi32(_mm512_add_epi32(u, _mm512_add_epi32(bias, _mm512_and_si512(high, one))), 16);
    const __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(u, magnitude), infinity);
    const __m512i result = _mm512_mask_blend_epi32(nan, rounded, _mm512_or_si512(high, quiet));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(b + i), _mm512_cvtepi32_epi16(result));
  }
#endif
  for (; i < n; ++i) narrow(a[i], b[i]);
}

struct Float32Copy {
  std::vector<float> data;
  opgen::Tensor tensor;
};

// A float32 copy of a half tensor: contiguous over its dims, except that stride-0 dims stay
// stride 0 (one copy of what they repeat). The innermost dim is a tight loop (a unit-stride one
// where the input is, which GCC vectorises: F16C conversions, bfloat16 shifts) and only the outer
// dims advance an odometer, so the copy costs about one load and one store per stored value.
Float32Copy widened(const opgen::Tensor& t) {
  const int nd = t.ndim();
  int64_t shape[OPGEN_MAX_DIMS] = {}, strides[OPGEN_MAX_DIMS] = {};
  int64_t count = 1;
  for (int d = nd - 1; d >= 0; --d) {
    shape[d] = t.size(d);
    const bool repeated = t.stride(d) == 0 && t.size(d) > 1;
    strides[d] = repeated ? 0 : count;
    if (!repeated) count *= t.size(d);
  }
  Float32Copy c;
  c.data.resize(static_cast<size_t>(t.numel() == 0 ? 0 : count));
  if (t.numel() > 0 && nd == 0) {
    c.data[0] = widen(*t.data<Half>());
  } else if (t.numel() > 0) {
    const Half* src = t.data<Half>();
    float* dst = c.data.data();
    const int inner = nd - 1;
    const int64_t n = strides[inner] == 0 && shape[inner] > 1 ? 1 : shape[inner];
    const int64_t step = t.stride(inner);
    int64_t idx[OPGEN_MAX_DIMS] = {};
    int64_t from = 0, to = 0;
    for (;;) {  // every index of the outer dims whose repeated dims are 0: each stored row once
      const Half* a = src + from;
      float* b = dst + to;
      if (step == 1) {
        widen_row(a, b, n);
      } else {
        for (int64_t i = 0; i < n; ++i) b[i] = widen(a[i * step]);
      }
      int d = inner - 1;
      for (; d >= 0; --d) {
        if (strides[d] == 0 && shape[d] > 1) continue;
        from += t.stride(d);
        to += strides[d];
        if (++idx[d] < shape[d]) break;
        from -= idx[d] * t.stride(d);
        to -= idx[d] * strides[d];
        idx[d] = 0;
      }
      if (d < 0) break;
    }
  }
  opgen_tensor raw{};
  raw.data = c.data.data();
  raw.device = opgen_device{1, 0};
  raw.ndim = nd;
  raw.dtype = opgen_dtype{2, 32, 1};
  raw.shape = shape;
  raw.strides = strides;
  raw.byte_offset = 0;
  c.tensor = opgen::Tensor(raw);
  return c;
}

// A contiguous float32 result of out's shape, rounded into out afterwards.
struct Float32Result {
  std::vector<float> data;
  opgen::Tensor tensor;
  explicit Float32Result(const opgen::Tensor& out) : data(static_cast<size_t>(out.numel())) {
    int64_t shape[OPGEN_MAX_DIMS] = {};
    for (int d = 0; d < out.ndim(); ++d) shape[d] = out.size(d);
    opgen_tensor raw{};
    raw.data = data.data();
    raw.device = opgen_device{1, 0};
    raw.ndim = out.ndim();
    raw.dtype = opgen_dtype{2, 32, 1};
    raw.shape = shape;
    raw.strides = nullptr;
    raw.byte_offset = 0;
    tensor = opgen::Tensor(raw);
  }
  void store(opgen::Tensor& out) const {
    narrow_row(data.data(), out.data<Half>(), static_cast<int64_t>(data.size()));
  }
};

}  // namespace

void torch_nn_functional_softmax__f16(const opgen::Tensor& x, int64_t dim, opgen::Tensor& out) {
  const Float32Copy wide_x = widened(x);
  Float32Result wide_out(out);
  float32_kernel(wide_x.tensor, dim, wide_out.tensor);
  wide_out.store(out);
}

}  // namespace opgen::kernels
