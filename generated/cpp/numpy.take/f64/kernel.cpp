// numpy.take, overload f64: numpy.take(a, indices, axis=axis), mode="raise".
//
// out (contiguous) is (outer, m, inner) row-major: outer = a's dims before the axis, m = the
// number of indices (their shape flattened in C order), inner = a's dims after it. The indices
// are read once, in C order, normalised (a negative one plus n) and checked again here (the shim
// has already raised IndexError for any outside [-n, n), before an index meets a stride). The
// inner dims are walked as a table of input offsets, so a gathered slab is a contiguous copy when
// a's inner dims are contiguous, and a strided lane otherwise. Values are copied bit for bit.
#include "opgen_kernel.hpp"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace opgen::kernels {

void numpy_take__f64(const opgen::Tensor& a, const opgen::Tensor& indices, int64_t axis, opgen::Tensor& out) {
  using T = double;
  const int nd = a.ndim();
  if (axis < -nd || axis >= nd) throw opgen::Error(opgen::ErrorKind::Value, "axis out of range");
  const int ax = static_cast<int>(axis < 0 ? axis + nd : axis);
  if (out.numel() == 0) return;
  T* dst = out.data<T>();
  const T* src = a.data<T>();
  const int64_t n = a.size(ax), sn = a.stride(ax);

  // The indices in C order, normalised.
  const int64_t m = indices.numel();
  std::vector<int64_t> idx(static_cast<size_t>(m));
  {
    const int in = indices.ndim();
    const int64_t* p = indices.data<int64_t>();
    int64_t at[OPGEN_MAX_DIMS] = {};
    int64_t off = 0;
    for (int64_t j = 0; j < m; ++j) {
      int64_t v = p[off];
      if (v < -n || v >= n)
        throw opgen::Error(opgen::ErrorKind::Index, "index " + std::to_string(v) + " is out of bounds for axis " +
                                                        std::to_string(ax) + " with size " + std::to_string(n));
      idx[static_cast<size_t>(j)] = v < 0 ? v + n : v;
      for (int d = in - 1; d >= 0; --d) {
        if (++at[d] < indices.size(d)) {
          off += indices.stride(d);
          break;
        }
        off -= indices.stride(d) * (indices.size(d) - 1);
        at[d] = 0;
      }
    }
  }

  // The input offsets of the inner elements, in row-major order.
  int64_t inner = 1;
  for (int d = ax + 1; d < nd; ++d) inner *= a.size(d);
  std::vector<int64_t> inoff(static_cast<size_t>(inner), 0);
  bool contiguous_inner = true;
  {
    int64_t at[OPGEN_MAX_DIMS] = {};
    int64_t off = 0;
    for (int64_t i = 0; i < inner; ++i) {
      inoff[static_cast<size_t>(i)] = off;
      if (off != i) contiguous_inner = false;
      for (int d = nd - 1; d > ax; --d) {
        if (++at[d] < a.size(d)) {
          off += a.stride(d);
          break;
        }
        off -= a.stride(d) * (a.size(d) - 1);
        at[d] = 0;
      }
    }
  }
  int64_t outer = 1;
  for (int d = 0; d < ax; ++d) outer *= a.size(d);
  int64_t at[OPGEN_MAX_DIMS] = {};
  int64_t off = 0;
  for (int64_t o = 0; o < outer; ++o) {
    const T* base = src + off;
    T* ob = dst + o * m * inner;
    for (int64_t j = 0; j < m; ++j) {
      const T* row = base + idx[static_cast<size_t>(j)] * sn;
      T* orow = ob + j * inner;
      if (contiguous_inner) {
        std::memcpy(orow, row, static_cast<size_t>(inner) * sizeof(T));
      } else {
        const int64_t* io = inoff.data();
        for (int64_t i = 0; i < inner; ++i) orow[i] = row[io[i]];
      }
    }
    for (int d = ax - 1; d >= 0; --d) {
      if (++at[d] < a.size(d)) {
        off += a.stride(d);
        break;
      }
      off -= a.stride(d) * (a.size(d) - 1);
      at[d] = 0;
    }
  }
}

}  // namespace opgen::kernels
