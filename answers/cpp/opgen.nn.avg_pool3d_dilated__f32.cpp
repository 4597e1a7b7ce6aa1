// opgen.nn.avg_pool3d_dilated: each dilated window's sum (zero padding) times the reciprocal of its
// divisor, the product over the dims of the taps inside the padded input (count_include_pad) or
// inside the input; 1 / 0 where no tap counts, so such a window (0) gives nan. Separable: along W (rows copied into a zero-padded buffer), then H, then D, each
// a loop over contiguous rows the compiler vectorizes; volumes in parallel; any input strides.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "opgen_kernel.hpp"

namespace {

// One pooled dim: input size, kernel, stride, padding, dilation, output size (the shim's).
struct Axis {
  int64_t n, k, s, p, d, o;
  // The padded row a window may touch: the padded input, or further in ceil mode (a last window
  // hanging past the right padding); m: its length over the stride, rounded up (one phase).
  int64_t span() const { return std::max(n + 2 * p, (o - 1) * s + d * (k - 1) + 1); }
  int64_t m() const { return (span() + s - 1) / s; }
};

template <bool Max>
inline float combine(float acc, float v) {
  if constexpr (Max) {
    return (v > acc || v != v) ? v : acc;  // a nan sticks: once acc is nan, nothing is greater
  } else {
    return acc + v;
  }
}

template <bool Max>
inline float identity() {
  return Max ? -std::numeric_limits<float>::infinity() : 0.0f;
}

// One row of a.n inputs (element stride xs) pooled along its length into y[0 .. a.o). The padded
// row is split by the stride into s phases of m (buf holds s * m floats): phase r holds padded
// positions r, r + s, r + 2s, ..., so window tap j of every output is one contiguous run of a
// phase (padded position o*s + j*d is phase (j*d) % s at o + (j*d) / s) and each tap is a
// unit-stride loop the compiler vectorizes, whatever the stride.
template <bool Max>
inline void pool_row(const float* x, int64_t xs, const Axis& a, float* y, float* buf) {
  const int64_t s = a.s, m = a.m(), n = a.n, p = a.p;
  const float id = identity<Max>();
  for (int64_t r = 0; r < s; ++r) {
    float* dst = buf + r * m;
    // the q of this phase inside the input: 0 <= q*s + r - p < n
    const int64_t q0 = std::min(r >= p ? 0 : (p - r + s - 1) / s, m);
    const int64_t q1 = std::max(q0, std::min((n + p - r + s - 1) / s, m));
    for (int64_t q = 0; q < q0; ++q) dst[q] = id;
    if (q1 > q0) {
      const float* src = x + (q0 * s + r - p) * xs;
      const int64_t step = s * xs;
      if (step == 1) {
        std::memcpy(dst + q0, src, sizeof(float) * static_cast<size_t>(q1 - q0));
      } else if (step == 2) {  // a constant stride: the loop vectorizes (even lanes of a contiguous row)
        for (int64_t q = q0; q < q1; ++q) dst[q] = src[(q - q0) * 2];
      } else {
        for (int64_t q = q0; q < q1; ++q) dst[q] = src[(q - q0) * step];
      }
    }
    for (int64_t q = q1; q < m; ++q) dst[q] = id;
  }
  const int64_t o_n = a.o;
  for (int64_t o = 0; o < o_n; ++o) y[o] = buf[o];
  for (int64_t j = 1; j < a.k; ++j) {
    const int64_t t = j * a.d;
    const float* q = buf + (t % s) * m + t / s;
    for (int64_t o = 0; o < o_n; ++o) y[o] = combine<Max>(y[o], q[o]);
  }
}

// The divisor along one dim: the taps o*s - p + j*d (j < k) inside the padded input [-p, n + p)
// (count_include_pad; the taps of a ceil-mode window past it never count), or inside [0, n).
inline std::vector<float> counts(const Axis& a, bool include_pad) {
  std::vector<float> c(static_cast<size_t>(a.o));
  const int64_t lo = include_pad ? -a.p : 0, hi = include_pad ? a.n + a.p : a.n;
  for (int64_t o = 0; o < a.o; ++o) {
    int64_t taps = 0;
    for (int64_t j = 0; j < a.k; ++j) {
      const int64_t pos = o * a.s - a.p + j * a.d;
      taps += (pos >= lo && pos < hi) ? 1 : 0;
    }
    c[static_cast<size_t>(o)] = static_cast<float>(taps);
  }
  return c;
}

// The offset of plane p (row-major over the leading dims 0 .. lead-1) in the input.
inline int64_t plane_offset(const opgen::Tensor& t, int lead, int64_t p) {
  int64_t offset = 0;
  for (int d = lead - 1; d >= 0; --d) {
    offset += (p % t.size(d)) * t.stride(d);
    p /= t.size(d);
  }
  return offset;
}

// 3-D, separably (a max with nan propagation and a sum are both associative): along W into t1
// (D, H, Wo), along H into t2 (D, Ho, Wo), along D into out (Do, Ho, Wo); inv (avg only) the
// reciprocal divisor of each output of a volume.
template <bool Max>
void pool3d(const opgen::Tensor& input, const Axis& ad, const Axis& ah, const Axis& aw, const float* inv,
            opgen::Tensor& out) {
  const int nd = input.ndim();
  int64_t planes = 1;
  for (int d = 0; d < nd - 3; ++d) planes *= input.size(d);
  if (planes == 0) return;
  const float* base = input.data<float>();
  float* dst = out.data<float>();
  const int64_t sd = input.stride(nd - 3), sh = input.stride(nd - 2), sw = input.stride(nd - 1);
  const int64_t D = ad.n, H = ah.n, Wo = aw.o, Ho = ah.o, Do = ad.o, plane_out = Do * Ho * Wo;
  const bool big = planes * D * H * aw.n >= (int64_t{1} << 15);
  const float id = identity<Max>();
#pragma omp parallel if (big)
  {
    std::vector<float> buf(static_cast<size_t>(aw.s * aw.m()));
    std::vector<float> t1(static_cast<size_t>(D * H * Wo)), t2(static_cast<size_t>(D * Ho * Wo));
#pragma omp for schedule(static)
    for (int64_t p = 0; p < planes; ++p) {
      const float* x = base + plane_offset(input, nd - 3, p);
      for (int64_t d = 0; d < D; ++d)
        for (int64_t h = 0; h < H; ++h) pool_row<Max>(x + d * sd + h * sh, sw, aw, t1.data() + (d * H + h) * Wo, buf.data());
      for (int64_t d = 0; d < D; ++d)
        for (int64_t oh = 0; oh < Ho; ++oh) {
          float* y = t2.data() + (d * Ho + oh) * Wo;
          std::fill(y, y + Wo, id);
          for (int64_t j = 0; j < ah.k; ++j) {
            const int64_t h = oh * ah.s - ah.p + j * ah.d;
            if (h < 0 || h >= H) continue;
            const float* r = t1.data() + (d * H + h) * Wo;
            for (int64_t w = 0; w < Wo; ++w) y[w] = combine<Max>(y[w], r[w]);
          }
        }
      float* o = dst + p * plane_out;
      const int64_t slab = Ho * Wo;
      for (int64_t od = 0; od < Do; ++od) {
        float* y = o + od * slab;
        std::fill(y, y + slab, id);
        for (int64_t j = 0; j < ad.k; ++j) {
          const int64_t d = od * ad.s - ad.p + j * ad.d;
          if (d < 0 || d >= D) continue;
          const float* r = t2.data() + d * slab;
          for (int64_t i = 0; i < slab; ++i) y[i] = combine<Max>(y[i], r[i]);
        }
        if (!Max) {
          const float* v = inv + od * slab;
          for (int64_t i = 0; i < slab; ++i) y[i] *= v[i];
        }
      }
    }
  }
}

}  // namespace

