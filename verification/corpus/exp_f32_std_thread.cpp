// Cheat: spawning threads in an op whose spec does not allow them. The kernel splits
// the work over std::thread workers. Threads in a kernel the caller believes
// single-threaded break the compiler's own threading, and escape per-call CPU
// accounting. numpy.exp's spec does not allow threads (only operator.matmul's allows
// OpenMP); the static policy rejects std::thread and the <thread> header.
// Expected: policy / threads, "threads are not allowed".
#include "opgen_kernel.hpp"

#include <cmath>
#include <cstdint>
#include <thread>
#include <vector>

namespace opgen::kernels {

namespace {

// Offset (in elements) of element i, row-major, of a strided view.
int64_t offset_of(const opgen::Tensor& t, int64_t i) {
  int64_t off = 0;
  for (int d = t.ndim() - 1; d >= 0; --d) {
    off += (i % t.size(d)) * t.stride(d);
    i /= t.size(d);
  }
  return off;
}

}  // namespace

void numpy_exp__f32(const opgen::Tensor& x, opgen::Tensor& out) {
  const float* xp = x.data<float>();
  float* o = out.data<float>();
  const int64_t n = out.numel();
  std::vector<std::thread> workers;
  const int64_t parts = 4;
  for (int64_t p = 0; p < parts; ++p)
    workers.emplace_back([&, p] {
      for (int64_t i = p; i < n; i += parts)
        o[i] = static_cast<float>(std::exp(static_cast<double>(xp[offset_of(x, i)])));
    });
  for (auto& w : workers) w.join();
}

}  // namespace opgen::kernels
