// torch.nn.functional.linear, overload bf16_bias, variant dpbf16: out[..., j] =
// bfloat16(sum_p x[..., p] * W[j, p] + b[j]) with AVX-512 BF16 dot products (vdpbf16ps) on the
// bfloat16 inputs as they are stored. Written by scripts/dpbf16_kernels.py: the GEMM below is
// answers/cpp/operator.matmul__bf16@dpbf16.cpp's, unchanged, with b = W^T (W's rows are
// contiguous in k, so each pair of W packs as one 32-bit load) and the bias (float32, exact from
// bfloat16) added to the float32 sum before its one rounding; its comments and numerics are there.
//
// The shim presents weight as (*loop, n, k) and bias as (*loop, n) with input's leading dims in
// front at stride 0; a weight or bias that really varies along a leading dim is not a linear
// layer and throws ValueError. The rows of input (any leading dims, any strides) are found
// through an offset table. k == 0 gives the bias rounded; m == 0 or n == 0 writes nothing.
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

void torch_nn_functional_linear__bf16_bias(const opgen::Tensor& input, const opgen::Tensor& weight,
                                           const opgen::Tensor& bias, opgen::Tensor& out) {
  const int nd = out.ndim();
  if (nd < 1 || input.ndim() != nd || weight.ndim() != nd + 1 || bias.ndim() != nd)
    throw opgen::Error(opgen::ErrorKind::Value, "linear expects input (..., k), weight (n, k) and bias (n,)");
  int64_t m = 1;
  for (int d = 0; d < nd - 1; ++d) {
    if (out.size(d) > 1 && (weight.stride(d) != 0 || bias.stride(d) != 0))
      throw opgen::Error(opgen::ErrorKind::Value, "linear expects a 2-d weight (out_features, in_features) and a 1-d bias");
    m *= out.size(d);
  }
  const int64_t n = out.size(nd - 1), k = input.size(nd - 1);
  if (m == 0 || n == 0) return;
  Half* C = out.data<Half>();
  // The bias in float32 (exact), padded with zeros to whole panels.
  std::vector<float> b(static_cast<size_t>((n + NR - 1) / NR * NR), 0.0f);
  for (int64_t j = 0; j < n; ++j) b[static_cast<size_t>(j)] = opgen::to_float(bias.data<Half>()[j * bias.stride(nd - 1)]);
  if (k == 0) {
    for (int64_t i = 0; i < m; ++i) narrow_row(b.data(), C + i * n, n);
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
  const double flops = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  const int threads = flops >= kThreadFlops ? max_threads() : 1;
  const Work w = Work::sized(m, n, k);
  AlignedBuf<uint32_t> work(w.floats() * static_cast<size_t>(threads));  // here: nothing in the region throws
  const Gemm g{input.data<Half>(), roff.data(), input.stride(nd - 1), weight.data<Half>(), weight.stride(nd),
               weight.stride(nd - 1), b.data(), C, m, n, k};
  gemm(g, threads, work, w);
}

}  // namespace opgen::kernels
