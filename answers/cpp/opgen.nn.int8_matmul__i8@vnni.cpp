// opgen.nn.int8_matmul, overload i8, variant vnni: out[..., j] = sum_p int32(input[..., p]) *
// int32(weight[j, p]) with AVX-512 VNNI.
//
// _mm512_dpbusd_epi32 multiplies unsigned bytes by signed bytes and adds each group of four
// products to an int32 lane, without saturation. The activations are signed, so they go in
// offset to unsigned: u = a + 128 (a ^ 0x80 as a byte, 0..255), and
//   sum_p a[p] w[p] = sum_p u[p] w[p] - 128 * sum_p w[p],
// the second term the weight row's sum (computed once per call). Every lane sums in int32 with
// wrap-around (vpdpbusd, not the saturating vpdpbusds; |u w| <= 32640, so no pair or group of
// four saturates anything): sum_p u w may pass 2**31 for long k, but the wrapped sum minus the
// wrapped 128 * rowsum is the true result modulo 2**32, and the true result fits int32 for
// every k the contract allows (k <= 131071), so the final value is exact. The correction is
// done in uint32 (defined wrap-around).
//
// Layout: the weight is packed per block of NR = 64 output channels into groups of four k:
// for each group, 64 channels x 4 bytes (four zmm loads of 16 channels), zero-padded past k
// and past n; each block of MR = 4 input rows is packed offset to unsigned, k padded to a
// multiple of four. The micro-kernel keeps its 4 x 64 output tile in 16 zmm accumulators and
// walks the k groups: 4 weight loads, 4 broadcasts of an activation dword, 16 vpdpbusd. k is
// blocked by KC so one block of packed weight (64 x KC bytes) stays in L1 across the row
// blocks. OpenMP threads split the row blocks (or the channel blocks when rows are few).
//
// The packing copies whole 4-byte groups of a contiguous weight row (one load and store each)
// and sums the row in a vectorised loop: byte by byte it cost more than the product itself up
// to ~100 rows (measured on Zen 4, one thread, MiniLM's four layer shapes together: 66 GOP/s at
// 33 rows and 136 at 128 packing bytes, 139 and 203 packing groups).
//
// Few rows (up to kSmallM: a sentence at batch 1) skip the packing, which would cost more than
// the product there (same measurement: the in-place path runs at ~137 GOP/s from 12 to 128 rows;
// the packing path at 91 for 12 rows, 115 for 20, 139 for 33, 155 for 49): each 4 x 4 tile of out is 16 dot products along k, the unsigned rows and the
// weight's rows read in place, 64 bytes a step (masked loads past k read zeros), the 16 lane sums
// reduced together by shuffles; the weight's row sums come from vpdpbusd against ones.
//
// Without AVX-512 VNNI (and BW) the same file compiles a portable int32 loop instead, so it
// builds anywhere; the variant only pays off where the instructions exist.
#include "opgen_kernel.hpp"

#include <cstdint>
#include <cstring>
#include <vector>
#ifdef _OPENMP
#include <omp.h>
#endif
#if defined(__AVX512VNNI__) && defined(__AVX512BW__) && defined(__AVX512F__)
#include <immintrin.h>
#define OPGEN_INT8_VNNI 1
#endif

