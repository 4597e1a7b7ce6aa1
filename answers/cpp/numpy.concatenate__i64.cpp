// numpy.concatenate, overload i64: out = the elements of `arrays` one after another along `axis` (the shim has checked the list, the axis and the
// shapes with NumPy's errors and allocated out, contiguous). Data movement: elements are copied bit
// for bit as int64. Each element is placed in out's slab along the axis: a contiguous element
// is one memcpy per index of the dims before the axis (a KV-cache append is 12 of them); any other
// layout is walked with its own strides.
#include "opgen_kernel.hpp"

#include <cstdint>
#include <cstring>
#include <vector>
#ifdef _OPENMP
#include <omp.h>
#endif

namespace opgen::kernels {

namespace {

using T = int64_t;

// A copy is bound by memory bandwidth, which one core nearly saturates: a thread team pays off only on
// large copies (and a team's barrier on a busy machine costs milliseconds: a KV-cache append of
// 786 KB took 20 ms with two threads on a loaded 2-core machine, against 0.15 ms with one).
constexpr int64_t kPerThreadBytes = int64_t(4) << 20;

int team_for(int64_t bytes) {
  int threads = 1;
#ifdef _OPENMP
  threads = omp_get_max_threads();
#endif
  const int64_t by_size = bytes / kPerThreadBytes;
  return static_cast<int>(by_size < threads ? (by_size < 1 ? 1 : by_size) : threads);
}

// Copies every element of `xs` into out along out's axis `ax`. `stack`: each element is out's rank
// minus one and stands as a slab of length 1 at `ax` (numpy.stack); else it has out's rank and its
// own length along `ax` (numpy.concatenate).
void join(const std::vector<opgen::Tensor>& xs, int ax, bool stack, opgen::Tensor& out) {
  const int nd = out.ndim();
  if (out.numel() == 0) return;
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < ax; ++d) outer *= out.size(d);
  for (int d = ax + 1; d < nd; ++d) inner *= out.size(d);
  const int64_t out_len = out.size(ax);
  T* dst = out.data<T>();
  int64_t at = 0;  // where the next element starts along the axis
  for (const opgen::Tensor& x : xs) {
    // The element as a view of out's rank: its shape and strides (in elements).
    int64_t shape[OPGEN_MAX_DIMS], stride[OPGEN_MAX_DIMS];
    for (int d = 0, s = 0; d < nd; ++d) {
      if (stack && d == ax) {
        shape[d] = 1;
        stride[d] = 0;
      } else {
        shape[d] = x.size(s);
        stride[d] = x.stride(s);
        ++s;
      }
    }
    const int64_t k = shape[ax];
    const int64_t block = k * inner;  // the element's elements per index of the outer dims
    if (block == 0) {
      at += k;
      continue;
    }
    const T* src = x.data<T>();
    T* base = dst + at * inner;
    if (x.is_contiguous()) {
      const int threads = team_for(outer * block * int64_t(sizeof(T)));
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
      for (int64_t o = 0; o < outer; ++o)
        std::memcpy(base + o * out_len * inner, src + o * block, size_t(block) * sizeof(T));
    } else {
      // Out's strides restricted to the element's slab; walk the element's indices in C order.
      int64_t ostride[OPGEN_MAX_DIMS];
      int64_t acc = 1;
      for (int d = nd - 1; d >= 0; --d) {
        ostride[d] = acc;
        acc *= out.size(d);
      }
      const int last = nd - 1;
      const int64_t n = shape[last], s = stride[last], os = ostride[last];
      int64_t rows = 1;
      for (int d = 0; d < last; ++d) rows *= shape[d];
      const int threads = team_for(rows * n * int64_t(sizeof(T)));
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
      for (int64_t r = 0; r < rows; ++r) {
        int64_t so = 0, doff = 0, rem = r;
        for (int d = last - 1; d >= 0; --d) {
          const int64_t i = rem % shape[d];
          rem /= shape[d];
          so += i * stride[d];
          doff += i * ostride[d];
        }
        const T* xr = src + so;
        T* yr = base + doff;
        for (int64_t j = 0; j < n; ++j) yr[j * os] = xr[j * s];
      }
    }
    at += k;
  }
}

}  // namespace

void numpy_concatenate__i64(const std::vector<opgen::Tensor>& arrays, int64_t axis, opgen::Tensor& out) {
  const int nd = out.ndim();  // the shim has checked axis against it
  const int ax = static_cast<int>(axis < 0 ? axis + nd : axis);
  join(arrays, ax, false, out);
}

}  // namespace opgen::kernels
