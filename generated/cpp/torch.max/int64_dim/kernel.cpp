// torch.max, overload int64_dim: (values, indices) = torch.max(input, dim, keepdim), the largest element along
// dim and its index.
//
// One pass per lane: the first largest element wins (a later equal one, 0.0 against -0.0 included,
// does not replace it), and integers have no nan. Results are contiguous and their elements are the lanes in
// row-major order of the other dims, with or without the kept dim, so lane L writes element L.
// The shim has checked dim; an empty lane raises IndexError in torch's words.
// Written by scripts/extreme_dim_kernels.py.
#include "opgen_kernel.hpp"

#include <cstdint>
#include <string>

namespace opgen::kernels {

void torch_max__int64_dim(const opgen::Tensor& input, int64_t dim, bool keepdim, opgen::Tensor& values,
          opgen::Tensor& indices) {
  (void)keepdim;  // the results' shapes carry it; their element order is the same
  using T = int64_t;
  const T* x = input.data<T>();
  T* vo = values.data<T>();
  int64_t* io = indices.data<int64_t>();
  const int nd = input.ndim();
  if (nd == 0) {
    vo[0] = x[0];
    io[0] = 0;
    return;
  }
  const int ax = static_cast<int>(dim < 0 ? dim + nd : dim);
  const int64_t n = input.size(ax);
  if (n == 0)
    throw opgen::Error(opgen::ErrorKind::Index, "max(): Expected reduction dim " + std::to_string(ax) +
                                                    " to have non-zero size.");
  int64_t lanes = 1;
  for (int d = 0; d < nd; ++d)
    if (d != ax) lanes *= input.size(d);
  const int64_t sx = input.stride(ax);
  for (int64_t lane = 0; lane < lanes; ++lane) {
    int64_t rem = lane, off = 0;  // the lane's first element: decode L over the other dims
    for (int d = nd - 1; d >= 0; --d) {
      if (d == ax) continue;
      const int64_t size = input.size(d);
      off += (rem % size) * input.stride(d);
      rem /= size;
    }
    const T* row = x + off;
    T best = row[0];
    int64_t at = 0;
    for (int64_t j = 1; j < n; ++j) {
      const T v = row[j * sx];
      if (v > best) {
        best = v;
        at = j;
      }
    }
    vo[lane] = best;
    io[lane] = at;
  }
}

}  // namespace opgen::kernels