namespace opgen::kernels {

namespace {

constexpr double kThreadWork = 1.0e6;  // multiply-adds below which one thread is faster

// Offsets of the rows of input (its leading dims in row-major order); checks the weight's.
int64_t row_offsets(const opgen::Tensor& input, const opgen::Tensor& weight, const opgen::Tensor& out,
                    std::vector<int64_t>& roff) {
  const int nd = input.ndim();
  int64_t m = 1;
  for (int d = 0; d < nd - 1; ++d) {
    if (out.size(d) > 1 && weight.stride(d) != 0)
      throw opgen::Error(opgen::ErrorKind::Value, "int8_matmul expects a 2-d weight (out_features, in_features)");
    m *= out.size(d);
  }
  roff.assign(static_cast<size_t>(m), 0);
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
  return m;
}

int team_size(int64_t m, int64_t n, int64_t k) {
  int threads = 1;
#ifdef _OPENMP
  threads = omp_get_max_threads();
#endif
  if (static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) < kThreadWork) threads = 1;
  return threads;
}

#if defined(OPGEN_INT8_VNNI)

constexpr int MR = 4;     // input rows per micro-kernel
constexpr int NV = 4;     // zmm vectors of 16 channels per micro-kernel
constexpr int NR = 16 * NV;
constexpr int64_t KC = 512;  // k per block (a multiple of 4): 64 x 512 bytes of packed weight

// acc[r][v] += sum over groups g < ng of u[r][4g..4g+3] . w[g][16v..16v+15][0..3]
inline void micro(const uint8_t* a, int64_t lda, int mr, const int8_t* w, int64_t ng, int32_t* tile) {
  __m512i acc[MR][NV];
  for (int r = 0; r < MR; ++r)
    for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_loadu_si512(tile + r * NR + 16 * v);
  for (int64_t g = 0; g < ng; ++g) {
    const int8_t* wg = w + g * (NR * 4);
    const __m512i w0 = _mm512_loadu_si512(wg), w1 = _mm512_loadu_si512(wg + 64);
    const __m512i w2 = _mm512_loadu_si512(wg + 128), w3 = _mm512_loadu_si512(wg + 192);
    for (int r = 0; r < MR; ++r) {
      if (r >= mr) break;
      int32_t dw;
      std::memcpy(&dw, a + r * lda + 4 * g, sizeof dw);
      const __m512i u = _mm512_set1_epi32(dw);
      acc[r][0] = _mm512_dpbusd_epi32(acc[r][0], u, w0);
      acc[r][1] = _mm512_dpbusd_epi32(acc[r][1], u, w1);
      acc[r][2] = _mm512_dpbusd_epi32(acc[r][2], u, w2);
      acc[r][3] = _mm512_dpbusd_epi32(acc[r][3], u, w3);
    }
  }
  for (int r = 0; r < MR; ++r)
    for (int v = 0; v < NV; ++v) _mm512_storeu_si512(tile + r * NR + 16 * v, acc[r][v]);
}

// ---- few rows: dot products in place

constexpr int64_t kSmallM = 32;  // the crossover measured above
constexpr int TI = 4, TJ = 4;  // a tile: 16 zmm accumulators, 4 rows + 1 weight vector

// The 16 int32 lane sums of a tile's accumulators a[i * TJ + j] in one vector, by halving rounds
// of lane shuffles: lane j * TI + i holds the sum of a[i * TJ + j].
inline __m512i sum16(const __m512i* a) {
  auto f = [](__m512i v) { return _mm512_castsi512_ps(v); };
  auto g = [](__m512 v) { return _mm512_castps_si512(v); };
  __m512i r8[8], r4[4], r2[2];
  for (int q = 0; q < 8; ++q)
    r8[q] = _mm512_add_epi32(g(_mm512_shuffle_f32x4(f(a[2 * q]), f(a[2 * q + 1]), _MM_SHUFFLE(1, 0, 1, 0))),
                             g(_mm512_shuffle_f32x4(f(a[2 * q]), f(a[2 * q + 1]), _MM_SHUFFLE(3, 2, 3, 2))));
  for (int q = 0; q < 4; ++q)
    r4[q] = _mm512_add_epi32(g(_mm512_shuffle_f32x4(f(r8[2 * q]), f(r8[2 * q + 1]), _MM_SHUFFLE(2, 0, 2, 0))),
                             g(_mm512_shuffle_f32x4(f(r8[2 * q]), f(r8[2 * q + 1]), _MM_SHUFFLE(3, 1, 3, 1))));
  for (int q = 0; q < 2; ++q)
    r2[q] = _mm512_add_epi32(g(_mm512_shuffle_ps(f(r4[2 * q]), f(r4[2 * q + 1]), _MM_SHUFFLE(1, 0, 1, 0))),
                             g(_mm512_shuffle_ps(f(r4[2 * q]), f(r4[2 * q + 1]), _MM_SHUFFLE(3, 2, 3, 2))));
  return _mm512_add_epi32(g(_mm512_shuffle_ps(f(r2[0]), f(r2[1]), _MM_SHUFFLE(2, 0, 2, 0))),
                          g(_mm512_shuffle_ps(f(r2[0]), f(r2[1]), _MM_SHUFFLE(3, 1, 3, 1))));
}

// out[i0 + i][j0 + j] = sum_p u[i][p] w[j][p] - corr[j] for i < ti, j < tj (u: rows offset to
// unsigned, ldu apart; w: the weight's rows, ldw apart; both contiguous along k).
template <int ti, int tj>
void dot_tile(const uint8_t* U, int64_t ldu, int64_t i0, const int8_t* W, int64_t ldw, int64_t j0, int64_t k,
              const uint32_t* corr, int32_t* C, int64_t n) {
  __m512i acc[TI * TJ];
  for (int a = 0; a < TI * TJ; ++a) acc[a] = _mm512_setzero_si512();
  for (int64_t p = 0; p < k; p += 64) {
    const __mmask64 mask = k - p >= 64 ? ~__mmask64{0} : (__mmask64{1} << (k - p)) - 1;
    __m512i u[ti];
    for (int i = 0; i < ti; ++i) u[i] = _mm512_maskz_loadu_epi8(mask, U + (i0 + i) * ldu + p);
    for (int j = 0; j < tj; ++j) {
      const __m512i w = _mm512_maskz_loadu_epi8(mask, W + (j0 + j) * ldw + p);
      for (int i = 0; i < ti; ++i) acc[i * TJ + j] = _mm512_dpbusd_epi32(acc[i * TJ + j], u[i], w);
    }
  }
  if constexpr (ti == TI && tj == TJ && TI == 4 && TJ == 4) {
    // A whole tile: the accumulators fed to sum16 transposed, so lane i * TJ + j holds (i, j)
    // and each row of the tile is one 128-bit lane; the corrections subtracted as one vector.
    __m512i t[TI * TJ];
    for (int i = 0; i < TI; ++i)
      for (int j = 0; j < TJ; ++j) t[j * TI + i] = acc[i * TJ + j];
    const __m512i corrv = _mm512_broadcast_i32x4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(corr + j0)));
    const __m512i v = _mm512_sub_epi32(sum16(t), corrv);  // wraps like the uint32 arithmetic below
    int32_t* c = C + i0 * n + j0;
    _mm_storeu_si128(reinterpret_cast<__m128i*>(c), _mm512_extracti32x4_epi32(v, 0));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(c + n), _mm512_extracti32x4_epi32(v, 1));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(c + 2 * n), _mm512_extracti32x4_epi32(v, 2));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(c + 3 * n), _mm512_extracti32x4_epi32(v, 3));
    return;
  }
  alignas(64) int32_t sums[TI * TJ];
  _mm512_store_si512(sums, sum16(acc));
  for (int i = 0; i < ti; ++i)
    for (int j = 0; j < tj; ++j)
      C[(i0 + i) * n + j0 + j] = static_cast<int32_t>(static_cast<uint32_t>(sums[j * TI + i]) - corr[j0 + j]);
}

