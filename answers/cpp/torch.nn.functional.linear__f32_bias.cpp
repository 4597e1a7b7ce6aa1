// torch.nn.functional.linear, overload f32_bias: out[..., j] = sum_p x[..., p] * W[j, p] + b[j].
//
// The shim presents weight as (*loop, n, k) and bias as (*loop, n) with input's leading dims
// in front at stride 0; a weight or bias that really varies along a leading dim is not a
// linear layer and throws ValueError. Every row of input (any number of leading dims, any
// strides: rows are found through an offset table) uses the same (n, k) matrix.
//
// A GotoBLAS/BLIS-style GEMM of the rows of x (m x k) with W^T (k x n):
//   - W^T is packed, KC rows (of k) by NC columns at a time, into NR-wide column panels, and x
//     into MR-tall row panels (zero-padded to whole panels), so the inner kernel reads both
//     contiguously whatever the strides; the packed block of W^T stays in the L2 cache of the
//     core that uses it, one MR x KC panel of x in L1;
//   - the MR x NR micro-kernel keeps its whole output tile in vector registers (GCC vector
//     extensions sized to the ISA: 12 rows x 32 floats with AVX-512, 6 x 16 with AVX2) and does
//     one fused multiply-add per broadcast element of x and vector of W^T; a last, shorter row
//     panel runs an instantiation for its own row count, not MR rows with zeros (20 rows were
//     12 + 12 with 4 of zeros: one thread, 70 -> 96 GFLOP/s at MiniLM's shapes with the weights
//     in cache, 9.7 -> 9.0 ms a 24-layer pass streamed from memory, measured under load);
//   - two or more OpenMP threads split the rows (or, for few rows, the columns) and each packs
//     what it uses, so no thread waits for another inside the product.
//   - few rows (up to kSmallM: a sentence at batch 1) skip packing W, which would cost as much as
//     the product there. When W is a transposed view of a (k, n) matrix (a caller that laid its
//     weights out once as W^T, as ONNX Runtime prepacks them), the micro-kernel reads each NR-wide
//     column panel of W^T in place, rows n apart (only x, a few KiB, is packed): the same outer
//     products as the packed path, without copying the weights on every call; the next panel is
//     prefetched while one is used, since weights read once per call come from memory, not
//     cache (one thread, a MiniLM pass of 24 layers at 20 rows: 13.5 ms with dot products,
//     13.7 in place, 10.2 in place with the prefetch). Otherwise each
//     RI x RJ tile of out is RI x RJ dot products along k, x's rows and W's rows read in place
//     (both contiguous in k), W's RJ rows staying in L1 while every row of x passes them, and a
//     horizontal sum per tile. Threads split the columns.
// Every product is summed (zeros are not skipped), so nan and inf propagate as in the plain
// loop; the bias is added after the whole sum, at the last KC block. k == 0 gives the bias;
// m == 0 or n == 0 writes nothing.
#include "opgen_kernel.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>
#if defined(__AVX512F__)
#include <immintrin.h>
#endif
#ifdef _OPENMP
#include <omp.h>
#endif

