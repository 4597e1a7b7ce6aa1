// Cheat: a shortcut that fits the default inputs. The kernel indexes each matrix of a
// and b as contiguous row-major (a[i*k + p], b[p*n + j]) and ignores the strides of the
// last two dims, which is right for freshly allocated np.random.randn(m, k) arrays and
// wrong for transposed or sliced ones. opgen lays every input out contiguous,
// transposed, strided, reversed or offset.
// Expected: verify / value, "first mismatch".
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
    const double* ab = A + ao;
    const double* bb = B + bo;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0;
        for (int64_t p = 0; p < k; ++p) acc += ab[i * k + p] * bb[p * n + j];
        c[i * n + j] = acc;
      }
  }
}

}  // namespace opgen::kernels