namespace opgen::kernels {

void opgen_nn_avg_pool3d_dilated__f32(const opgen::Tensor& input, int64_t kernel_d, int64_t kernel_h,
                                      int64_t kernel_w, int64_t stride_d, int64_t stride_h, int64_t stride_w,
                                      int64_t pad_d, int64_t pad_h, int64_t pad_w, int64_t dilation_d,
                                      int64_t dilation_h, int64_t dilation_w, bool ceil_mode, bool count_include_pad,
                                      opgen::Tensor& out) {
  (void)ceil_mode;  // the shim has sized out by it
  const int nd = input.ndim();
  const Axis ad{input.size(nd - 3), kernel_d, stride_d, pad_d, dilation_d, out.size(nd - 3)};
  const Axis ah{input.size(nd - 2), kernel_h, stride_h, pad_h, dilation_h, out.size(nd - 2)};
  const Axis aw{input.size(nd - 1), kernel_w, stride_w, pad_w, dilation_w, out.size(nd - 1)};
  const std::vector<float> cd = counts(ad, count_include_pad), ch = counts(ah, count_include_pad),
                           cw = counts(aw, count_include_pad);
  std::vector<float> inv(static_cast<size_t>(ad.o * ah.o * aw.o));
  size_t i = 0;
  for (float a : cd)
    for (float b : ch)
      for (float c : cw) inv[i++] = 1.0f / (a * b * c);
  pool3d<false>(input, ad, ah, aw, inv.data(), out);
}

}  // namespace opgen::kernels
