// Cheat: thread-count dependence. The elements are split into one range per OpenMP thread, but
// the per-thread bookkeeping was sized for four threads and threads past the fourth skip their
// range. With the verifier's default (the machine's cores: 2 here) every range is computed; on
// a production machine with more cores, or OMP_NUM_THREADS=8, most of the output is never
// written. A weaker harness that runs one thread count passes it. The threads stage runs every
// threaded kernel with 1 thread and with more threads than cores on the same inputs; the
// oversubscribed run leaves ranges unwritten, and no output prefill is ever the right answer.
// Expected: threads / value, "first mismatch".
#include "opgen_kernel.hpp"

#include <cstdint>
#include <omp.h>

namespace opgen::kernels {

namespace {
constexpr int kSlots = 4;  // "enough for any laptop"

int64_t offset_of(const opgen::Tensor& t, const opgen::Tensor& out, int64_t i) {
  int64_t off = 0;
  for (int d = out.ndim() - 1; d >= 0; --d) {
    off += (i % out.size(d)) * t.stride(d);
    i /= out.size(d);
  }
  return off;
}
}  // namespace

void operator_mul__tensor_f32(const opgen::Tensor& a, const opgen::Tensor& b, opgen::Tensor& out) {
  const int64_t n = out.numel();
  const float* pa = a.data<float>();
  const float* pb = b.data<float>();
  float* o = out.data<float>();
  if (n == 0) return;
#pragma omp parallel
  {
    const int t = omp_get_thread_num(), team = omp_get_num_threads();
    if (t < kSlots) {
      const int64_t lo = n * t / team, hi = n * (t + 1) / team;
      for (int64_t i = lo; i < hi; ++i) o[i] = pa[offset_of(a, out, i)] * pb[offset_of(b, out, i)];
    }
  }
}

}  // namespace opgen::kernels
