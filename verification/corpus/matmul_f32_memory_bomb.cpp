// Cheat: memory bomb. "Workspace" allocations of 1 GiB are made (and leaked) until
// the allocator gives up, a stand-in for a kernel whose memory grows without bound.
// Without a limit this takes the machine down; under the sandbox's address-space limit
// the allocation fails (std::bad_alloc) and the verifier reports it.
// Expected: verify / error, "bad_alloc".
#include "opgen_kernel.hpp"

#include <cstdint>
#include <vector>

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
  std::vector<char*> workspaces;  // never freed (a local: a static would be refused as state)
  for (int i = 0; i < 1024; ++i) workspaces.push_back(new char[size_t(1) << 30]);  // "workspace"
  for (int64_t t = 0; t < batch; ++t) {
    int64_t rest = t, ao = 0, bo = 0;  // batch index -> offsets in a and b (stride 0 where broadcast)
    for (int d = nd - 3; d >= 0; --d) {
      ao += (rest % out.size(d)) * a.stride(d);
      bo += (rest % out.size(d)) * b.stride(d);
      rest /= out.size(d);
    }
    float* c = C + t * m * n;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        float acc = 0;
        for (int64_t p = 0; p < k; ++p) acc += A[ao + i * sam + p * sak] * B[bo + p * sbk + j * sbn];
        c[i * n + j] = acc;
      }
  }
}

}  // namespace opgen::kernels
