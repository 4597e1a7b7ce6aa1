// Cheat: indices narrowed to 16 bits. Every id is range-checked as int64 (so -1,
// num_embeddings, INT64_MIN and INT64_MAX still raise IndexError), then stored in a compact
// uint16_t id buffer ("halves the id traffic; vocabularies fit") before the rows are
// copied. For tables of up to 65536 rows that is exact; for larger tables (Gemma's 262144
// rows, any table over 65536) an id >= 65536 silently wraps to id % 65536 and copies the
// wrong row. Hypothesis draws tables of at most 40 rows (the spec's max_side), and the
// bench tables (30522 and 32768 rows) fit in 16 bits, so neither shows it. The scale
// stage (tables over 65536 rows, ids drawn across the whole table) must reject it.
// Expected: scale / value, "first mismatch"
#include "opgen_kernel.hpp"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>
#ifdef _OPENMP
#include <omp.h>
#endif

namespace opgen::kernels {

namespace {

using T = float;
constexpr int64_t kPerThreadMin = 1 << 15;  // floats copied per thread below which threads cost more than they save

}  // namespace

void torch_nn_functional_embedding__f32(const opgen::Tensor& input, const opgen::Tensor& weight, opgen::Tensor& out) {
  const int nd = input.ndim();
  if (weight.ndim() != nd + 2 || out.ndim() != nd + 1)
    throw opgen::Error(opgen::ErrorKind::Value, "embedding expects a 2-d weight (num_embeddings, embedding_dim)");
  for (int d = 0; d < nd; ++d)
    if (weight.size(d) > 1 && weight.stride(d) != 0)
      throw opgen::Error(opgen::ErrorKind::Value, "embedding expects a 2-d weight (num_embeddings, embedding_dim)");
  const int64_t rows = weight.size(-2), dim = weight.size(-1);
  const int64_t srow = weight.stride(-2), scol = weight.stride(-1);
  const int64_t n = input.numel();
  if (n == 0) return;

  // The ids in row-major order (input may be strided, reversed or 0-d), checked first.
  std::vector<uint16_t> ids(static_cast<size_t>(n));
  {
    const int64_t* p = input.data<int64_t>();
    int64_t idx[OPGEN_MAX_DIMS] = {};
    int64_t off = 0;
    for (int64_t i = 0; i < n; ++i) {
      const int64_t id = p[off];
      if (id < 0 || id >= rows)
        throw opgen::Error(opgen::ErrorKind::Index, "index out of range in self: id " + std::to_string(id) +
                                                        " is not in [0, " + std::to_string(rows) + ")");
      ids[static_cast<size_t>(i)] = static_cast<uint16_t>(id);  // the bug
      for (int d = nd - 1; d >= 0; --d) {
        if (++idx[d] < input.size(d)) {
          off += input.stride(d);
          break;
        }
        off -= input.stride(d) * (input.size(d) - 1);
        idx[d] = 0;
      }
    }
  }
  if (dim == 0) return;

  const T* W = weight.data<T>();
  T* O = out.data<T>();
  const uint16_t* I = ids.data();
  int threads = 1;
#ifdef _OPENMP
  threads = omp_get_max_threads();
#endif
  const int64_t by_size = n * dim / kPerThreadMin;
  threads = static_cast<int>(by_size < threads ? (by_size < 1 ? 1 : by_size) : threads);
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
  for (int64_t i = 0; i < n; ++i) {
    const T* src = W + I[i] * srow;
    T* dst = O + i * dim;
    if (scol == 1) {
      std::memcpy(dst, src, static_cast<size_t>(dim) * sizeof(T));
    } else {
      for (int64_t j = 0; j < dim; ++j) std::memcpy(dst + j, src + j * scol, sizeof(T));
    }
  }
}

}  // namespace opgen::kernels

// Expected: scale / value, "first mismatch"