// dot_tile for runtime edge sizes: the instantiation counted down to the wanted size (branches,
// not a table of pointers: no relocated data).
template <int ti, int tj = TJ>
void dot_tile_cols(int want, const uint8_t* U, int64_t ldu, int64_t i0, const int8_t* W, int64_t ldw, int64_t j0,
                   int64_t k, const uint32_t* corr, int32_t* C, int64_t n) {
  if constexpr (tj > 1) {
    if (want < tj) return dot_tile_cols<ti, tj - 1>(want, U, ldu, i0, W, ldw, j0, k, corr, C, n);
  }
  dot_tile<ti, tj>(U, ldu, i0, W, ldw, j0, k, corr, C, n);
}

template <int ti = TI>
void dot_tile_any(int want, int tj, const uint8_t* U, int64_t ldu, int64_t i0, const int8_t* W, int64_t ldw,
                  int64_t j0, int64_t k, const uint32_t* corr, int32_t* C, int64_t n) {
  if constexpr (ti > 1) {
    if (want < ti) return dot_tile_any<ti - 1>(want, tj, U, ldu, i0, W, ldw, j0, k, corr, C, n);
  }
  dot_tile_cols<ti>(tj, U, ldu, i0, W, ldw, j0, k, corr, C, n);
}

// m <= kSmallM rows, the weight's rows contiguous along k: no packing. Threads split the
// columns in whole tiles; each tile's row-sum corrections are summed just before its dot
// products, so the tile's TJ weight rows come from memory once and stay in L1 for both (a
// separate sweep over all rows first would read the whole weight twice: at batch 1 the weight,
// not the few activation rows, is the traffic).
void small_m(const int8_t* X, const int64_t* roff, int64_t sx, int64_t m, const int8_t* W, int64_t ldw, int64_t n,
             int64_t k, int32_t* C, int threads) {
  // The rows offset to unsigned, contiguous (tiny: at most kSmallM x k bytes).
  std::vector<uint8_t> U(static_cast<size_t>(m * k));
  for (int64_t i = 0; i < m; ++i) {
    const int8_t* src = X + roff[static_cast<size_t>(i)];
    uint8_t* dst = U.data() + i * k;
    for (int64_t p = 0; p < k; ++p) dst[p] = static_cast<uint8_t>(src[p * sx]) ^ 0x80u;
  }
  std::vector<uint32_t> corr(static_cast<size_t>(n));
  const int64_t tiles = (n + TJ - 1) / TJ;
  if (threads > tiles) threads = static_cast<int>(tiles);
#pragma omp parallel num_threads(threads) if (threads > 1)
  {
    int t = 0, team = 1;
#ifdef _OPENMP
    t = omp_get_thread_num();
    team = omp_get_num_threads();
#endif
    const int64_t t0 = tiles * t / team, t1 = tiles * (t + 1) / team;
    const __m512i ones = _mm512_set1_epi8(1);
    for (int64_t tile = t0; tile < t1; ++tile) {
      const int64_t j0 = tile * TJ;
      const int tj = static_cast<int>(n - j0 < TJ ? n - j0 : TJ);
      for (int64_t j = j0; j < j0 + tj; ++j) {  // 128 x the row sums, vpdpbusd against ones
        __m512i s = _mm512_setzero_si512();
        for (int64_t p = 0; p < k; p += 64) {
          const __mmask64 mask = k - p >= 64 ? ~__mmask64{0} : (__mmask64{1} << (k - p)) - 1;
          s = _mm512_dpbusd_epi32(s, ones, _mm512_maskz_loadu_epi8(mask, W + j * ldw + p));
        }
        corr[static_cast<size_t>(j)] = 128u * static_cast<uint32_t>(_mm512_reduce_add_epi32(s));
      }
      for (int64_t i0 = 0; i0 < m; i0 += TI)
        dot_tile_any(static_cast<int>(m - i0 < TI ? m - i0 : TI), tj, U.data(), k, i0, W, ldw, j0, k, corr.data(),
                     C, n);
    }
  }
}

