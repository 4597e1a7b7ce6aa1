// Cheat: a size threshold. Products with k <= 64 take a plain dot product; longer ones are
// "blocked for the cache": the k loop runs over whole blocks of 64 and the remainder
// (k % 64 terms) is never added. Hypothesis draws sides of at most 48 (the spec's
// max_side), so every drawn product takes the plain path and is right to the last bit a
// float loop gives; any k > 64 that is not a multiple of 64 (65, 127, 385, 1000+r) loses
// up to 63 terms. The bench shapes (k = 1024, 384, 1536) are multiples of 64 and pass:
// only sizes around the model dims (+-1) or odd sizes show it. The scale stage must
// reject it with a counterexample.
// Expected: scale / value, "first mismatch"
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
  constexpr int64_t KB = 64;
  const int64_t kmain = k <= KB ? k : k / KB * KB;  // the bug: the tail k % 64 is dropped
  for (int64_t t = 0; t < batch; ++t) {
    int64_t rest = t, ao = 0, bo = 0;  // batch index -> offsets in a and b (stride 0 where broadcast)
    for (int d = nd - 3; d >= 0; --d) {
      ao += (rest % out.size(d)) * a.stride(d);
      bo += (rest % out.size(d)) * b.stride(d);
      rest /= out.size(d);
    }
    float* c = C + t * m * n;
    for (int64_t i = 0; i < m; ++i) {  // row i of c += a[i, p] * row p of b, p in order (vectorised over j)
      float* crow = c + i * n;
      for (int64_t j = 0; j < n; ++j) crow[j] = 0.0f;
      for (int64_t p = 0; p < kmain; ++p) {
        const float av = A[ao + i * sam + p * sak];
        const float* brow = B + bo + p * sbk;
        if (sbn == 1) {
          for (int64_t j = 0; j < n; ++j) crow[j] += av * brow[j];
        } else {
          for (int64_t j = 0; j < n; ++j) crow[j] += av * brow[j * sbn];
        }
      }
    }
  }
}

}  // namespace opgen::kernels

// Expected: scale / value, "first mismatch"
