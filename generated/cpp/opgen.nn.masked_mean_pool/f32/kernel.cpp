// opgen.nn.masked_mean_pool, overload f32: out[..., :] = sum_s hidden[..., s, :] * mask[..., s]
// / max(sum_s mask[..., s], 1e-9), as sentence-transformers' Pooling(pooling_mode="mean")
// computes it.
//
// Every position is multiplied by its mask value, masked ones included (the reference does
// not skip them: a nan or inf at a masked position still makes its column nan, nan * 0).
// Sums are taken in double and rounded to float32 once, as is the mask's sum; the count is
// clamped to 1e-9 in float32 and the mean is that float32 sum divided by it in float32, the
// reference's last two steps. A row with no unmasked position, or seq == 0, gives 0.
//
// Layout: hidden (*loop, seq, dim) and mask (*loop, seq) with the loop dims broadcast by the
// shim (stride 0 where broadcast), out (*loop, dim) contiguous. Work items are (loop index,
// block of 64 columns): each accumulates its columns over the whole sequence in registers-
// sized double buffers, reading hidden a row segment at a time (contiguous when hidden's
// last stride is 1). Items are split across OpenMP threads when there is enough work.
#include "opgen_kernel.hpp"

#include <cstdint>
#include <cstring>
#include <vector>
#ifdef _OPENMP
#include <omp.h>
#endif

namespace opgen::kernels {

namespace {

#pragma GCC diagnostic ignored "-Wpsabi"  // the vector types never cross a library boundary

using T = float;
typedef double v8d __attribute__((vector_size(64)));
typedef float v8f __attribute__((vector_size(32)));
constexpr int64_t kCols = 64;               // columns per work item
constexpr int64_t kPerThreadMin = 1 << 15;  // elements per thread below which threads cost more than they save

inline v8d load8(const T* p) {
  v8f v;
  std::memcpy(&v, p, sizeof v);
  return __builtin_convertvector(v, v8d);
}

}  // namespace

void opgen_nn_masked_mean_pool__f32(const opgen::Tensor& hidden, const opgen::Tensor& mask, opgen::Tensor& out) {
  const int nd = hidden.ndim();  // loop dims + (seq, dim)
  if (nd < 2 || mask.ndim() != nd - 1 || out.ndim() != nd - 1)
    throw opgen::Error(opgen::ErrorKind::Value, "masked_mean_pool expects hidden (..., seq, dim) and mask (..., seq)");
  const int lead = nd - 2;
  const int64_t seq = hidden.size(nd - 2), dim = hidden.size(nd - 1);
  int64_t batch = 1;
  for (int k = 0; k < lead; ++k) batch *= out.size(k);
  if (batch == 0 || dim == 0) return;
  const int64_t shs = hidden.stride(nd - 2), shd = hidden.stride(nd - 1), sms = mask.stride(nd - 2);

  // Offsets of each loop index in hidden and mask (row-major over the loop dims).
  std::vector<int64_t> hoff(static_cast<size_t>(batch)), moff(static_cast<size_t>(batch));
  {
    int64_t idx[OPGEN_MAX_DIMS] = {};
    int64_t ho = 0, mo = 0;
    for (int64_t b = 0; b < batch; ++b) {
      hoff[static_cast<size_t>(b)] = ho;
      moff[static_cast<size_t>(b)] = mo;
      for (int k = lead - 1; k >= 0; --k) {
        if (++idx[k] < out.size(k)) {
          ho += hidden.stride(k);
          mo += mask.stride(k);
          break;
        }
        ho -= hidden.stride(k) * (out.size(k) - 1);
        mo -= mask.stride(k) * (out.size(k) - 1);
        idx[k] = 0;
      }
    }
  }
  const T* H = hidden.data<T>();
  const int64_t* M = mask.data<int64_t>();
  T* O = out.data<T>();
  const int64_t blocks = (dim + kCols - 1) / kCols;
  const int64_t items = batch * blocks;
  int threads = 1;
#ifdef _OPENMP
  threads = omp_get_max_threads();
#endif
  const int64_t by_size = batch * seq * dim / kPerThreadMin;
  threads = static_cast<int>(by_size < threads ? (by_size < 1 ? 1 : by_size) : threads);
  if (threads > items) threads = static_cast<int>(items);
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
  for (int64_t it = 0; it < items; ++it) {
    const int64_t b = it / blocks, c0 = (it % blocks) * kCols;
    const int64_t nc = dim - c0 < kCols ? dim - c0 : kCols;
    const T* hb = H + hoff[static_cast<size_t>(b)] + c0 * shd;
    const int64_t* mb = M + moff[static_cast<size_t>(b)];
    alignas(64) double acc[kCols] = {};
    double count = 0.0;
    for (int64_t s = 0; s < seq; ++s) {
      const double m = static_cast<double>(mb[s * sms]);
      count += m;
      const T* h = hb + s * shs;
      if (shd == 1 && nc == kCols) {
        const v8d vm = v8d{} + m;
        for (int64_t j = 0; j < kCols; j += 8) {
          v8d a;
          std::memcpy(&a, acc + j, sizeof a);
          a += load8(h + j) * vm;
          std::memcpy(acc + j, &a, sizeof a);
        }
      } else {
        for (int64_t j = 0; j < nc; ++j) acc[j] += static_cast<double>(h[j * shd]) * m;
      }
    }
    float denom = static_cast<float>(count);
    denom = denom < 1e-9f ? 1e-9f : denom;
    T* o = O + b * dim + c0;
    for (int64_t j = 0; j < nc; ++j) o[j] = static_cast<float>(acc[j]) / denom;
  }
}

}  // namespace opgen::kernels
