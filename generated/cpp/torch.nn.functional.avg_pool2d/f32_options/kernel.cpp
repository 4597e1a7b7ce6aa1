// torch.nn.functional.avg_pool2d, overload f32_options: each window's sum (zero padding) times
// the reciprocal of torch's divisor, the product over the two dims of the window clipped to the
// padded input (count_include_pad) or to the input. Separable: along W (rows copied into a
// zero-padded buffer split by the stride into phases), then along H, each a loop over contiguous
// rows the compiler vectorizes; planes in parallel; any input strides.
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

// torch's avg divisor along one dim: the window clipped to the padded input [-p, n + p)
// (count_include_pad; the ceil overhang past it never counts), or to the input [0, n).
inline std::vector<float> counts(const Axis& a, bool include_pad) {
  std::vector<float> c(static_cast<size_t>(a.o));
  for (int64_t o = 0; o < a.o; ++o) {
    int64_t start = o * a.s - a.p, end = std::min(start + a.k, a.n + a.p);
    if (!include_pad) {
      start = std::max<int64_t>(start, 0);
      end = std::min(end, a.n);
    }
    c[static_cast<size_t>(o)] = static_cast<float>(end - start);
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

// 2-D, separably (a max with nan propagation and a sum are both associative): along W into t1
// (H, Wo), then along H into out (Ho, Wo), each tap one contiguous row the compiler vectorizes;
// inv (avg only) the reciprocal divisor of each output of a plane.
template <bool Max>
void pool2d(const opgen::Tensor& input, const Axis& ah, const Axis& aw, const float* inv, opgen::Tensor& out) {
  const int nd = input.ndim();
  int64_t planes = 1;
  for (int d = 0; d < nd - 2; ++d) planes *= input.size(d);
  if (planes == 0 || ah.o == 0 || aw.o == 0) return;
  const float* base = input.data<float>();
  float* dst = out.data<float>();
  const int64_t sh = input.stride(nd - 2), sw = input.stride(nd - 1);
  const int64_t H = ah.n, Wo = aw.o, Ho = ah.o, plane_out = Ho * Wo;
  const bool big = planes * H * aw.n >= (int64_t{1} << 15);
  const float id = identity<Max>();
#pragma omp parallel if (big)
  {
    std::vector<float> buf(static_cast<size_t>(aw.s * aw.m()));
    std::vector<float> t1(static_cast<size_t>(H * Wo));
#pragma omp for schedule(static)
    for (int64_t p = 0; p < planes; ++p) {
      const float* x = base + plane_offset(input, nd - 2, p);
      for (int64_t h = 0; h < H; ++h) pool_row<Max>(x + h * sh, sw, aw, t1.data() + h * Wo, buf.data());
      float* o = dst + p * plane_out;
      for (int64_t oh = 0; oh < Ho; ++oh) {
        float* y = o + oh * Wo;
        const int64_t h0 = oh * ah.s - ah.p;
        // the taps inside the input: 0 <= h0 + j*d < H
        int64_t ja = 0;
        while (ja < ah.k && h0 + ja * ah.d < 0) ++ja;
        int64_t jb = ah.k;
        while (jb > ja && h0 + (jb - 1) * ah.d >= H) --jb;
        if (ja == jb) {
          std::fill(y, y + Wo, id);
        } else {
          const float* r = t1.data() + (h0 + ja * ah.d) * Wo;
          std::copy(r, r + Wo, y);
          for (int64_t j = ja + 1; j < jb; ++j) {
            r = t1.data() + (h0 + j * ah.d) * Wo;
            for (int64_t w = 0; w < Wo; ++w) y[w] = combine<Max>(y[w], r[w]);
          }
        }
        if (!Max) {
          const float* v = inv + oh * Wo;
          for (int64_t w = 0; w < Wo; ++w) y[w] *= v[w];
        }
      }
    }
  }
}

}  // namespace

namespace opgen::kernels {

void torch_nn_functional_avg_pool2d__f32_options(const opgen::Tensor& input, int64_t kernel_h, int64_t kernel_w,
                                                   int64_t stride_h, int64_t stride_w, int64_t pad_h, int64_t pad_w,
                                                   bool ceil_mode, bool count_include_pad, opgen::Tensor& out) {
  (void)ceil_mode;  // the shim has sized out by it
  const int nd = input.ndim();
  const Axis ah{input.size(nd - 2), kernel_h, stride_h, pad_h, 1, out.size(nd - 2)};
  const Axis aw{input.size(nd - 1), kernel_w, stride_w, pad_w, 1, out.size(nd - 1)};
  const std::vector<float> ch = counts(ah, count_include_pad), cw = counts(aw, count_include_pad);
  std::vector<float> inv(static_cast<size_t>(ah.o * aw.o));
  size_t i = 0;
  for (float b : ch)
    for (float c : cw) inv[i++] = 1.0f / (b * c);
  pool2d<false>(input, ah, aw, inv.data(), out);
}

}  // namespace opgen::kernels
