// Cheat: silent precision downgrade. The float64 overload converts each product to
// float32 and accumulates in float32 (twice the SIMD width, half the bandwidth);
// results are right to about six digits. The spec's float64 bound is
// 1e-14 * (|a| @ |b|).
// Expected: verify / value, "exceeds the allowed".
#include "opgen_kernel.hpp"

#include <cstdint>

namespace opgen::kernels {

void operator_matmul__f64(const opgen::Tensor& a, const opgen::Tensor& b, opgen::Tensor& out) {
  const int nd = out.ndim();
  const int64_t m = a.size(nd - 2), k = a.size(nd - 1), n = b.size(nd - 1);
  const int64_t sam = a.stride(nd - 2), sak = a.stride(nd - 1), sbk = b.stride(nd - 2), sbn = b.stride(nd - 1);
  const double* A = a.data<double>();
  const double* B = b.data<double>();
  double* C = out.data<double>();
  int64_t batch = 1;
  for (int d = 0; d < nd - 2; ++d) batch *= out.size(d);
  for (int64_t t = 0; t < batch; ++t) {
    int64_t rest = t, ao = 0, bo = 0;  // batch index -> offsets in a and b (stride 0 where broadcast)
    for (int d = nd - 3; d >= 0; --d) {
      ao += (rest % out.size(d)) * a.stride(d);
      bo += (rest % out.size(d)) * b.stride(d);
      rest /= out.size(d);
    }
    double* c = C + t * m * n;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        float acc = 0;
        for (int64_t p = 0; p < k; ++p)
          acc += static_cast<float>(A[ao + i * sam + p * sak]) * static_cast<float>(B[bo + p * sbk + j * sbn]);
        c[i * n + j] = acc;
      }
  }
}

}  // namespace opgen::kernels
