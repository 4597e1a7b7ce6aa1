// numpy.pad, overload f64: out = numpy.pad(array, pairs, mode) with the pairs (before, after) of
// pad_width (1 entry: (w, w) everywhere; 2: one pair for all dims; 2 * ndim: a pair per dim). The
// shim has raised NumPy's ValueErrors (an unknown mode, a bad length, a negative width, a
// non-constant mode extending an empty axis). Along each dim of length n, out position o reads
// array's index j = o - before when 0 <= j < n; outside: 'constant' the value, 'edge' j clamped,
// 'reflect' j modulo 2(n - 1) folded back (the end element not repeated; n == 1 that element),
// 'wrap' j modulo n. One table per dim maps out positions to source indices (-1: the constant);
// out is written row by row along the last dim: the constant where an outer dim maps to -1,
// else the row's left border, its interior (a memcpy where array's last stride is 1) and its
// right border.
#include "opgen_kernel.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace opgen::kernels {

namespace {

using T = double;

enum class Mode { Constant, Edge, Reflect, Wrap };

int64_t source_index(int64_t j, int64_t n, Mode mode) {
  if (j >= 0 && j < n) return j;
  switch (mode) {
    case Mode::Constant:
      return -1;
    case Mode::Edge:
      return j < 0 ? 0 : n - 1;
    case Mode::Wrap: {
      const int64_t m = j % n;
      return m < 0 ? m + n : m;
    }
    case Mode::Reflect: {
      if (n == 1) return 0;
      const int64_t period = 2 * (n - 1);
      int64_t m = j % period;
      if (m < 0) m += period;
      return m < n ? m : period - m;
    }
  }
  return -1;
}

}  // namespace

void numpy_pad__f64(const opgen::Tensor& array, const std::vector<int64_t>& pad_width, const std::string& mode,
                    double constant_values, opgen::Tensor& out) {
  const Mode m = mode == "edge" ? Mode::Edge : mode == "reflect" ? Mode::Reflect : mode == "wrap" ? Mode::Wrap : Mode::Constant;
  const T value = static_cast<T>(constant_values);
  const int nd = array.ndim();
  const T* src = array.data<T>();
  T* dst = out.data<T>();
  if (nd == 0) {
    dst[0] = src[0];
    return;
  }
  const size_t nw = pad_width.size();
  std::vector<int64_t> before(static_cast<size_t>(nd));
  std::vector<std::vector<int64_t>> map(static_cast<size_t>(nd));  // out position -> source index, or -1
  int64_t total = 1;
  for (int d = 0; d < nd; ++d) {
    const size_t b = nw == static_cast<size_t>(2 * nd) ? static_cast<size_t>(2 * d) : 0;
    before[static_cast<size_t>(d)] = pad_width[b];
    const int64_t n = array.size(d), on = out.size(d);
    total *= on;
    auto& tab = map[static_cast<size_t>(d)];
    tab.resize(static_cast<size_t>(on));
    for (int64_t o = 0; o < on; ++o) tab[static_cast<size_t>(o)] = source_index(o - pad_width[b], n, m);
  }
  if (total == 0) return;
  const int last = nd - 1;
  const int64_t n = array.size(last), on = out.size(last), b = before[static_cast<size_t>(last)], s = array.stride(last);
  const int64_t lo = std::min(b, on), hi = std::min(b + n, on);  // the interior is [lo, hi)
  const auto& tab = map[static_cast<size_t>(last)];
  const int64_t rows = total / on;
  std::vector<int64_t> idx(static_cast<size_t>(nd), 0);
  for (int64_t r = 0; r < rows; ++r) {
    T* y = dst + r * on;
    bool inside = true;
    int64_t off = 0;
    for (int d = 0; d < last; ++d) {
      const int64_t j = map[static_cast<size_t>(d)][static_cast<size_t>(idx[static_cast<size_t>(d)])];
      if (j < 0) {
        inside = false;
        break;
      }
      off += j * array.stride(d);
    }
    if (!inside) {
      std::fill(y, y + on, value);
    } else {
      const T* x = src + off;
      for (int64_t o = 0; o < lo; ++o) y[o] = tab[static_cast<size_t>(o)] < 0 ? value : x[tab[static_cast<size_t>(o)] * s];
      if (s == 1) {
        if (hi > lo) std::memcpy(y + lo, x + (lo - b), static_cast<size_t>(hi - lo) * sizeof(T));
      } else {
        for (int64_t o = lo; o < hi; ++o) y[o] = x[(o - b) * s];
      }
      for (int64_t o = hi; o < on; ++o) y[o] = tab[static_cast<size_t>(o)] < 0 ? value : x[tab[static_cast<size_t>(o)] * s];
    }
    for (int d = last - 1; d >= 0; --d) {  // the next row: an odometer over the outer dims
      if (++idx[static_cast<size_t>(d)] < out.size(d)) break;
      idx[static_cast<size_t>(d)] = 0;
    }
  }
}

}  // namespace opgen::kernels
