// torch.nn.functional.layer_norm, overload bf16: bfloat16 storage, float32 arithmetic. Written by scripts/half_kernels.py from
// answers/cpp/torch.nn.functional.layer_norm__f32.cpp (its algorithm, unchanged and private) and a widening wrapper.
// torch.nn.functional.layer_norm, overload f32: layer norm over the last dim,
// out = (x - mean) / sqrt(var + eps) * weight + bias, normalized_shape = (weight's length,).
//
// Accuracy: float32 arithmetic loses about eps * |mean| / std of relative accuracy when it
// subtracts the mean (PyTorch's own float32 result is off by 7.6e-4 on a two-element row with
// mean/std 2800). So the mean and the variance of each row are taken in double (one pass over
// x - x[0], see layer_norm_row), and x - mean is formed in float32 as (x - m_hi) - m_lo from
// the double mean split in two floats, exact where x is near the mean. The result is within
// a few float32 ulps of |xhat * w| + |b| of the exact layer norm of the float32 inputs. A row of
// one element, or of equal elements, gives bias exactly (x - mean is exactly 0); a nan or inf
// in a row makes the mean or the variance nan, so the whole row is nan, as in PyTorch.
//
// Layout: x arrives as (*loop, d) with any strides; weight and bias as (*loop, d) with the
// loop dims broadcast (stride 0); a weight or bias that really varies along a loop dim is not
// a layer norm and throws ValueError. Rows are walked with an odometer over the loop dims;
// a row that is not contiguous is gathered first, and so are strided weight and bias (once
// per call). Rows are split across OpenMP threads when there is enough work.
#include "opgen_kernel.hpp"

#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>
#ifdef _OPENMP
#include <omp.h>
#endif

