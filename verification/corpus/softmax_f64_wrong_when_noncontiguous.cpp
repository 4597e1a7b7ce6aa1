// Cheat (or LLM bug): right only on contiguous input. A contiguous x is handled
// correctly. Anything else is first gathered into a contiguous scratch copy, but the
// gather unravels the element index in column-major order, so a transposed, strided or
// reversed view of two or more dims comes out permuted. A harness that feeds only
// freshly allocated arrays (np.random.randn(...)) never takes that path.
// Expected: verify / value, "first mismatch".
#include "opgen_kernel.hpp"

#include <cmath>
#include <cstdint>
#include <vector>

namespace opgen::kernels {

namespace {

int64_t offset_skipping(const opgen::Tensor& t, int64_t i, int skip) {
  int64_t off = 0;
  for (int d = t.ndim() - 1; d >= 0; --d) {
    if (d == skip) continue;
    off += (i % t.size(d)) * t.stride(d);
    i /= t.size(d);
  }
  return off;
}

// Offset of element i of t, unravelled first dim fastest.
int64_t offset_colmajor(const opgen::Tensor& t, int64_t i) {
  int64_t off = 0;
  for (int d = 0; d < t.ndim(); ++d) {
    off += (i % t.size(d)) * t.stride(d);
    i /= t.size(d);
  }
  return off;
}

}  // namespace

void torch_nn_functional_softmax__f64(const opgen::Tensor& x, int64_t dim, opgen::Tensor& out) {
  const int nd = x.ndim();
  const double* xp = x.data<double>();
  double* o = out.data<double>();
  if (out.numel() == 0) return;
  if (nd == 0) {
    const double e = std::exp(xp[0] - xp[0]);
    o[0] = e / e;
    return;
  }
  if (dim < 0) dim += nd;
  const int d = static_cast<int>(dim);
  const int64_t D = x.size(d), sD = x.stride(d);
  int64_t inner = 1;
  for (int k = d + 1; k < nd; ++k) inner *= x.size(k);
  const int64_t slices = out.numel() / D;
  std::vector<long double> e(static_cast<size_t>(D));
  std::vector<double> copy;
  int64_t cstride[OPGEN_MAX_DIMS];
  if (!x.is_contiguous()) {  // gather into a contiguous scratch copy
    copy.resize(static_cast<size_t>(x.numel()));
    for (int64_t i = 0; i < x.numel(); ++i) copy[static_cast<size_t>(i)] = xp[offset_colmajor(x, i)];
  }
  const bool gathered = !copy.empty();
  int64_t c = 1;
  for (int k = nd - 1; k >= 0; --k) {
    cstride[k] = c;
    c *= x.size(k);
  }
  for (int64_t s = 0; s < slices; ++s) {
    int64_t base = offset_skipping(x, s, d), step = sD;
    const double* src = xp;
    if (gathered) {
      base = (s / inner) * D * inner + s % inner;
      step = cstride[d];
      src = copy.data();
    }
    double* os = o + (s / inner) * D * inner + s % inner;
    double m = -INFINITY;
    long double sum = 0.0L;
    for (int64_t j = 0; j < D; ++j) {
      const double v = src[base + j * step];
      m = v > m ? v : m;
    }
    for (int64_t j = 0; j < D; ++j) sum += (e[j] = std::exp(src[base + j * step] - m));
    for (int64_t j = 0; j < D; ++j) os[j * inner] = static_cast<double>(e[j] / sum);
  }
}

}  // namespace opgen::kernels
