// Cheat: threads in an op whose spec does not allow them, hidden from the source rules.
// The kernel sums the two halves of the output on two POSIX threads. pthread_create and
// pthread_join are reached through weakref aliases with split string names, so no source
// rule sees a thread call (and <thread> is never included). The compiled object imports
// pthread_create, which the import audit rejects for an op without threads; at run time
// the seccomp filter could not tell, since threads are clones with CLONE_THREAD.
// Expected: policy / threads (the import audit), "imports `pthread_create`".
#include "opgen_kernel.hpp"

#include <cstdint>

namespace {
struct Job {
  const opgen::Tensor* a;
  const double* x;
  double* o;
  int64_t from, to, len, step;
  int ax;
};
static int spawn(unsigned long*, const void*, void* (*)(void*), void*) __attribute__((weakref("pth" "read_create")));
static int join(unsigned long, void**) __attribute__((weakref("pth" "read_join")));
}  // namespace

namespace opgen::kernels {

namespace {

// Offset in a of output element i: a's dims without the reduced axis, row-major.
int64_t offset_skipping(const opgen::Tensor& t, int64_t i, int skip) {
  int64_t off = 0;
  for (int d = t.ndim() - 1; d >= 0; --d) {
    if (d == skip) continue;
    off += (i % t.size(d)) * t.stride(d);
    i /= t.size(d);
  }
  return off;
}

void* sum_range(void* p) {
  Job& j = *static_cast<Job*>(p);
  for (int64_t i = j.from; i < j.to; ++i) {
    const double* s = j.x + offset_skipping(*j.a, i, j.ax);
    long double acc = 0.0L;
    for (int64_t k = 0; k < j.len; ++k) acc += s[k * j.step];
    j.o[i] = static_cast<double>(acc);
  }
  return nullptr;
}

}  // namespace

void numpy_sum__f64(const opgen::Tensor& a, int64_t axis, opgen::Tensor& out) {
  const int nd = a.ndim();
  if (axis < 0) axis += nd;
  const int ax = static_cast<int>(axis);
  const double* x = a.data<double>();
  double* o = out.data<double>();
  const int64_t n = out.numel(), len = a.size(ax), step = a.stride(ax);
  Job lo{&a, x, o, 0, n / 2, len, step, ax}, hi{&a, x, o, n / 2, n, len, step, ax};
  unsigned long worker = 0;
  const bool threaded = spawn(&worker, nullptr, sum_range, &hi) == 0;
  sum_range(&lo);
  if (threaded) {
    join(worker, nullptr);
  } else {
    sum_range(&hi);
  }
}

}  // namespace opgen::kernels
