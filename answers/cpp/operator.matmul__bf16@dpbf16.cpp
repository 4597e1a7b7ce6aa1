// operator.matmul, overload bf16, variant dpbf16: out[..., i, j] = bfloat16(sum_p a[..., i, p] * b[..., p, j])
// with AVX-512 BF16 dot products (vdpbf16ps) on the bfloat16 inputs as they are stored.
//
// The plain bf16 kernel widens both inputs to float32 and runs the float32 GEMM (one FMA per
// product). Here nothing is widened: a and b are packed as pairs of bfloat16 along k (two
// neighbouring k in one 32-bit word, the even one in the low half), and _mm512_dpbf16_ps adds
// a[i,2q] * b[2q,j] + a[i,2q+1] * b[2q+1,j] to sixteen float32 lanes in one instruction: twice
// the products per instruction of an FMA, from half the bytes.
//
// Numerics: a product of two bfloat16 values (8-bit significands) is exact in float32, and
// vdpbf16ps adds the two products of a pair to the float32 accumulator with float32 roundings,
// so each result is a float32 sum of the exact products in a blocked order, inside the spec's
// any-order k*u bound. The instruction treats subnormal inputs as zero and flushes subnormal
// sums to zero whatever MXCSR says; each such step changes a result by less than 2^-126 ~
// 1.2e-38, far below the spec's atol (1e-30) even summed over k. nan and inf propagate as in
// the plain loop (0 * inf = nan included): every product is summed, zeros are not skipped.
// Each float32 result is rounded once to bfloat16 with to_bfloat16's integer rounding (to
// nearest even, nan kept quiet), not vcvtne2ps2bf16/_mm512_cvtne2ps_pbh, which would flush
// subnormal results (the inputs need no conversion at all: they are packed as stored).
//
// A GotoBLAS/BLIS-style GEMM:
//   - b is packed, KC of k (KC/2 pairs) by NC columns at a time, into NR-wide column panels of
//     pairs (one 32-bit word per column and pair: a panel step is two zmm loads of 16 columns),
//     and a into MR-tall row panels of pairs (one word per row and pair, broadcast to a zmm);
//     padding past k, m and n is zero, and a padded pair only meets padded pairs or feeds
//     discarded tile entries;
//   - the MR x NR micro-kernel keeps its 12 x 32 float32 tile in 24 zmm accumulators and does
//     one vdpbf16ps per broadcast pair of a and vector of b;
//   - KC = 1536 (768 pairs): k = 384, 1024 and 1536 (MiniLM's and the square bench shapes) are
//     one block, so no float32 partial sums are stored and reloaded; the 12 x 768-pair panel of a
//     (36 KiB, just over Zen 4's 32 KiB L1) is read in order. Measured on Zen 4, one thread, CPU
//     time: 10-16% faster than KC = 768 at k = 1024 and 1536, the same at k = 384;
//   - blocks of k after the first accumulate in a float32 scratch; the last block adds the bias
//     (linear) and rounds the tile straight into out;
//   - OpenMP threads share nothing while they multiply: each packs the blocks of b it uses (as
//     in the f32 private_packing variant: a barrier per block waits for descheduled threads on a
//     loaded machine). Threads split the rows, or the column panels when rows are few, or the
//     batch of many small products.
//
// Without AVX512_BF16 (e.g. -march=native on a CPU without it) the same file compiles a portable
// micro-kernel on the same packed pairs: each half of a pair widened to float32 by a shift
// (exact) and two multiply-adds, so the variant builds and stays correct anywhere and only pays
// off where the instruction exists.
#include "opgen_kernel.hpp"

#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>
#ifdef _OPENMP  // (without -fopenmp the pragmas are ignored and everything runs serially)
#include <omp.h>
#endif

