// opgen.nn.apply_rotary, overload f32: rotary position embedding of x (*, S, D) from the
// precomputed tables cos, sin (*, S, R), as ONNX's RotaryEmbedding computes it.
//
// For every row and i < R, with (j1, j2) = (i, i + R) (rotate-half) or (2i, 2i + 1)
// (interleaved):  out[j1] = c*x[j1] - s*x[j2],  out[j2] = s*x[j1] + c*x[j2]  in float32
// (GCC may contract to fused multiply-adds, which the spec allows). Elements 2R..D pass
// through as copies of their bits. 2R > D is a ValueError.
// The loop dims are aligned by the shim (stride 0 where the tables broadcast over heads); the
// B*S rows are spread over OpenMP threads for large tensors. x, cos, sin may be strided; the
// unit-stride rows take loops GCC vectorizes; out is contiguous.
#include "opgen_kernel.hpp"

#include <cstdint>
#include <cstring>
#include <vector>
#ifdef _OPENMP
#include <omp.h>
#endif

namespace opgen::kernels {

namespace {

constexpr int64_t kPerThreadMin = 1 << 15;  // output elements per thread below which one thread is faster

inline void rotate_half_row(const float* __restrict x, const float* __restrict c, const float* __restrict s,
                            float* __restrict o, int64_t r) {
  for (int64_t i = 0; i < r; ++i) {
    const float x1 = x[i], x2 = x[i + r];
    o[i] = c[i] * x1 - s[i] * x2;
    o[i + r] = s[i] * x1 + c[i] * x2;
  }
}

inline void interleaved_row(const float* __restrict x, const float* __restrict c, const float* __restrict s,
                            float* __restrict o, int64_t r) {
  for (int64_t i = 0; i < r; ++i) {
    const float x1 = x[2 * i], x2 = x[2 * i + 1];
    o[2 * i] = c[i] * x1 - s[i] * x2;
    o[2 * i + 1] = s[i] * x1 + c[i] * x2;
  }
}

}  // namespace

void opgen_nn_apply_rotary__f32(const opgen::Tensor& x, const opgen::Tensor& cos, const opgen::Tensor& sin,
                                bool interleaved, opgen::Tensor& out) {
  const int L = out.ndim() - 2;  // loop dims, aligned by the shim
  const int64_t S = x.size(L), D = x.size(L + 1), R = cos.size(L + 1);
  if (2 * R > D)
    throw opgen::Error(opgen::ErrorKind::Value, "apply_rotary: the tables are wider than half a row (2R > D)");
  int64_t B = 1;
  for (int d = 0; d < L; ++d) B *= out.size(d);
  if (B == 0 || S == 0 || D == 0) return;

  // Element offsets of each loop index in x, cos, sin (stride 0 where broadcast).
  std::vector<int64_t> ox(B), oc(B), os(B);
  {
    std::vector<int64_t> idx(L, 0);
    for (int64_t b = 0; b < B; ++b) {
      int64_t a = 0, p = 0, q = 0;
      for (int d = 0; d < L; ++d) {
        a += idx[d] * x.stride(d);
        p += idx[d] * cos.stride(d);
        q += idx[d] * sin.stride(d);
      }
      ox[b] = a, oc[b] = p, os[b] = q;
      for (int d = L - 1; d >= 0; --d) {
        if (++idx[d] < out.size(d)) break;
        idx[d] = 0;
      }
    }
  }
  const float* xd = x.data<float>();
  const float* cd = cos.data<float>();
  const float* sd = sin.data<float>();
  float* od = out.data<float>();
  const int64_t xs_s = x.stride(L), xs_d = x.stride(L + 1);
  const int64_t cs_s = cos.stride(L), cs_r = cos.stride(L + 1);
  const int64_t ss_s = sin.stride(L), ss_r = sin.stride(L + 1);
  const bool unit = xs_d == 1 && (cs_r == 1 || R <= 1) && (ss_r == 1 || R <= 1);
  const int64_t rows = B * S;

  int threads = 1;
#ifdef _OPENMP
  threads = omp_get_max_threads();
#endif
  const int64_t by_size = rows * D / kPerThreadMin;
  if (by_size < threads) threads = by_size < 1 ? 1 : static_cast<int>(by_size);

#pragma omp parallel num_threads(threads) if (threads > 1)
  {
    std::vector<float> buf;  // strided rows, gathered
    if (!unit) buf.resize(static_cast<size_t>(D + 2 * R));
#pragma omp for schedule(static)
    for (int64_t row = 0; row < rows; ++row) {
      const int64_t b = row / S, s = row % S;
      const float* xr = xd + ox[b] + s * xs_s;
      const float* cr = cd + oc[b] + s * cs_s;
      const float* sr = sd + os[b] + s * ss_s;
      float* o = od + row * D;
      if (!unit) {
        float* xb = buf.data();
        float* cb = xb + D;
        float* sb = cb + R;
        for (int64_t j = 0; j < D; ++j) xb[j] = xr[j * xs_d];
        for (int64_t i = 0; i < R; ++i) cb[i] = cr[i * cs_r], sb[i] = sr[i * ss_r];
        xr = xb, cr = cb, sr = sb;
      }
      if (interleaved)
        interleaved_row(xr, cr, sr, o, R);
      else
        rotate_half_row(xr, cr, sr, o, R);
      if (D > 2 * R) std::memcpy(o + 2 * R, xr + 2 * R, static_cast<size_t>(D - 2 * R) * sizeof(float));
    }
  }
}

}  // namespace opgen::kernels
