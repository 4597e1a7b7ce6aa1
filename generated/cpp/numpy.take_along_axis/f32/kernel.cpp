// numpy.take_along_axis, overload f32: numpy.take_along_axis(arr, indices, axis=axis).
//
// The shim has checked the axis, the ranks, the broadcast and every index (IndexError outside
// [-n, n)), and hands over indices as a view of out's shape and arr as one of out's shape with
// arr's own length n along the axis (stride 0 along broadcast dims). So out[p] = arr[p with the
// axis replaced by indices[p]], plus n for a negative index (checked again here). The dims other
// than the axis are walked with an odometer over the three tensors' offsets; along the axis,
// out is a run of stride `inner` (its dims after the axis). Values are copied bit for bit.
#include "opgen_kernel.hpp"

#include <cstdint>
#include <string>

namespace opgen::kernels {

void numpy_take_along_axis__f32(const opgen::Tensor& arr, const opgen::Tensor& indices, int64_t axis,
                                 opgen::Tensor& out) {
  using T = float;
  const int nd = arr.ndim();
  if (axis < -nd || axis >= nd) throw opgen::Error(opgen::ErrorKind::Value, "axis out of range");
  const int ax = static_cast<int>(axis < 0 ? axis + nd : axis);
  if (out.numel() == 0) return;
  T* dst = out.data<T>();
  const T* src = arr.data<T>();
  const int64_t* ip = indices.data<int64_t>();
  const int64_t n = arr.size(ax), sa = arr.stride(ax), si = indices.stride(ax), m = out.size(ax);
  int64_t inner = 1;
  for (int d = ax + 1; d < nd; ++d) inner *= out.size(d);
  int64_t at[OPGEN_MAX_DIMS] = {};
  int64_t aoff = 0, ioff = 0;
  const int64_t lanes = out.numel() / m;
  for (int64_t l = 0; l < lanes; ++l) {
    // The lane's first output element: (o, 0, i) with l = o * inner + i.
    const int64_t o = l / inner, i = l % inner;
    T* orow = dst + o * m * inner + i;
    for (int64_t k = 0; k < m; ++k) {
      int64_t v = ip[ioff + k * si];
      if (v < -n || v >= n)
        throw opgen::Error(opgen::ErrorKind::Index, "index " + std::to_string(v) + " is out of bounds for axis " +
                                                        std::to_string(ax) + " with size " + std::to_string(n));
      if (v < 0) v += n;
      orow[k * inner] = src[aoff + v * sa];
    }
    for (int d = nd - 1; d >= 0; --d) {  // the next lane: the odometer over every dim but the axis
      if (d == ax) continue;
      if (++at[d] < out.size(d)) {
        aoff += arr.stride(d);
        ioff += indices.stride(d);
        break;
      }
      aoff -= arr.stride(d) * (out.size(d) - 1);
      ioff -= indices.stride(d) * (out.size(d) - 1);
      at[d] = 0;
    }
  }
}

}  // namespace opgen::kernels