void matmul(const opgen::Tensor& input, const opgen::Tensor& weight, opgen::Tensor& out) {
  const int nd = input.ndim();
  std::vector<int64_t> roff;
  const int64_t m = row_offsets(input, weight, out, roff);
  const int64_t n = out.size(nd - 1), k = input.size(nd - 1);
  if (m == 0 || n == 0) return;
  int32_t* C = out.data<int32_t>();
  if (m <= kSmallM && weight.stride(nd) == 1) {
    small_m(input.data<int8_t>(), roff.data(), input.stride(nd - 1), m, weight.data<int8_t>(), weight.stride(nd - 1),
            n, k, C, team_size(m, n, k));
    return;
  }
  const int64_t k4 = (k + 3) / 4 * 4, ng = k4 / 4;
  const int64_t nb = (n + NR - 1) / NR;
  // Packed weight: [block][group][channel 0..63][byte 0..3], zeros past k and n; row sums x 128.
  std::vector<int8_t> Wp(static_cast<size_t>(nb * ng * NR * 4), 0);
  std::vector<uint32_t> corr(static_cast<size_t>(nb * NR), 0);
  {
    const int8_t* w = weight.data<int8_t>();
    const int64_t sn = weight.stride(nd - 1), sk = weight.stride(nd);
    for (int64_t j = 0; j < n; ++j) {
      const int64_t b = j / NR, c = j % NR;
      int32_t sum = 0;
      int8_t* dst = Wp.data() + b * ng * NR * 4 + c * 4;
      int64_t p = 0;
      if (sk == 1) {  // contiguous rows (the usual case): whole 4-byte groups, a vectorised sum
        const int8_t* row = w + j * sn;
        for (int64_t q = 0; q < k; ++q) sum += row[q];
        for (; p + 4 <= k; p += 4) std::memcpy(dst + (p / 4) * NR * 4, row + p, 4);
        for (; p < k; ++p) dst[(p / 4) * NR * 4 + (p % 4)] = row[p];
      } else {
        for (; p < k; ++p) {
          const int8_t x = w[j * sn + p * sk];
          dst[(p / 4) * NR * 4 + (p % 4)] = x;
          sum += x;
        }
      }
      corr[static_cast<size_t>(j)] = 128u * static_cast<uint32_t>(sum);
    }
  }
  const int8_t* X = input.data<int8_t>();
  const int64_t sx = input.stride(nd - 1);
  const int64_t rb = (m + MR - 1) / MR;
  const int threads = team_size(m, n, k);
  const bool by_rows = rb >= 2 * threads;
#pragma omp parallel num_threads(threads) if (threads > 1)
  {
    int t = 0, team = 1;
#ifdef _OPENMP
    t = omp_get_thread_num();
    team = omp_get_num_threads();
#endif
    int64_t r0 = 0, r1 = rb, c0 = 0, c1 = nb;
    if (by_rows) {
      r0 = rb * t / team;
      r1 = rb * (t + 1) / team;
    } else {
      c0 = nb * t / team;
      c1 = nb * (t + 1) / team;
    }
    // This thread's rows, offset to unsigned, k padded to k4 (the padding meets zero weights).
    const int64_t rows = (r1 - r0) * MR;
    std::vector<uint8_t> A(static_cast<size_t>(rows * k4 + 4), 0x80);
    for (int64_t i = r0 * MR; i < r1 * MR && i < m; ++i) {
      const int8_t* src = X + roff[static_cast<size_t>(i)];
      uint8_t* dst = A.data() + (i - r0 * MR) * k4;
      for (int64_t p = 0; p < k; ++p) dst[p] = static_cast<uint8_t>(src[p * sx]) ^ 0x80u;
    }
    alignas(64) int32_t tile[MR * NR];
    for (int64_t kc = 0; kc < k4 || kc == 0; kc += KC) {
      const int64_t g0 = kc / 4, gn = (k4 - kc < KC ? k4 - kc : KC) / 4;
      for (int64_t b = c0; b < c1; ++b) {
        const int8_t* wb = Wp.data() + (b * ng + g0) * NR * 4;
        const int64_t j0 = b * NR, nc = n - j0 < NR ? n - j0 : NR;
        for (int64_t rbk = r0; rbk < r1; ++rbk) {
          const int64_t i0 = rbk * MR;
          if (i0 >= m) break;
          const int mr = static_cast<int>(m - i0 < MR ? m - i0 : MR);
          for (int r = 0; r < MR; ++r)
            for (int64_t c = 0; c < NR; ++c)
              tile[r * NR + c] = (kc == 0 || r >= mr || c >= nc) ? 0 : C[(i0 + r) * n + j0 + c];
          micro(A.data() + (i0 - r0 * MR) * k4 + kc, k4, mr, wb, gn, tile);
          const bool last = kc + KC >= k4;
          for (int r = 0; r < mr; ++r)
            for (int64_t c = 0; c < nc; ++c) {
              uint32_t v = static_cast<uint32_t>(tile[r * NR + c]);
              if (last) v -= corr[static_cast<size_t>(j0 + c)];
              C[(i0 + r) * n + j0 + c] = static_cast<int32_t>(v);
            }
        }
      }
      if (k4 == 0) break;
    }
  }
}

