// torch.nn.functional.pad, overload f64, mode 'constant': pad holds (before, after) pairs from the
// last dim backwards; a negative entry crops. The shim has raised torch's errors (odd length, too
// many pairs, a crop past a dim's length) and allocated out. Along each dim, out position o reads
// input's o - before where that is inside input, else the value; out is written row by row along the
// last dim: the value where an outer dim is outside, else the row's left border, its interior (a
// memcpy where input's last stride is 1) and its right border.
#include "opgen_kernel.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace opgen::kernels {

namespace {

using T = double;

}  // namespace

void torch_nn_functional_pad__f64(const opgen::Tensor& input, const std::vector<int64_t>& pad, const std::string& mode,
                                  double value, opgen::Tensor& out) {
  if (mode != "constant") throw opgen::Error(opgen::ErrorKind::Value, "mode '" + mode + "': only 'constant' is this op's");
  const T fill = static_cast<T>(value);
  const int nd = input.ndim();
  const T* src = input.data<T>();
  T* dst = out.data<T>();
  if (out.numel() == 0) return;
  if (nd == 0) {
    dst[0] = src[0];
    return;
  }
  std::vector<int64_t> before(static_cast<size_t>(nd), 0);
  for (size_t k = 0; 2 * k < pad.size(); ++k) before[static_cast<size_t>(nd) - 1 - k] = pad[2 * k];
  const int last = nd - 1;
  const int64_t n = input.size(last), on = out.size(last), b = before[static_cast<size_t>(last)], s = input.stride(last);
  const int64_t lo = std::clamp<int64_t>(b, 0, on), hi = std::clamp<int64_t>(b + n, 0, on);  // the interior [lo, hi)
  const int64_t rows = out.numel() / on;
  std::vector<int64_t> idx(static_cast<size_t>(nd), 0);
  for (int64_t r = 0; r < rows; ++r) {
    T* y = dst + r * on;
    bool inside = true;
    int64_t off = 0;
    for (int d = 0; d < last; ++d) {
      const int64_t j = idx[static_cast<size_t>(d)] - before[static_cast<size_t>(d)];
      if (j < 0 || j >= input.size(d)) {
        inside = false;
        break;
      }
      off += j * input.stride(d);
    }
    if (!inside) {
      std::fill(y, y + on, fill);
    } else {
      const T* x = src + off;
      std::fill(y, y + lo, fill);
      if (s == 1) {
        if (hi > lo) std::memcpy(y + lo, x + (lo - b), static_cast<size_t>(hi - lo) * sizeof(T));
      } else {
        for (int64_t o = lo; o < hi; ++o) y[o] = x[(o - b) * s];
      }
      std::fill(y + hi, y + on, fill);
    }
    for (int d = last - 1; d >= 0; --d) {  // the next row: an odometer over the outer dims
      if (++idx[static_cast<size_t>(d)] < out.size(d)) break;
      idx[static_cast<size_t>(d)] = 0;
    }
  }
}

}  // namespace opgen::kernels