namespace opgen::kernels {

namespace {

// The vector types below never cross a library boundary; silence GCC's note that their
// calling convention depends on -m flags.
#pragma GCC diagnostic ignored "-Wpsabi"

using Half = opgen::bfloat16;

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
#if defined(__AVX512BF16__) && defined(__AVX512F__)
#define OPGEN_DPBF16 1
#endif
constexpr int VL = kVecBytes / 4;  // float32 lanes per vector = bfloat16 pairs per vector
constexpr int NV = 2;              // vectors per tile row
constexpr int NR = NV * VL;
typedef float vec __attribute__((vector_size(kVecBytes)));
typedef uint32_t pairs __attribute__((vector_size(kVecBytes)));  // VL pairs, even k in the low half

constexpr int64_t KC = 1536;                 // depth of a packed block (even: blocks start on a pair)
constexpr int64_t NC = 1024;                 // columns per packed block of b (a multiple of NR)
constexpr double kThreadFlops = 2.0e6;       // below this one thread is faster

inline uint32_t bits(Half h) { return h.bits; }
inline float as_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// acc + a.even * b.even + a.odd * b.odd, lane by lane (a broadcast to every lane).
inline vec dot_pairs(vec acc, uint32_t a, pairs b) {
#if defined(OPGEN_DPBF16)
  return reinterpret_cast<vec>(_mm512_dpbf16_ps(reinterpret_cast<__m512>(acc),
                                                reinterpret_cast<__m512bh>(_mm512_set1_epi32(static_cast<int>(a))),
                                                reinterpret_cast<__m512bh>(b)));
#else
  // A bfloat16 is the upper half of its float32: shifting it there widens it exactly.
  acc += as_float(a << 16) * reinterpret_cast<vec>(b << 16);
  acc += as_float(a & 0xffff0000u) * reinterpret_cast<vec>(b & 0xffff0000u);
  return acc;
#endif
}

inline vec loadv(const float* p) {
  vec v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline pairs loadp(const uint32_t* p) {
  pairs v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void storev(float* p, vec v) { std::memcpy(p, &v, sizeof v); }

// Round n float32 values to bfloat16 (to_bfloat16's arithmetic, sixteen lanes at a time with AVX-512).
void narrow_row(const float* a, Half* b, int64_t n) {
  int64_t i = 0;
#if defined(__AVX512F__) && defined(__AVX512BW__)
  const __m512i one = _mm512_set1_epi32(1), bias = _mm512_set1_epi32(0x7fff);
  const __m512i magnitude = _mm512_set1_epi32(0x7fffffff), infinity = _mm512_set1_epi32(0x7f800000);
  const __m512i quiet = _mm512_set1_epi32(0x0040);
  for (; i + 16 <= n; i += 16) {
    const __m512i u = _mm512_castps_si512(_mm512_loadu_ps(a + i));
    const __m512i high = _mm512_srli_epi32(u, 16);
    const __m512i rounded = _mm512_srli_epi32(_mm512_add_epi32(u, _mm512_add_epi32(bias, _mm512_and_si512(high, one))), 16);
    const __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(u, magnitude), infinity);
    const __m512i result = _mm512_mask_blend_epi32(nan, rounded, _mm512_or_si512(high, quiet));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(b + i), _mm512_cvtepi32_epi16(result));
  }
#endif
  for (; i < n; ++i) b[i] = opgen::to_bfloat16(a[i]);
}

// Where the micro-kernel's tile goes: the float32 scratch (blocks of k before the last, read
// back by the next) or, at the last block, + bias and rounded into out.
struct TileOut {
  float* partial;     // the scratch tile, rows ld_partial apart (nullptr when k is one block)
  int64_t ld_partial;
  bool accumulate;    // add the scratch's partial sums (every block but the first)
  bool last;          // round into `out` (else store into the scratch)
  const float* bias;  // NR values for this tile (padded past n), or nullptr
  Half* out;          // rows ld_out apart
  int64_t ld_out;
};

// acc = A_panel (MR x kp pairs) * B_panel (kp pairs x NR); then to `to`, the top-left mr x nr.
void micro_kernel(int64_t kp, const uint32_t* __restrict A, const uint32_t* __restrict B, const TileOut& to, int mr,
                  int nr) {
  vec acc[MR][NV];
  for (int i = 0; i < MR; ++i)
    for (int v = 0; v < NV; ++v) acc[i][v] = vec{};
  for (int64_t q = 0; q < kp; ++q) {
    pairs b[NV];
    for (int v = 0; v < NV; ++v) b[v] = loadp(B + v * VL);
    for (int i = 0; i < MR; ++i) {
      const uint32_t a = A[i];
      for (int v = 0; v < NV; ++v) acc[i][v] = dot_pairs(acc[i][v], a, b[v]);
    }
    A += MR;
    B += NR;
  }
  alignas(64) float tile[MR][NR];
  for (int i = 0; i < mr; ++i)
    for (int v = 0; v < NV; ++v) {
      vec s = acc[i][v];
      if (to.accumulate) s += loadv(to.partial + i * to.ld_partial + v * VL);  // (lanes past nr: scratch padding)
      if (to.last && to.bias) s += loadv(to.bias + v * VL);
      storev(&tile[i][v * VL], s);
    }
  for (int i = 0; i < mr; ++i) {
    if (to.last) {
      narrow_row(tile[i], to.out + i * to.ld_out, nr);
    } else {
      std::memcpy(to.partial + i * to.ld_partial, tile[i], static_cast<size_t>(nr) * sizeof(float));
    }
  }
}

inline uint32_t load_pair(const Half* p) {  // p[0] | p[1] << 16, the pair's two words in memory order
  uint32_t u;
  std::memcpy(&u, p, sizeof u);
  return u;
}

// Pack rows [i0, i0+mr) (row r at X + roff[r]) x k [p0, p0+kc) (stride sk) into one MR-row
// panel of pairs: dst[q][r], zero rows past mr and a zero odd half past kc.
void pack_a(const Half* X, const int64_t* roff, int64_t sk, int64_t i0, int mr, int64_t p0, int64_t kc, uint32_t* dst) {
  const int64_t full = kc / 2, kp = (kc + 1) / 2;
  for (int r = 0; r < mr; ++r) {
    const Half* row = X + roff[i0 + r] + p0 * sk;
    if (sk == 1) {
      for (int64_t q = 0; q < full; ++q) dst[q * MR + r] = load_pair(row + 2 * q);
    } else {
      for (int64_t q = 0; q < full; ++q) dst[q * MR + r] = bits(row[2 * q * sk]) | bits(row[(2 * q + 1) * sk]) << 16;
    }
    if (kp > full) dst[full * MR + r] = bits(row[(kc - 1) * sk]);
  }
  for (int r = mr; r < MR; ++r)
    for (int64_t q = 0; q < kp; ++q) dst[q * MR + r] = 0;
}

// Pack the NR-column panel of b starting at column j0 (nr valid columns; b[p][j] at
// B + p * sbk + j * sbn) over k [p0, p0+kc) into pairs: dst[q][c], zero columns past nr.
void pack_b(const Half* B, int64_t sbk, int64_t sbn, int64_t j0, int nr, int64_t p0, int64_t kc, uint32_t* dst) {
  const int64_t full = kc / 2, kp = (kc + 1) / 2;
  const Half* s = B + p0 * sbk + j0 * sbn;
  if (sbk == 1) {  // each column is contiguous in k (linear's weight rows): a pair is one word
    for (int c = 0; c < nr; ++c) {
      const Half* col = s + c * sbn;
      for (int64_t q = 0; q < full; ++q) dst[q * NR + c] = load_pair(col + 2 * q);
      if (kp > full) dst[full * NR + c] = bits(col[kc - 1]);
    }
  } else {  // two rows of b interleaved (GCC vectorises the unit-stride case)
    for (int64_t q = 0; q < kp; ++q) {
      const Half* even = s + 2 * q * sbk;
      uint32_t* d = dst + q * NR;
      if (2 * q + 1 < kc) {
        const Half* odd = even + sbk;
        if (sbn == 1) {
          for (int c = 0; c < nr; ++c) d[c] = bits(even[c]) | bits(odd[c]) << 16;
        } else {
          for (int c = 0; c < nr; ++c) d[c] = bits(even[c * sbn]) | bits(odd[c * sbn]) << 16;
        }
      } else {
        for (int c = 0; c < nr; ++c) d[c] = bits(even[c * sbn]);
      }
    }
  }
  for (int64_t q = 0; q < kp; ++q)
    for (int c = nr; c < NR; ++c) dst[q * NR + c] = 0;
}

// An uninitialised, 64-byte aligned scratch array.
template <typename U>
struct AlignedBuf {
  std::vector<U> raw;
  U* p;
  explicit AlignedBuf(size_t n) : raw(n + 64 / sizeof(U)) {
    const uintptr_t u = reinterpret_cast<uintptr_t>(raw.data());
    p = raw.data() + ((64 - u % 64) % 64) / sizeof(U);
  }
};

// One product's operands: out (m x n, contiguous) = rows of x (row i at X + roff[i], k stride sk)
// @ b (b[p][j] at B + p * sbk + j * sbn) (+ bias, n values padded to whole panels, or nullptr).
struct Gemm {
  const Half* X;
  const int64_t* roff;
  int64_t sk;
  const Half* B;
  int64_t sbk, sbn;
  const float* bias;
  Half* out;
  int64_t m, n, k;
};

// Packing and scratch room for one thread.
struct Work {
  size_t bp_size, ap_size, partial_size;
  static Work sized(int64_t rows, int64_t n, int64_t k) {
    const int64_t panels = (n + NR - 1) / NR;
    const int64_t kp = (std::min<int64_t>(KC, k) + 1) / 2;
    Work w;
    w.bp_size = static_cast<size_t>(kp * std::min<int64_t>(NC, panels * NR));
    w.ap_size = static_cast<size_t>((MR * kp + 15) / 16 * 16);  // whole cache lines
    // float32 partial sums of this thread's rows (all columns, padded to a whole panel) when k is
    // more than one block
    w.partial_size = k > KC ? static_cast<size_t>((rows + MR) * (panels * NR)) : 0;
    return w;
  }
  size_t floats() const { return bp_size + ap_size + partial_size; }
};

// Rows [r0, r1) x columns [c0, c1) of g's out by one thread, with its own buffers at `buf`.
void gemm_part(const Gemm& g, int64_t r0, int64_t r1, int64_t c0, int64_t c1, const Work& w, uint32_t* buf) {
  uint32_t* bp = buf;
  uint32_t* ap = buf + w.bp_size;
  float* partial = reinterpret_cast<float*>(ap + w.ap_size);
  const int64_t ldp = (g.n + NR - 1) / NR * NR;  // the scratch's row length
  for (int64_t j0 = c0; j0 < c1; j0 += NC) {
    const int64_t nc = std::min<int64_t>(NC, c1 - j0);
    for (int64_t p0 = 0; p0 < g.k; p0 += KC) {
      const int64_t kc = std::min<int64_t>(KC, g.k - p0), kp = (kc + 1) / 2;
      const bool last = p0 + kc == g.k;
      for (int64_t jj = 0; jj < nc; jj += NR)
        pack_b(g.B, g.sbk, g.sbn, j0 + jj, static_cast<int>(std::min<int64_t>(NR, nc - jj)), p0, kc, bp + jj * kp);
      for (int64_t i = r0; i < r1; i += MR) {
        const int mr = static_cast<int>(std::min<int64_t>(MR, r1 - i));
        pack_a(g.X, g.roff, g.sk, i, mr, p0, kc, ap);
        for (int64_t jj = 0; jj < nc; jj += NR) {
          const int nr = static_cast<int>(std::min<int64_t>(NR, nc - jj));
          const int64_t j = j0 + jj;
          TileOut to{};
          to.partial = w.partial_size ? partial + (i - r0) * ldp + j : nullptr;
          to.ld_partial = ldp;
          to.accumulate = p0 > 0;
          to.last = last;
          to.bias = g.bias ? g.bias + j : nullptr;
          to.out = g.out + i * g.n + j;
          to.ld_out = g.n;
          micro_kernel(kp, ap, bp + jj * kp, to, mr, nr);
        }
      }
    }
  }
}

// g's product on `threads` threads (buffers from `work`, one Work's worth per thread): the rows
// split between them when each gets a few panels of them, else the column panels.
void gemm(const Gemm& g, int threads, AlignedBuf<uint32_t>& work, const Work& w) {
  const int64_t panels = (g.n + NR - 1) / NR;
  const bool by_rows = g.m >= static_cast<int64_t>(threads) * 2 * MR;
  if (!by_rows) threads = static_cast<int>(std::min<int64_t>(threads, panels));
#pragma omp parallel num_threads(threads) if (threads > 1)
  {
    int t = 0, team = 1;
#ifdef _OPENMP
    t = omp_get_thread_num();
    team = omp_get_num_threads();
#endif
    int64_t r0 = 0, r1 = g.m, c0 = 0, c1 = g.n;
    if (team > 1 && by_rows) {  // whole MR panels per thread
      const int64_t tiles = (g.m + MR - 1) / MR;
      r0 = std::min<int64_t>(g.m, tiles * t / team * MR);
      r1 = std::min<int64_t>(g.m, tiles * (t + 1) / team * MR);
    } else if (team > 1) {  // whole NR panels per thread
      c0 = std::min<int64_t>(g.n, panels * t / team * NR);
      c1 = std::min<int64_t>(g.n, panels * (t + 1) / team * NR);
    }
    if (r0 < r1 && c0 < c1) gemm_part(g, r0, r1, c0, c1, w, work.p + w.floats() * static_cast<size_t>(t));
  }
}

int max_threads() {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

}  // namespace

void operator_matmul__bf16(const opgen::Tensor& a, const opgen::Tensor& b, opgen::Tensor& out) {
  const int nd = out.ndim();
  if (nd < 2 || a.ndim() != nd || b.ndim() != nd)
    throw opgen::Error(opgen::ErrorKind::Value, "matmul expects a, b and out of the same rank >= 2");
  const int64_t m = a.size(nd - 2), k = a.size(nd - 1), n = b.size(nd - 1);
  if (b.size(nd - 2) != k || out.size(nd - 2) != m || out.size(nd - 1) != n)
    throw opgen::Error(opgen::ErrorKind::Value, "matmul core dims do not match");
  int64_t batch = 1;
  for (int d = 0; d < nd - 2; ++d) {
    if (a.size(d) != out.size(d) || b.size(d) != out.size(d))
      throw opgen::Error(opgen::ErrorKind::Value, "matmul batch dims are not aligned");
    batch *= out.size(d);
  }
  if (batch == 0 || m == 0 || n == 0) return;
  Half* C = out.data<Half>();
  if (k == 0) {
    std::fill(C, C + batch * m * n, Half{0});
    return;
  }
  // Offsets of each batch element in a and b (row-major over the batch dims).
  std::vector<int64_t> aoff(static_cast<size_t>(batch)), boff(static_cast<size_t>(batch));
  {
    int64_t idx[OPGEN_MAX_DIMS] = {};
    int64_t ao = 0, bo = 0;
    for (int64_t t = 0; t < batch; ++t) {
      aoff[static_cast<size_t>(t)] = ao;
      boff[static_cast<size_t>(t)] = bo;
      for (int d = nd - 3; d >= 0; --d) {
        if (++idx[d] < out.size(d)) {
          ao += a.stride(d);
          bo += b.stride(d);
          break;
        }
        ao -= a.stride(d) * (out.size(d) - 1);
        bo -= b.stride(d) * (out.size(d) - 1);
        idx[d] = 0;
      }
    }
  }
  std::vector<int64_t> roff(static_cast<size_t>(m));  // the rows of a within one batch element
  for (int64_t i = 0; i < m; ++i) roff[static_cast<size_t>(i)] = i * a.stride(nd - 2);
  // Below ~2 MFLOP per product threads cost more than they save; many such products split the batch.
  const double flops = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  const int threads = max_threads();
  const int inner = flops >= kThreadFlops ? threads : 1;
  const int outer = inner == 1 && batch > 1 && flops * static_cast<double>(batch) >= kThreadFlops ? threads : 1;
  const Work w = Work::sized(m, n, k);
  // Buffers allocated here, so nothing inside the parallel regions can throw.
  AlignedBuf<uint32_t> work(w.floats() * static_cast<size_t>(std::max(inner, outer)));
  const Half* A = a.data<Half>();
  const Half* B = b.data<Half>();
  const int64_t sak = a.stride(nd - 1), sbk = b.stride(nd - 2), sbn = b.stride(nd - 1);
  if (outer > 1) {
#pragma omp parallel for schedule(static) num_threads(outer)
    for (int64_t t = 0; t < batch; ++t) {
      int me = 0;
#ifdef _OPENMP
      me = omp_get_thread_num();
#endif
      const size_t at = static_cast<size_t>(t);
      const Gemm g{A + aoff[at], roff.data(), sak, B + boff[at], sbk, sbn, nullptr, C + t * m * n, m, n, k};
      gemm_part(g, 0, m, 0, n, w, work.p + w.floats() * static_cast<size_t>(me));
    }
    return;
  }
  for (int64_t t = 0; t < batch; ++t) {
    const size_t at = static_cast<size_t>(t);
    gemm(Gemm{A + aoff[at], roff.data(), sak, B + boff[at], sbk, sbn, nullptr, C + t * m * n, m, n, k}, inner, work, w);
  }
}

}  // namespace opgen::kernels
