// numpy.cumsum, overload i64: numpy.cumsum(a, axis=axis) for int64 tensors.
//
// Written by hand (not by a model). Each prefix is accumulated one after another from the first
// element; the running sums are kept as uint64_t, whose addition wraps modulo 2**64 by definition,
// so a prefix past int64's range wraps as NumPy's int64 additions do without the signed overflow
// that C++ leaves undefined (and UBSan rejects). out is contiguous with a's shape, (outer, n, inner)
// row-major. The dims after the axis (inner) are walked as a table of input offsets, so a whole row
// of `inner` prefixes advances at once (contiguous and vectorised when a's inner dims are); a last
// axis (inner == 1) is one strided lane per output row. Any strides, 0-size dims.
#include "opgen_kernel.hpp"

#include <cstdint>
#include <vector>

namespace opgen::kernels {

void numpy_cumsum__i64(const opgen::Tensor& a, int64_t axis, opgen::Tensor& out) {
  using T = int64_t;
  using Acc = uint64_t;
  const int nd = a.ndim();
  if (axis < -nd || axis >= nd) throw opgen::Error(opgen::ErrorKind::Value, "axis out of range");
  if (axis < 0) axis += nd;
  const int ax = static_cast<int>(axis);
  T* dst = out.data<T>();
  if (out.numel() == 0) return;
  const T* src = a.data<T>();
  const int64_t K = a.size(ax), sK = a.stride(ax);

  // The input offsets of the inner elements, in row-major order.
  int64_t inner = 1;
  for (int d = ax + 1; d < nd; ++d) inner *= a.size(d);
  std::vector<int64_t> inoff(static_cast<size_t>(inner), 0);
  bool contiguous_inner = true;
  {
    int64_t idx[OPGEN_MAX_DIMS] = {};
    int64_t off = 0;
    for (int64_t j = 0; j < inner; ++j) {
      inoff[static_cast<size_t>(j)] = off;
      if (off != j) contiguous_inner = false;
      for (int d = nd - 1; d > ax; --d) {
        if (++idx[d] < a.size(d)) {
          off += a.stride(d);
          break;
        }
        off -= a.stride(d) * (a.size(d) - 1);
        idx[d] = 0;
      }
    }
  }
  int64_t outer = 1;
  for (int d = 0; d < ax; ++d) outer *= a.size(d);
  std::vector<Acc> acc(static_cast<size_t>(inner));
  int64_t idx[OPGEN_MAX_DIMS] = {};
  int64_t off = 0;
  for (int64_t o = 0; o < outer; ++o) {
    const T* base = src + off;
    T* ob = dst + o * K * inner;
    if (inner == 1) {
      Acc s = 0;
      for (int64_t k = 0; k < K; ++k) {
        s += static_cast<Acc>(base[k * sK]);
        ob[k] = static_cast<T>(s);  // modular conversion (C++20 defines it; GCC always has)
      }
    } else {
      Acc* __restrict ac = acc.data();
      for (int64_t j = 0; j < inner; ++j) ac[j] = 0;
      for (int64_t k = 0; k < K; ++k) {
        const T* __restrict row = base + k * sK;
        T* __restrict orow = ob + k * inner;
        if (contiguous_inner) {
          for (int64_t j = 0; j < inner; ++j) {
            ac[j] += static_cast<Acc>(row[j]);
            orow[j] = static_cast<T>(ac[j]);
          }
        } else {
          const int64_t* io = inoff.data();
          for (int64_t j = 0; j < inner; ++j) {
            ac[j] += static_cast<Acc>(row[io[j]]);
            orow[j] = static_cast<T>(ac[j]);
          }
        }
      }
    }
    for (int d = ax - 1; d >= 0; --d) {
      if (++idx[d] < a.size(d)) {
        off += a.stride(d);
        break;
      }
      off -= a.stride(d) * (a.size(d) - 1);
      idx[d] = 0;
    }
  }
}

}  // namespace opgen::kernels
