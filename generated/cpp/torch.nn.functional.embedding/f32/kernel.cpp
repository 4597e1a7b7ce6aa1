// torch.nn.functional.embedding, overload f32: out[i..., :] = weight[input[i...], :].
//
// `input` holds int64 ids of any shape (0-d included); `weight` arrives as the gufunc's
// (*input.shape, num_embeddings, embedding_dim) view, its leading dims at stride 0, so the
// table is its last two dims: row r starts at weight.data + r * weight.stride(-2) and its
// columns are weight.stride(-1) apart. `out` is contiguous, input.shape + (embedding_dim,).
//
// Every id is checked against [0, num_embeddings) before anything is read, and before an
// id is multiplied by a stride (INT64_MIN and INT64_MAX ids must not overflow into a valid
// address): an out-of-range id raises IndexError, negative ids included (no wrap-around).
// Then each id's row is copied bit for bit (memcpy where the row is contiguous, so nan
// payloads and -0.0 arrive unchanged), the ids split across OpenMP threads when the copy
// is large enough to pay for them.
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
  std::vector<int64_t> ids(static_cast<size_t>(n));
  {
    const int64_t* p = input.data<int64_t>();
    int64_t idx[OPGEN_MAX_DIMS] = {};
    int64_t off = 0;
    for (int64_t i = 0; i < n; ++i) {
      const int64_t id = p[off];
      if (id < 0 || id >= rows)
        throw opgen::Error(opgen::ErrorKind::Index, "index out of range in self: id " + std::to_string(id) +
                                                        " is not in [0, " + std::to_string(rows) + ")");
      ids[static_cast<size_t>(i)] = id;
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
  const int64_t* I = ids.data();
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