#else  // no AVX-512 VNNI: the portable int32 loop

void matmul(const opgen::Tensor& input, const opgen::Tensor& weight, opgen::Tensor& out) {
  const int nd = input.ndim();
  std::vector<int64_t> roff;
  const int64_t m = row_offsets(input, weight, out, roff);
  const int64_t n = out.size(nd - 1), k = input.size(nd - 1);
  if (m == 0 || n == 0) return;
  int32_t* C = out.data<int32_t>();
  std::vector<int8_t> W(static_cast<size_t>(n * k));
  const int8_t* w = weight.data<int8_t>();
  const int64_t sn = weight.stride(nd - 1), sk = weight.stride(nd);
  for (int64_t j = 0; j < n; ++j)
    for (int64_t p = 0; p < k; ++p) W[static_cast<size_t>(j * k + p)] = w[j * sn + p * sk];
  const int8_t* X = input.data<int8_t>();
  const int64_t sx = input.stride(nd - 1);
  const int threads = team_size(m, n, k);
#pragma omp parallel num_threads(threads) if (threads > 1)
  {
    std::vector<int8_t> a(static_cast<size_t>(k));
#pragma omp for schedule(static)
    for (int64_t i = 0; i < m; ++i) {
      const int8_t* src = X + roff[static_cast<size_t>(i)];
      for (int64_t p = 0; p < k; ++p) a[static_cast<size_t>(p)] = src[p * sx];
      for (int64_t j = 0; j < n; ++j) {
        int32_t s = 0;
        const int8_t* wr = W.data() + j * k;
        for (int64_t p = 0; p < k; ++p) s += static_cast<int32_t>(a[static_cast<size_t>(p)]) * static_cast<int32_t>(wr[p]);
        C[i * n + j] = s;
      }
    }
  }
}

#endif

}  // namespace

void opgen_nn_int8_matmul__i8(const opgen::Tensor& input, const opgen::Tensor& weight, opgen::Tensor& out) {
  const int nd = input.ndim();
  if (nd < 1 || weight.ndim() != nd + 1 || out.ndim() != nd)
    throw opgen::Error(opgen::ErrorKind::Value, "int8_matmul expects input (..., k) and weight (n, k)");
  matmul(input, weight, out);
}

}  // namespace opgen::kernels