namespace opgen::kernels {

namespace {

#pragma GCC diagnostic ignored "-Wpsabi"  // the vector types never cross a library boundary

using T = float;
#if defined(__AVX512F__)
constexpr int kVecBytes = 64;
constexpr int MR = 12;
#elif defined(__AVX__)
constexpr int kVecBytes = 32;
constexpr int MR = 6;
#else
constexpr int kVecBytes = 16;
constexpr int MR = 4;
#endif
constexpr int VL = kVecBytes / static_cast<int>(sizeof(T));
constexpr int NV = 2;
constexpr int NR = NV * VL;
typedef T vec __attribute__((vector_size(kVecBytes)));

// Blocking, measured on a 2-core AMD EPYC (Zen 4, AVX-512, 32 KiB L1d, 1 MiB L2 per core): one
// MR x KC panel of x (6 KiB) and one KC x NR panel of W^T (16 KiB) share L1 in the micro-kernel,
// the KC x NC block of W^T (512 KiB) stays in L2. Deeper blocks (KC 256-512) ran 5-15% slower.
constexpr int64_t KC = 128;   // depth of a packed block
constexpr int64_t NC = 1024;  // columns per packed block of W^T
constexpr double kThreadFlops = 2.0e6;  // below this one thread is faster

inline vec loadv(const T* p) {
  vec v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void storev(T* p, vec v) { std::memcpy(p, &v, sizeof v); }

// acc = A (MR x kc, packed p-major) * B (kc x NR, rows ldb apart: NR when packed, n when read in
// place from a transposed weight), while the next panel read in place (pf, rows ldb apart, its
// first pf_rows rows; none when null) is prefetched row by row: weights streamed from memory
// once per call arrive in cache a panel ahead of their use; then, for the top-left mr x nr
// of the tile at C (rows ldc apart): C = acc, or C += acc when `accumulate`; and when `bias` is
// given (the last block), + bias[j] after the sum. R (<= MR) rows of the panel are multiplied:
// R = mr, so a short last row panel (8 rows of a 20-token sentence) spends no multiply-adds on
// its zero padding (see micro_kernel).
template <int R>
void micro_rows(int64_t kc, const T* __restrict A, const T* __restrict B, int64_t ldb, T* __restrict C,
                int64_t ldc, bool accumulate, const T* __restrict bias, int nr, const T* pf, int64_t pf_rows) {
  vec acc[R][NV];
  for (int i = 0; i < R; ++i)
    for (int v = 0; v < NV; ++v) acc[i][v] = vec{};
  for (int64_t p = 0; p < kc; ++p) {
    vec b[NV];
    for (int v = 0; v < NV; ++v) b[v] = loadv(B + v * VL);
    if (pf && p < pf_rows)
      for (int v = 0; v < NV; ++v) __builtin_prefetch(pf + p * ldb + v * VL);
    for (int i = 0; i < R; ++i) {
      const T a = A[i];
      for (int v = 0; v < NV; ++v) acc[i][v] += a * b[v];
    }
    A += MR;
    B += ldb;
  }
  if (nr == NR) {
    for (int i = 0; i < R; ++i)
      for (int v = 0; v < NV; ++v) {
        T* c = C + i * ldc + v * VL;
        vec r = accumulate ? loadv(c) + acc[i][v] : acc[i][v];
        if (bias) r += loadv(bias + v * VL);
        storev(c, r);
      }
    return;
  }
  alignas(64) T tile[R][NR];
  for (int i = 0; i < R; ++i)
    for (int v = 0; v < NV; ++v) storev(&tile[i][v * VL], acc[i][v]);
  for (int i = 0; i < R; ++i) {
    T* c = C + i * ldc;
    for (int j = 0; j < nr; ++j) {
      T r = accumulate ? c[j] + tile[i][j] : tile[i][j];
      if (bias) r += bias[j];
      c[j] = r;
    }
  }
}

// micro_rows<mr> for 1 <= mr <= MR: the instantiation counted down to the wanted size (branches,
// not a table of pointers: no relocated data).
template <int R = MR>
void micro_kernel(int64_t kc, const T* __restrict A, const T* __restrict B, int64_t ldb, T* __restrict C,
                  int64_t ldc, bool accumulate, const T* __restrict bias, int mr, int nr, const T* pf = nullptr,
                  int64_t pf_rows = 0) {
  if constexpr (R > 1) {
    if (mr < R) return micro_kernel<R - 1>(kc, A, B, ldb, C, ldc, accumulate, bias, mr, nr, pf, pf_rows);
  }
  micro_rows<R>(kc, A, B, ldb, C, ldc, accumulate, bias, nr, pf, pf_rows);
}

// Rows [i0, i0+mr) (mr <= MR) x depth [p0, p0+kc) of x into one MR-row panel, zero rows past mr.
void pack_a(const T* X, const int64_t* roff, int64_t sk, int64_t i0, int mr, int64_t p0, int64_t kc, T* dst) {
  for (int r = 0; r < mr; ++r) {
    const T* row = X + roff[i0 + r] + p0 * sk;
    if (sk == 1) {
      for (int64_t p = 0; p < kc; ++p) dst[p * MR + r] = row[p];
    } else {
      for (int64_t p = 0; p < kc; ++p) dst[p * MR + r] = row[p * sk];
    }
  }
  for (int r = mr; r < MR; ++r)
    for (int64_t p = 0; p < kc; ++p) dst[p * MR + r] = T(0);
}

// Columns [j0, j0+nr) (nr <= NR) of W^T, i.e. rows of W, x depth [p0, p0+kc) into one NR-wide
// panel: dst[p][c] = W[j0 + c][p0 + p], zero columns past nr.
void pack_b(const T* W, int64_t swn, int64_t swk, int64_t j0, int nr, int64_t p0, int64_t kc, T* dst) {
  if (nr < NR)
    for (int64_t p = 0; p < kc; ++p)
      for (int c = nr; c < NR; ++c) dst[p * NR + c] = T(0);
  if (swn == 1 && nr == NR) {  // W^T rows contiguous (a transposed weight): copy whole rows
    for (int64_t p = 0; p < kc; ++p) std::memcpy(dst + p * NR, W + j0 + (p0 + p) * swk, NR * sizeof(T));
    return;
  }
  for (int c = 0; c < nr; ++c) {
    const T* col = W + (j0 + c) * swn + p0 * swk;
    if (swk == 1) {
      for (int64_t p = 0; p < kc; ++p) dst[p * NR + c] = col[p];
    } else {
      for (int64_t p = 0; p < kc; ++p) dst[p * NR + c] = col[p * swk];
    }
  }
}

// ---- few rows: dot products in place, no packing

constexpr int64_t kSmallM = 32;  // up to this many rows of x the dot-product path serves
#if defined(__AVX512F__)
constexpr int RI = 4, RJ = 4;  // 16 accumulators + 4 rows of x + 1 of W in 32 vector registers
#else
constexpr int RI = 3, RJ = 3;  // 9 + 3 + 1 in 16
#endif

inline T hsum(vec v) {
  T s = T(0);
  for (int l = 0; l < VL; ++l) s += v[l];
  return s;
}

#if defined(__AVX512F__)
// The horizontal sums of a whole tile's 16 accumulators a[i * RJ + j] at once, by halving
// rounds of lane shuffles (45 instructions, against 240 dependent scalar adds): lane j * RI + i
// of the result is the sum of a[i * RJ + j].
inline vec sum16(const vec* a) {
  __m512 r8[8], r4[4], r2[2];
  for (int q = 0; q < 8; ++q) {
    const __m512 x = (__m512)a[2 * q], y = (__m512)a[2 * q + 1];
    r8[q] = _mm512_add_ps(_mm512_shuffle_f32x4(x, y, _MM_SHUFFLE(1, 0, 1, 0)),
                          _mm512_shuffle_f32x4(x, y, _MM_SHUFFLE(3, 2, 3, 2)));
  }
  for (int q = 0; q < 4; ++q)
    r4[q] = _mm512_add_ps(_mm512_shuffle_f32x4(r8[2 * q], r8[2 * q + 1], _MM_SHUFFLE(2, 0, 2, 0)),
                          _mm512_shuffle_f32x4(r8[2 * q], r8[2 * q + 1], _MM_SHUFFLE(3, 1, 3, 1)));
  for (int q = 0; q < 2; ++q)
    r2[q] = _mm512_add_ps(_mm512_shuffle_ps(r4[2 * q], r4[2 * q + 1], _MM_SHUFFLE(1, 0, 1, 0)),
                          _mm512_shuffle_ps(r4[2 * q], r4[2 * q + 1], _MM_SHUFFLE(3, 2, 3, 2)));
  return (vec)_mm512_add_ps(_mm512_shuffle_ps(r2[0], r2[1], _MM_SHUFFLE(2, 0, 2, 0)),
                            _mm512_shuffle_ps(r2[0], r2[1], _MM_SHUFFLE(3, 1, 3, 1)));
}
#endif

// out[i0 + i][j0 + j] = dot(x row i0 + i, W row j0 + j) (+ bias) for i < ri, j < rj; k-contiguous rows.
template <int ri, int rj>
void dot_tile(const T* X, const int64_t* roff, int64_t i0, const T* W, int64_t swn, int64_t j0, int64_t k,
              const T* bias, T* C, int64_t n) {
  vec acc[ri][rj];
  for (int i = 0; i < ri; ++i)
    for (int j = 0; j < rj; ++j) acc[i][j] = vec{};
  const T* x[ri];
  const T* w[rj];
  for (int i = 0; i < ri; ++i) x[i] = X + roff[i0 + i];
  for (int j = 0; j < rj; ++j) w[j] = W + (j0 + j) * swn;
  int64_t p = 0;
  for (; p + VL <= k; p += VL) {
    vec xv[ri], wv[rj];
    for (int i = 0; i < ri; ++i) xv[i] = loadv(x[i] + p);
    for (int j = 0; j < rj; ++j) wv[j] = loadv(w[j] + p);
    for (int i = 0; i < ri; ++i)
      for (int j = 0; j < rj; ++j) acc[i][j] += xv[i] * wv[j];
  }
#if defined(__AVX512F__)
  if constexpr (ri == RI && rj == RJ && RI * RJ == VL && RI == 4) {  // a whole tile: all sums in one go
    if (p == k) {  // no remainder along k: the tile's rows as the four 128-bit lanes of one vector
      // The accumulators fed to sum16 transposed put (i, j) in lane i * RJ + j; the bias is then
      // added after the whole sum, as below, and each row of the tile is stored at once.
      vec t[RI * RJ];
      for (int i = 0; i < RI; ++i)
        for (int j = 0; j < RJ; ++j) t[j * RI + i] = acc[i][j];
      __m512 v = (__m512)sum16(t);
      if (bias) v = _mm512_add_ps(v, _mm512_broadcast_f32x4(_mm_loadu_ps(bias + j0)));
      T* c = C + i0 * n + j0;
      _mm_storeu_ps(c, _mm512_extractf32x4_ps(v, 0));
      _mm_storeu_ps(c + n, _mm512_extractf32x4_ps(v, 1));
      _mm_storeu_ps(c + 2 * n, _mm512_extractf32x4_ps(v, 2));
      _mm_storeu_ps(c + 3 * n, _mm512_extractf32x4_ps(v, 3));
      return;
    }
    const vec sums = sum16(&acc[0][0]);
    for (int i = 0; i < ri; ++i)
      for (int j = 0; j < rj; ++j) {
        T s = sums[j * RI + i];
        for (int64_t q = p; q < k; ++q) s += x[i][q] * w[j][q];
        if (bias) s += bias[j0 + j];
        C[(i0 + i) * n + j0 + j] = s;
      }
    return;
  }
#endif
  for (int i = 0; i < ri; ++i)
    for (int j = 0; j < rj; ++j) {
      T s = hsum(acc[i][j]);
      for (int64_t q = p; q < k; ++q) s += x[i][q] * w[j][q];
      if (bias) s += bias[j0 + j];
      C[(i0 + i) * n + j0 + j] = s;
    }
}

// dot_tile for runtime sizes (edge tiles): the instantiation with rj (then ri) counted down to
// the wanted size; resolved by branches, not a table of pointers (no relocated data).
template <int ri, int rj = RJ>
void dot_tile_cols(int want, const T* X, const int64_t* roff, int64_t i0, const T* W, int64_t swn, int64_t j0,
                   int64_t k, const T* bias, T* C, int64_t n) {
  if constexpr (rj > 1) {
    if (want < rj) return dot_tile_cols<ri, rj - 1>(want, X, roff, i0, W, swn, j0, k, bias, C, n);
  }
  dot_tile<ri, rj>(X, roff, i0, W, swn, j0, k, bias, C, n);
}

template <int ri = RI>
void dot_tile_any(int want, int rj, const T* X, const int64_t* roff, int64_t i0, const T* W, int64_t swn, int64_t j0,
                  int64_t k, const T* bias, T* C, int64_t n) {
  if constexpr (ri > 1) {
    if (want < ri) return dot_tile_any<ri - 1>(want, rj, X, roff, i0, W, swn, j0, k, bias, C, n);
  }
  dot_tile_cols<ri>(rj, X, roff, i0, W, swn, j0, k, bias, C, n);
}

// The whole product for m <= kSmallM rows with x and W contiguous along k: threads take whole
// RJ-column tiles; within one, W's RJ rows stay in L1 while every RI-row block of x passes.
void small_m(const T* X, const int64_t* roff, int64_t m, const T* W, int64_t swn, int64_t k, const T* bias, T* C,
             int64_t n, int threads) {
  const int64_t tiles = (n + RJ - 1) / RJ;
  if (static_cast<int64_t>(threads) > tiles) threads = static_cast<int>(tiles);
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
  for (int64_t t = 0; t < tiles; ++t) {
    const int64_t j0 = t * RJ;
    const int rj = static_cast<int>(std::min<int64_t>(RJ, n - j0));
    for (int64_t i0 = 0; i0 < m; i0 += RI)
      dot_tile_any(static_cast<int>(std::min<int64_t>(RI, m - i0)), rj, X, roff, i0, W, swn, j0, k, bias, C, n);
  }
}

// An uninitialised, 64-byte aligned scratch array.
struct AlignedBuf {
  std::vector<T> raw;
  T* p;
  explicit AlignedBuf(size_t n) : raw(n + 64 / sizeof(T)) {
    const uintptr_t u = reinterpret_cast<uintptr_t>(raw.data());
    p = raw.data() + ((64 - u % 64) % 64) / sizeof(T);
  }
};

// The product for rows [r0, r1) and columns [c0, c1) of out (ldc = n), by one thread with
// private packing buffers bp (KC x NC) and ap (MR x KC). With `direct` (W^T's rows contiguous:
// swn == 1), whole NR-wide panels of W^T are read in place and only a last, narrower one is
// packed (zero-padded to NR). Threads share nothing while they
// multiply: each packs the blocks of W^T it uses itself (a few percent of the work, twice),
// which costs less than waiting at a barrier per block for a thread the OS has descheduled.
void gemm_part(const T* X, const int64_t* roff, int64_t sk, const T* W, int64_t swn, int64_t swk, const T* bias,
               T* C, int64_t n, int64_t k, int64_t r0, int64_t r1, int64_t c0, int64_t c1, T* bp, T* ap,
               bool direct) {
  for (int64_t j0 = c0; j0 < c1; j0 += NC) {
    const int64_t nc = std::min<int64_t>(NC, c1 - j0);
    for (int64_t p0 = 0; p0 < k; p0 += KC) {
      const int64_t kc = std::min<int64_t>(KC, k - p0);
      const bool last = p0 + kc == k;
      for (int64_t jj = 0; jj < nc; jj += NR) {
        const int nr = static_cast<int>(std::min<int64_t>(NR, nc - jj));
        if (!direct || nr < NR) pack_b(W, swn, swk, j0 + jj, nr, p0, kc, bp + jj * kc);
      }
      for (int64_t i = r0; i < r1; i += MR) {
        const int mr = static_cast<int>(std::min<int64_t>(MR, r1 - i));
        pack_a(X, roff, sk, i, mr, p0, kc, ap);
        for (int64_t jj = 0; jj < nc; jj += NR) {
          const int nr = static_cast<int>(std::min<int64_t>(NR, nc - jj));
          const bool in_place = direct && nr == NR;
          const T* B = in_place ? W + (j0 + jj) + p0 * swk : bp + jj * kc;
          // While the first row panel passes a column panel read in place, the next one read in
          // place is prefetched: this block's next panel, or the next block's first.
          const T* pf = nullptr;
          int64_t pf_rows = 0;
          if (in_place && i == r0) {
            if (jj + 2 * NR <= nc) {
              pf = B + NR;
              pf_rows = kc;
            } else if (!last && NR <= nc) {
              pf = W + j0 + (p0 + kc) * swk;
              pf_rows = std::min<int64_t>(KC, k - p0 - kc);
            }
          }
          micro_kernel(kc, ap, B, in_place ? swk : NR, C + i * n + j0 + jj, n, p0 > 0,
                       last && bias ? bias + j0 + jj : nullptr, mr, nr, pf, pf_rows);
        }
      }
    }
  }
}

void linear(const opgen::Tensor& input, const opgen::Tensor& weight, const opgen::Tensor* bias, opgen::Tensor& out) {
  const int nd = out.ndim();
  if (nd < 1 || input.ndim() != nd || weight.ndim() != nd + 1 || (bias && bias->ndim() != nd))
    throw opgen::Error(opgen::ErrorKind::Value, "linear expects input (..., k), weight (n, k) and bias (n,)");
  int64_t m = 1;
  for (int d = 0; d < nd - 1; ++d) {
    if (out.size(d) > 1 && (weight.stride(d) != 0 || (bias && bias->stride(d) != 0)))
      throw opgen::Error(opgen::ErrorKind::Value, "linear expects a 2-d weight (out_features, in_features) and a 1-d bias");
    m *= out.size(d);
  }
  const int64_t n = out.size(nd - 1), k = input.size(nd - 1);
  if (m == 0 || n == 0) return;
  T* C = out.data<T>();
  // The bias, contiguous and padded to whole panels (zeros without one).
  std::vector<T> b(static_cast<size_t>((n + NR - 1) / NR * NR), T(0));
  if (bias)
    for (int64_t j = 0; j < n; ++j) b[static_cast<size_t>(j)] = bias->data<T>()[j * bias->stride(nd - 1)];
  if (k == 0) {
    for (int64_t i = 0; i < m; ++i) std::memcpy(C + i * n, b.data(), static_cast<size_t>(n) * sizeof(T));
    return;
  }
  // Offsets of the rows of input (its leading dims in row-major order).
  std::vector<int64_t> roff(static_cast<size_t>(m));
  {
    int64_t idx[OPGEN_MAX_DIMS] = {};
    int64_t off = 0;
    for (int64_t i = 0; i < m; ++i) {
      roff[static_cast<size_t>(i)] = off;
      for (int d = nd - 2; d >= 0; --d) {
        if (++idx[d] < out.size(d)) {
          off += input.stride(d);
          break;
        }
        off -= input.stride(d) * (out.size(d) - 1);
        idx[d] = 0;
      }
    }
  }
  int threads = 1;
#ifdef _OPENMP
  threads = omp_get_max_threads();
#endif
  if (2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) < kThreadFlops) threads = 1;
  if (m <= kSmallM && input.stride(nd - 1) == 1 && weight.stride(nd) == 1) {
    small_m(input.data<T>(), roff.data(), m, weight.data<T>(), weight.stride(nd - 1), k,
            bias ? b.data() : nullptr, C, n, threads);
    return;
  }
  // Few rows and a transposed weight: W^T's panels are read in place (see gemm_part); with many
  // rows each packed panel serves so many row panels that packing pays for itself.
  const bool direct = m <= kSmallM && weight.stride(nd - 1) == 1;
  // Rows split between threads when each gets a few panels of them, else columns (whole panels).
  const bool by_rows = m >= static_cast<int64_t>(threads) * 2 * MR;
  const int64_t panels = (n + NR - 1) / NR;
  if (!by_rows) threads = static_cast<int>(std::min<int64_t>(threads, panels));
  const size_t bp_size = static_cast<size_t>(std::min<int64_t>(KC, k) * std::min<int64_t>(NC, panels * NR));
  const size_t ap_size = static_cast<size_t>((MR * std::min<int64_t>(KC, k) + 15) / 16 * 16);  // whole cache lines
  const T* X = input.data<T>();
  const T* W = weight.data<T>();
  const int64_t sk = input.stride(nd - 1), swn = weight.stride(nd - 1), swk = weight.stride(nd);
  const T* bvec = bias ? b.data() : nullptr;
  AlignedBuf work((bp_size + ap_size) * static_cast<size_t>(threads));
#pragma omp parallel num_threads(threads) if (threads > 1)
  {
    int t = 0, team = 1;
#ifdef _OPENMP
    t = omp_get_thread_num();
    team = omp_get_num_threads();
#endif
    T* bp = work.p + (bp_size + ap_size) * static_cast<size_t>(t);
    int64_t r0 = 0, r1 = m, c0 = 0, c1 = n;
    if (team > 1 && by_rows) {  // whole MR panels per thread
      const int64_t tiles = (m + MR - 1) / MR;
      r0 = std::min<int64_t>(m, tiles * t / team * MR);
      r1 = std::min<int64_t>(m, tiles * (t + 1) / team * MR);
    } else if (team > 1) {  // whole NR panels per thread
      c0 = std::min<int64_t>(n, panels * t / team * NR);
      c1 = std::min<int64_t>(n, panels * (t + 1) / team * NR);
    }
    if (r0 < r1 && c0 < c1)
      gemm_part(X, roff.data(), sk, W, swn, swk, bvec, C, n, k, r0, r1, c0, c1, bp, bp + bp_size, direct);
  }
}

}  // namespace

void torch_nn_functional_linear__f32_bias(const opgen::Tensor& input, const opgen::Tensor& weight,
                                          const opgen::Tensor& bias, opgen::Tensor& out) {
  linear(input, weight, &bias, out);
}

}  // namespace opgen::kernels