namespace opgen::kernels {

namespace {

#pragma GCC diagnostic ignored "-Wpsabi"  // the vector types never cross a library boundary

using T = float;
typedef double v8d __attribute__((vector_size(64)));
typedef float v8f __attribute__((vector_size(32)));
constexpr int64_t kPerThreadMin = 1 << 14;  // elements per thread below which threads cost more than they save

inline v8d load8(const T* p) {
  v8f v;
  std::memcpy(&v, p, sizeof v);
  return __builtin_convertvector(v, v8d);
}
typedef float vf __attribute__((vector_size(64)));
inline vf loadf(const T* p) {
  vf v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void storef(T* p, vf v) { std::memcpy(p, &v, sizeof v); }
inline double hsum(v8d v) { return ((v[0] + v[1]) + (v[2] + v[3])) + ((v[4] + v[5]) + (v[6] + v[7])); }

// One contiguous row of n >= 1 elements; w and b contiguous.
//
// Mean and variance in one pass, in double, on x - x[0]: |x[0] - mean| <= sqrt(n) * std, so
// var = E[(x-x0)^2] - E[x-x0]^2 cancels by a factor n at most, harmless in double.
// The outputs in float32: x - mean is (x - m_hi) - m_lo with mean = m_hi + m_lo. Where x is
// close to the mean (within a factor 2 of m_hi) x - m_hi is exact (Sterbenz), so the
// cancellation float32 suffers elsewhere does not arise; further away the rounding is
// relative to |x - mean| itself. Then (x - mean) * rstd * w + b with an FMA: a few ulps of
// |xhat * w| + |b|.
void layer_norm_row(const T* x, int64_t n, const T* w, const T* b, double eps, T* y) {
  const double x0 = x[0];
  const v8d v0 = v8d{} + x0;
  v8d s0 = {}, s1 = {}, q0 = {}, q1 = {};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const v8d a = load8(x + i) - v0, c = load8(x + i + 8) - v0;
    s0 += a;
    s1 += c;
    q0 += a * a;
    q1 += c * c;
  }
  for (; i + 8 <= n; i += 8) {
    const v8d a = load8(x + i) - v0;
    s0 += a;
    q0 += a * a;
  }
  double s = hsum(s0 + s1), q = hsum(q0 + q1);
  for (; i < n; ++i) {
    const double a = x[i] - x0;
    s += a;
    q += a * a;
  }
  const double dn = static_cast<double>(n);
  const double shift = s / dn;
  double var = q / dn - shift * shift;
  var = var > 0.0 ? var : 0.0;  // (rounding can leave -0 or a tiny negative for equal elements)
  const double mean = x0 + shift;
  const float m_hi = static_cast<float>(mean);
  const float m_lo = static_cast<float>(mean - m_hi);
  const float rstd = static_cast<float>(1.0 / std::sqrt(var + eps));
  const vf vhi = vf{} + m_hi, vlo = vf{} + m_lo, vr = vf{} + rstd;
  i = 0;
  for (; i + 16 <= n; i += 16) storef(y + i, ((loadf(x + i) - vhi) - vlo) * vr * loadf(w + i) + loadf(b + i));
  for (; i < n; ++i) y[i] = ((x[i] - m_hi) - m_lo) * rstd * w[i] + b[i];
}

}  // namespace

static void float32_kernel(const opgen::Tensor& input, const opgen::Tensor& weight, const opgen::Tensor& bias, double eps, opgen::Tensor& out) {
  const int nd = out.ndim();
  if (nd < 1 || input.ndim() != nd || weight.ndim() != nd || bias.ndim() != nd)
    throw opgen::Error(opgen::ErrorKind::Value, "layer_norm expects input (..., d), weight (d,) and bias (d,)");
  const int64_t d = out.size(nd - 1);
  int64_t rows = 1;
  for (int k = 0; k < nd - 1; ++k) {
    if (out.size(k) > 1 && (weight.stride(k) != 0 || bias.stride(k) != 0))
      throw opgen::Error(opgen::ErrorKind::Value, "layer_norm expects a 1-d weight and bias of the last dim's length");
    rows *= out.size(k);
  }
  if (rows == 0 || d == 0) return;
  std::vector<T> w(static_cast<size_t>(d)), b(static_cast<size_t>(d));
  for (int64_t j = 0; j < d; ++j) {
    w[static_cast<size_t>(j)] = weight.data<T>()[j * weight.stride(nd - 1)];
    b[static_cast<size_t>(j)] = bias.data<T>()[j * bias.stride(nd - 1)];
  }
  const T* X = input.data<T>();
  T* Y = out.data<T>();
  const int64_t sx = input.stride(nd - 1);
  int threads = 1;
#ifdef _OPENMP
  threads = omp_get_max_threads();
#endif
  const int64_t by_size = rows * d / kPerThreadMin;
  threads = static_cast<int>(by_size < threads ? (by_size < 1 ? 1 : by_size) : threads);
  if (threads > rows) threads = static_cast<int>(rows);
#pragma omp parallel num_threads(threads) if (threads > 1)
  {
    int t = 0, team = 1;
#ifdef _OPENMP
    t = omp_get_thread_num();
    team = omp_get_num_threads();
#endif
    const int64_t r0 = rows * t / team, r1 = rows * (t + 1) / team;
    std::vector<T> row(sx != 1 ? static_cast<size_t>(d) : 0);
    // The offset of row r0 in x, and an odometer from there.
    int64_t idx[OPGEN_MAX_DIMS] = {};
    int64_t off = 0;
    for (int64_t r = r0, k = nd - 2; k >= 0; --k) {
      idx[k] = r % out.size(static_cast<int>(k));
      r /= out.size(static_cast<int>(k));
      off += idx[k] * input.stride(static_cast<int>(k));
    }
    for (int64_t r = r0; r < r1; ++r) {
      const T* x = X + off;
      if (sx != 1) {
        for (int64_t j = 0; j < d; ++j) row[static_cast<size_t>(j)] = x[j * sx];
        x = row.data();
      }
      layer_norm_row(x, d, w.data(), b.data(), eps, Y + r * d);
      for (int k = nd - 2; k >= 0; --k) {
        if (++idx[k] < out.size(k)) {
          off += input.stride(k);
          break;
        }
        off -= input.stride(k) * (out.size(k) - 1);
        idx[k] = 0;
      }
    }
  }
}


// ---- half storage, float32 arithmetic ------------------------------------------------------
// The float32 kernel above runs on float32 copies of the inputs (every bfloat16 value is a float32,
// so widening is exact) and its float32 result is rounded once into `out` (to nearest, ties to
// even). Dims of stride 0 (broadcast) stay stride 0 in the copies.
namespace {

using Half = opgen::bfloat16;

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

void torch_nn_functional_layer_norm__bf16(const opgen::Tensor& input, const opgen::Tensor& weight, const opgen::Tensor& bias, double eps, opgen::Tensor& out) {
  const Float32Copy wide_input = widened(input);
  const Float32Copy wide_weight = widened(weight);
  const Float32Copy wide_bias = widened(bias);
  Float32Result wide_out(out);
  float32_kernel(wide_input.tensor, wide_weight.tensor, wide_bias.tensor, eps, wide_out.tensor);
  wide_out.store(out);
}

}  // namespace opgen::kernels
