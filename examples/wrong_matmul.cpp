// A deliberately wrong operator.matmul (f32) for trying `opgen verify --source`:
// it drops the last term of every dot product (an off-by-one in the k loop), which
// only shows when k > 0 and the last column of a / row of b matters.
#include "opgen_kernel.hpp"

namespace opgen::kernels {
void operator_matmul__f32(const opgen::Tensor& a, const opgen::Tensor& b, opgen::Tensor& out) {
  const int nd = out.ndim();
  const int64_t m = out.size(-2), n = out.size(-1), k = a.size(-1);
  int64_t batch = 1;
  for (int d = 0; d < nd - 2; ++d) batch *= out.size(d);
  float* o = out.data<float>();
  for (int64_t bi = 0; bi < batch; ++bi) {
    int64_t rem = bi, ao = 0, bo = 0;
    for (int d = nd - 3; d >= 0; --d) {
      const int64_t i = rem % out.size(d);
      rem /= out.size(d);
      ao += i * a.stride(d);
      bo += i * b.stride(d);
    }
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        float s = 0.0f;
        for (int64_t p = 0; p + 1 < k; ++p)  // the bug: p + 1 < k skips the last term
          s += a.data<float>()[ao + i * a.stride(-2) + p * a.stride(-1)] *
               b.data<float>()[bo + p * b.stride(-2) + j * b.stride(-1)];
        o[(bi * m + i) * n + j] = s;
      }
  }
}
}  // namespace opgen::kernels
