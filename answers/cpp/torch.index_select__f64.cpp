// torch.index_select, overload f64: out = torch.index_select(input, dim, index). The shim has
// raised torch's IndexErrors (the dim, a 2-d index, a count other than 1 for a 0-d input, an index
// into an empty dim, any index outside [0, n)) and hands a 0-d input as shape (1,), so every index
// is a valid row of dim. out (contiguous) is, for each position of the dims before dim and each
// index j, the slice input[pre, index[j], ...] copied in row-major order: a memcpy where that
// slice is contiguous in input, else a strided copy with its dims merged where they allow.
#include "opgen_kernel.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace opgen::kernels {

namespace {

using T = double;

// A strided view's row-major copy into dst: size-1 dims dropped and neighbours merged, then one row
// (the innermost merged dim) at a time.
void copy_view(const T* src, int nd, const int64_t* shape, const int64_t* stride, T* dst) {
  int64_t sh[OPGEN_MAX_DIMS], st[OPGEN_MAX_DIMS];
  int n = 0;
  int64_t total = 1;
  for (int d = 0; d < nd; ++d) {
    total *= shape[d];
    if (shape[d] == 1) continue;
    if (n > 0 && st[n - 1] == stride[d] * shape[d]) {
      sh[n - 1] *= shape[d];
      st[n - 1] = stride[d];
    } else {
      sh[n] = shape[d];
      st[n] = stride[d];
      ++n;
    }
  }
  if (total == 0) return;
  if (n == 0) {
    dst[0] = src[0];
    return;
  }
  const int64_t len = sh[n - 1], s = st[n - 1], rows = total / len;
  int64_t idx[OPGEN_MAX_DIMS] = {};
  int64_t off = 0;
  for (int64_t r = 0; r < rows; ++r) {
    T* y = dst + r * len;
    const T* x = src + off;
    if (s == 1) {
      std::memcpy(y, x, static_cast<size_t>(len) * sizeof(T));
    } else {
      for (int64_t j = 0; j < len; ++j) y[j] = x[j * s];
    }
    for (int d = n - 2; d >= 0; --d) {
      off += st[d];
      if (++idx[d] < sh[d]) break;
      off -= st[d] * sh[d];
      idx[d] = 0;
    }
  }
}

}  // namespace

void torch_index_select__f64(const opgen::Tensor& input, int64_t dim, const opgen::Tensor& index, opgen::Tensor& out) {
  const int nd = input.ndim();  // at least 1: the shim made a 0-d input shape (1,)
  const int ax = static_cast<int>(dim < 0 ? dim + nd : dim);
  const int64_t count = index.numel();
  if (out.numel() == 0 || count == 0) return;
  const int64_t* ids = index.data<int64_t>();
  const int64_t id_step = index.ndim() == 1 ? index.stride(0) : 0;
  const int inner_nd = nd - ax - 1;
  int64_t inner = 1;
  for (int d = ax + 1; d < nd; ++d) inner *= input.size(d);
  int64_t outer = 1;
  for (int d = 0; d < ax; ++d) outer *= input.size(d);
  const T* src = input.data<T>();
  T* dst = out.data<T>();
  const int64_t row_stride = input.stride(ax);
  int64_t at[OPGEN_MAX_DIMS] = {};
  int64_t off = 0;  // input's offset of the current position of the dims before dim
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < count; ++j) {
      const T* slice = src + off + ids[j * id_step] * row_stride;
      copy_view(slice, inner_nd, input.sizes() + ax + 1, input.strides() + ax + 1, dst);
      dst += inner;
    }
    for (int d = ax - 1; d >= 0; --d) {  // the next position: an odometer over the dims before dim
      off += input.stride(d);
      if (++at[d] < input.size(d)) break;
      off -= input.stride(d) * input.size(d);
      at[d] = 0;
    }
  }
}

}  // namespace opgen::kernels
