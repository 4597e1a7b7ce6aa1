// Average pooling: the window's sum (the input elements it covers; padding adds zeros) times 1 / (kh * kw).
// Planes (the leading dims) in parallel; any input strides.
#include <cmath>
#include <cstdint>
#include <limits>

#include "opgen_kernel.hpp"

namespace opgen::kernels {

void torch_nn_functional_avg_pool2d__f32(const opgen::Tensor& input, int64_t kernel_h, int64_t kernel_w,
                                           int64_t stride_h, int64_t stride_w, int64_t pad_h, int64_t pad_w,
                                           opgen::Tensor& out) {
  const int nd = input.ndim();
  const int64_t h = input.size(nd - 2), w = input.size(nd - 1);
  const int64_t oh = out.size(nd - 2), ow = out.size(nd - 1);
  const int64_t row_stride = input.stride(nd - 2), col_stride = input.stride(nd - 1);
  int64_t planes = 1;
  for (int d = 0; d < nd - 2; ++d) planes *= input.size(d);
  const float* base = input.data<float>();
  float* dst = out.data<float>();
  const float inv_area = 1.0f / static_cast<float>(kernel_h * kernel_w);
#pragma omp parallel for schedule(static)
  for (int64_t p = 0; p < planes; ++p) {
    int64_t offset = 0, rest = p;  // the plane's offset from its leading indices (row-major over them)
    for (int d = nd - 3; d >= 0; --d) {
      offset += (rest % input.size(d)) * input.stride(d);
      rest /= input.size(d);
    }
    const float* plane = base + offset;
    float* o = dst + p * oh * ow;
    for (int64_t y = 0; y < oh; ++y) {
      const int64_t y0 = y * stride_h - pad_h;
      const int64_t ya = y0 < 0 ? 0 : y0, yb = y0 + kernel_h < h ? y0 + kernel_h : h;
      for (int64_t x = 0; x < ow; ++x) {
        const int64_t x0 = x * stride_w - pad_w;
        const int64_t xa = x0 < 0 ? 0 : x0, xb = x0 + kernel_w < w ? x0 + kernel_w : w;
        float acc = 0.0f;
        for (int64_t i = ya; i < yb; ++i)
          for (int64_t j = xa; j < xb; ++j) {
            const float v = plane[i * row_stride + j * col_stride];
            acc += v;
          }
        o[y * ow + x] = acc * inv_area;
      }
    }
  }
}

}  // namespace opgen::kernels
