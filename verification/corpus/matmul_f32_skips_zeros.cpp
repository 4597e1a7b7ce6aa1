// Cheat (or LLM "optimisation"): wrong only on NaN propagation. The kernel skips the
// inner loop for a[i,p] == 0 ("sparse speedup"), so 0 * nan and 0 * inf in b never
// reach the sum and the row comes out finite where NumPy gives nan. Every finite
// input is right. opgen plants nan in the inputs the domain allows it in, and draws
// small-integer inputs (plenty of zeros) among its distributions.
// Expected: verify / value, "expected nan".
#include "opgen_kernel.hpp"

#include <cstdint>

namespace opgen::kernels {

void operator_matmul__f32(const opgen::Tensor& a, const opgen::Tensor& b, opgen::Tensor& out) {
  const int nd = out.ndim();
  const int64_t m = a.size(nd - 2), k = a.size(nd - 1), n = b.size(nd - 1);
  const int64_t sam = a.stride(nd - 2), sak = a.stride(nd - 1), sbk = b.stride(nd - 2), sbn = b.stride(nd - 1);
  const float* A = a.data<float>();
  const float* B = b.data<float>();
  float* C = out.data<float>();
  int64_t batch = 1;
  for (int d = 0; d < nd - 2; ++d) batch *= out.size(d);
  for (int64_t t = 0; t < batch; ++t) {
    int64_t rest = t, ao = 0, bo = 0;  // batch index -> offsets in a and b (stride 0 where broadcast)
    for (int d = nd - 3; d >= 0; --d) {
      ao += (rest % out.size(d)) * a.stride(d);
      bo += (rest % out.size(d)) * b.stride(d);
      rest /= out.size(d);
    }
    float* c = C + t * m * n;
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) c[i * n + j] = 0.0f;
      for (int64_t p = 0; p < k; ++p) {
        const float av = A[ao + i * sam + p * sak];
        if (av == 0.0f) continue;  // "sparse speedup"
        for (int64_t j = 0; j < n; ++j) c[i * n + j] += av * B[bo + p * sbk + j * sbn];
      }
    }
  }
}

}  // namespace opgen::kernels
