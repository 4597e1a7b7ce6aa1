// opgen.nn.attention, overload f16: float16 storage, float32 arithmetic. Written by scripts/half_kernels.py from
// answers/cpp/opgen.nn.attention__f32.cpp (its algorithm, unchanged and private) and a widening wrapper.
// opgen.nn.attention, overload f32: general attention (ONNX Attention): an additive float bias,
// causal masking aligned at a given offset (a KV cache), an asymmetric sliding window, soft-capping
// of the scores and grouped-query heads.
//
// Shapes (the shim has aligned the loop dims, stride 0 where broadcast): q (*, Hq, S, D),
// k (*, Hkv, T, D), v (*, Hkv, T, Dv), bias (*, Hq, S, T), out (*, Hq, S, Dv) contiguous.
//
// How it is computed, blocked rather than flash-style (a whole row of scores fits in cache at
// these lengths), on the model of opgen.nn.scaled_dot_product_attention's kernel:
//   1. Per key/value head, K is packed into NR-key panels laid out d-major and V into
//      NR-column panels laid out key-major; the query heads of a group share these packs.
//   2. The causal mask and the window allow each query i (position p = i + offset) one
//      contiguous range of keys [lo_i, hi_i), both ends nondecreasing in i. Per (loop index,
//      query head, block of BQ queries) only the key panels the block's rows can reach are
//      touched: under causal masking the panels past the block's last row are skipped whole
//      (about half the work of a square causal prefill), and the P @ V products run over each
//      MR-row group's own range.
//   3. Scores come from an MR x NR register-tiled micro-kernel (queries pre-multiplied by the
//      scale); each row is then soft-capped (a vectorised tanh), gets its bias added (-inf
//      outside the row's range, so a masked key is exactly -inf), and goes through max, exp (a
//      vectorised polynomial), sum; keys with score -inf become exactly 0. A row with no
//      visible key gets zeros.
// Everything accumulates in float32 (the spec's tolerance covers any summation order).
// Vectors are GCC vector extensions sized to the ISA -march=native gives. OpenMP spreads whole
// key/value heads over the threads when there are many, else packs the few shared ones panel by
// panel and then spreads the query blocks.
#include "opgen_kernel.hpp"

#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <immintrin.h>
#include <limits>
#include <vector>
#ifdef _OPENMP
#include <omp.h>
#endif

namespace opgen::kernels {

namespace {

// The vector types below never cross a library boundary; silence GCC's note that their
// calling convention depends on -m flags.
#pragma GCC diagnostic ignored "-Wpsabi"

#if defined(__AVX512F__)
constexpr int VL = 16;
constexpr int MR = 12;
#elif defined(__AVX__)
constexpr int VL = 8;
constexpr int MR = 6;
#else
constexpr int VL = 4;
constexpr int MR = 4;
#endif
constexpr int NR = 2 * VL;   // keys per K panel, and output columns per V panel
constexpr int BQ = 4 * MR;   // queries per block (one parallel task)

typedef float vf __attribute__((vector_size(VL * 4)));
typedef int32_t vi __attribute__((vector_size(VL * 4)));
typedef uint32_t vu __attribute__((vector_size(VL * 4)));

// A broadcast (vf{} + x would cost an addition: 0.0f + x is not x for x = -0.0f).
inline vf splat(float x) {
#if defined(__AVX512F__)
  return (vf)_mm512_set1_ps(x);
#elif defined(__AVX__)
  return (vf)_mm256_set1_ps(x);
#else
  return vf{x, x, x, x};
#endif
}
inline vf loadv(const float* p) {
  vf v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void storev(float* p, vf v) { std::memcpy(p, &v, sizeof v); }
inline float hmax(vf v) {
  float m = v[0];
  for (int i = 1; i < VL; ++i) m = std::max(m, v[i]);
  return m;
}
inline float hsum(vf v) {
  float s = 0.0f;
  for (int i = 0; i < VL; ++i) s += v[i];
  return s;
}

// exp(x) for x <= 0 (larger inputs are clamped to 0; the callers only pass score - max).
// x = n*ln2 + r, |r| <= ln2/2; exp(r) by its degree-7 Taylor polynomial (relative error
// < 1e-8 before rounding); 2**n added to the exponent bits. Below -86 (exp < 2**-123, near
// the bottom of float32's normal range and negligible beside the row maximum's exp(0) = 1)
// the input is clamped, which keeps the exponent arithmetic in the normal range.
inline vf exp_nonpositive(vf x) {
  const vf lo = splat(-86.0f), hi = splat(0.0f);
  x = x < lo ? lo : x;
  x = x > hi ? hi : x;
  const vf shifter = splat(12582912.0f);  // 1.5 * 2**23: adding it rounds to an integer
  vf t = x * 1.44269504088896341f + shifter;
  const vu n = (vu)t - (vu)shifter;  // round(x / ln2) as the low bits (two's complement)
  t -= shifter;
  vf r = x - t * 0.693145751953125f;   // ln2 split in two: the product above is exact
  r = r - t * 1.428606765330187e-06f;
  vf p = splat(1.0f / 5040.0f);
  p = p * r + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  return (vf)((vu)p + (n << 23));
}

// acc[MR x NR] = Qb[rows r0.., D] @ Kpanel[D x NR] (Qb rows ld apart, panel d-major).
inline void score_tile(int64_t D, const float* __restrict Q, int64_t ld, const float* __restrict Kp,
                       float* __restrict S, int64_t lds) {
  vf acc[MR][2];
  for (int r = 0; r < MR; ++r) acc[r][0] = acc[r][1] = vf{};
  for (int64_t d = 0; d < D; ++d) {
    const vf k0 = loadv(Kp + d * NR), k1 = loadv(Kp + d * NR + VL);
    for (int r = 0; r < MR; ++r) {
      const vf qv = splat(Q[r * ld + d]);
      acc[r][0] += qv * k0;
      acc[r][1] += qv * k1;
    }
  }
  for (int r = 0; r < MR; ++r) {
    storev(S + r * lds, acc[r][0]);
    storev(S + r * lds + VL, acc[r][1]);
  }
}

// acc[MR x NR] = P[rows, j0..j1) @ Vpanel[j0..j1) x NR (P rows ldp apart, panel key-major).
inline void value_tile(int64_t j0, int64_t j1, const float* __restrict P, int64_t ldp, const float* __restrict Vp,
                       vf (&acc)[MR][2]) {
  for (int r = 0; r < MR; ++r) acc[r][0] = acc[r][1] = vf{};
  for (int64_t j = j0; j < j1; ++j) {
    const vf v0 = loadv(Vp + j * NR), v1 = loadv(Vp + j * NR + VL);
    for (int r = 0; r < MR; ++r) {
      const vf pv = splat(P[r * ldp + j]);
      acc[r][0] += pv * v0;
      acc[r][1] += pv * v1;
    }
  }
}

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// tanh(x), vectorised: |x| < 0.4 by its odd Taylor polynomial to x**15 (truncation < 4e-9
// relative), else (1 - e) / (1 + e) with e = exp(-2|x|) (no cancellation there: 1 - e > 0.55);
// the sign put back. About 2 ulps.
inline vf tanh_v(vf x) {
  const vf ax = x < 0.0f ? -x : x;
  const vf x2 = x * x;
  vf p = splat(-929569.0f / 638512875.0f);
  p = p * x2 + 21844.0f / 6081075.0f;
  p = p * x2 + -1382.0f / 155925.0f;
  p = p * x2 + 62.0f / 2835.0f;
  p = p * x2 + -17.0f / 315.0f;
  p = p * x2 + 2.0f / 15.0f;
  p = p * x2 + -1.0f / 3.0f;
  const vf small = x + x * (x2 * p);
  const vf e = exp_nonpositive(-2.0f * ax);
  vf big = (1.0f - e) / (1.0f + e);
  big = x < 0.0f ? -big : big;
  return ax < 0.4f ? small : big;
}

}  // namespace

static void float32_kernel(const opgen::Tensor& q, const opgen::Tensor& k, const opgen::Tensor& v, const opgen::Tensor& bias, bool is_causal, int64_t offset, int64_t left_window, int64_t right_window, double softcap, double scale, opgen::Tensor& out) {
  const int L = out.ndim() - 3;  // loop dims, aligned across every tensor by the shim
  const int64_t Hq = q.size(L), S = q.size(L + 1), D = q.size(L + 2);
  const int64_t Hkv = k.size(L), T = k.size(L + 1), Dv = v.size(L + 2);
  if (Hkv == 0 || Hq % Hkv != 0)
    throw opgen::Error(opgen::ErrorKind::Value,
                       "the query heads must be a multiple of the key/value heads (and there must be at least one)");
  int64_t B = 1;
  for (int d = 0; d < L; ++d) B *= out.size(d);
  if (B == 0 || Hq == 0 || S == 0 || Dv == 0) return;  // nothing to write
  const int64_t group = Hq / Hkv;
  const float sc = static_cast<float>(scale);
  // softcap <= 0: no cap. A cap below 1e-30 bounds every capped score by itself: they are 0 to
  // well within the tolerance (and 1 / softcap would overflow float32).
  const bool capped = softcap > 0.0, flat = softcap > 0.0 && softcap < 1e-30;
  const float cap = static_cast<float>(softcap), inv_cap = capped && !flat ? static_cast<float>(1.0 / softcap) : 0.0f;

  // The keys query i may see: [lo(i), hi(i)), both nondecreasing in i (clamped to [0, T]).
  // In 128-bit arithmetic: i + offset - left_window and the like cannot overflow whatever the
  // scalars are.
  typedef __int128 wide;
  auto clamp_keys = [&](wide x) -> int64_t { return static_cast<int64_t>(x < 0 ? 0 : x > T ? T : x); };
  auto key_lo = [&](int64_t i) -> int64_t {
    if (left_window < 0) return 0;
    return clamp_keys(static_cast<wide>(i) + offset - left_window);
  };
  auto key_hi = [&](int64_t i) -> int64_t {
    int64_t h = T;
    if (is_causal) h = std::min<int64_t>(h, clamp_keys(static_cast<wide>(i) + offset + 1));
    if (right_window >= 0) h = std::min<int64_t>(h, clamp_keys(static_cast<wide>(i) + offset + right_window + 1));
    return h;
  };

  // Element offsets of each loop index in every tensor (stride 0 where broadcast).
  std::vector<int64_t> oq(B), ok(B), ov(B), ob(B);
  {
    std::vector<int64_t> idx(L, 0);
    for (int64_t b = 0; b < B; ++b) {
      int64_t a = 0, c = 0, e = 0, m = 0;
      for (int d = 0; d < L; ++d) {
        a += idx[d] * q.stride(d);
        c += idx[d] * k.stride(d);
        e += idx[d] * v.stride(d);
        m += idx[d] * bias.stride(d);
      }
      oq[b] = a, ok[b] = c, ov[b] = e, ob[b] = m;
      for (int d = L - 1; d >= 0; --d) {
        if (++idx[d] < out.size(d)) break;
        idx[d] = 0;
      }
    }
  }

  const float* qd = q.data<float>();
  const float* kd = k.data<float>();
  const float* vd = v.data<float>();
  const float* bd = bias.data<float>();
  float* od = out.data<float>();
  const int64_t qs_h = q.stride(L), qs_s = q.stride(L + 1), qs_d = q.stride(L + 2);
  const int64_t ks_h = k.stride(L), ks_t = k.stride(L + 1), ks_d = k.stride(L + 2);
  const int64_t vs_h = v.stride(L), vs_t = v.stride(L + 1), vs_e = v.stride(L + 2);
  const int64_t bs_h = bias.stride(L), bs_s = bias.stride(L + 1), bs_t = bias.stride(L + 2);

  // Packed keys and values per (loop index, kv head): K as ceil(T/NR) panels of D x NR,
  // V as ceil(Dv/NR) panels of T x NR, zero-padded.
  const int64_t slots = B * Hkv;
  const int64_t kpanels = ceil_div(T, NR), vpanels = ceil_div(Dv, NR);
  const int64_t kslot = kpanels * NR * D, vslot = vpanels * T * NR;

  // Packs key panel p (NR keys: their K columns and V rows) of kv slot `slot` into kp and vp.
  auto pack_panel = [&](int64_t slot, int64_t p, float* kp, float* vp) {
    const int64_t b = slot / Hkv, g = slot % Hkv;
    float* kpanel = kp + p * NR * D;
    const float* kbase = kd + ok[b] + g * ks_h;
    const float* vbase = vd + ov[b] + g * vs_h;
    for (int64_t c = 0; c < NR; ++c) {
      const int64_t j = p * NR + c;
      if (j >= T) {
        for (int64_t d = 0; d < D; ++d) kpanel[d * NR + c] = 0.0f;
        continue;
      }
      const float* krow = kbase + j * ks_t;
      if (ks_d == 1)
        for (int64_t d = 0; d < D; ++d) kpanel[d * NR + c] = krow[d];
      else
        for (int64_t d = 0; d < D; ++d) kpanel[d * NR + c] = krow[d * ks_d];
      const float* vrow = vbase + j * vs_t;
      for (int64_t cp = 0; cp < vpanels; ++cp) {
        float* dst = vp + (cp * T + j) * NR;
        const int64_t cols = std::min<int64_t>(NR, Dv - cp * NR);
        if (vs_e == 1)
          std::memcpy(dst, vrow + cp * NR, static_cast<size_t>(cols) * sizeof(float));
        else
          for (int64_t e = 0; e < cols; ++e) dst[e] = vrow[(cp * NR + e) * vs_e];
        std::fill(dst + cols, dst + NR, 0.0f);
      }
    }
  };

  const int64_t qblocks = ceil_div(S, BQ);
  int threads = 1;
#ifdef _OPENMP
  threads = omp_get_max_threads();
#endif
  const int64_t width = kpanels * NR;  // widest score row a block can need
  // (At least one element per buffer, so that no pointer arithmetic starts from a null data().)
  const int64_t qsize = BQ * std::max<int64_t>(D, 1), ssize = BQ * std::max<int64_t>(width + 16, 1);
  const int64_t rsize = std::max<int64_t>(width, 1);
  std::vector<float> qbuf(static_cast<size_t>(threads * qsize)), sbuf(static_cast<size_t>(threads * ssize));
  std::vector<float> rbuf(static_cast<size_t>(threads * rsize));
  constexpr float NEG_INF = -std::numeric_limits<float>::infinity();

  // Block blk (BQ queries) of query head h at loop index b, against its kv head's packs.
  auto attend_block = [&](int64_t b, int64_t h, int64_t blk, const float* kp, const float* vp, int tid) {
    const int64_t i0 = blk * BQ, rows = std::min<int64_t>(BQ, S - i0);
    float* obase = od + ((b * Hq + h) * S + i0) * Dv;

    // Each row's allowed keys [lo, hi) (rows past the last repeat it: the ranges stay monotone).
    int64_t lo[BQ], hi[BQ];
    for (int64_t r = 0; r < BQ; ++r) {
      const int64_t i = i0 + std::min(r, rows - 1);
      lo[r] = key_lo(i);
      hi[r] = std::max(key_hi(i), lo[r]);
    }
    const int64_t p0 = lo[0] / NR, p1 = ceil_div(hi[BQ - 1], NR);  // key panels the block needs
    if (p1 <= p0 || hi[BQ - 1] <= lo[0]) {  // no row sees a key
      std::fill(obase, obase + rows * Dv, 0.0f);
      return;
    }
    // Score rows are wd wide, ld apart: an odd number of 64-byte lines, so that the MR rows the
    // P @ V micro-kernel reads together fall in different cache sets (at 1024 keys, 4 KiB apart,
    // they would all share one set and evict each other).
    const int64_t base = p0 * NR, wd = (p1 - p0) * NR, ld = (wd / 16) % 2 ? wd : wd + 16;

    float* Q = qbuf.data() + tid * qsize;
    const float* qrow0 = qd + oq[b] + h * qs_h;
    for (int64_t r = 0; r < BQ; ++r) {
      float* dst = Q + r * D;
      const float* src = qrow0 + (i0 + r) * qs_s;
      if (r >= rows)
        std::fill(dst, dst + D, 0.0f);
      else if (qs_d == 1)
        for (int64_t d = 0; d < D; ++d) dst[d] = src[d] * sc;
      else
        for (int64_t d = 0; d < D; ++d) dst[d] = src[d * qs_d] * sc;
    }

    float* P = sbuf.data() + tid * ssize;
    for (int64_t p = p0; p < p1; ++p)
      for (int64_t r0 = 0; r0 < rows; r0 += MR)
        score_tile(D, Q + r0 * D, D, kp + p * NR * D, P + r0 * ld + (p - p0) * NR, ld);

    // Per row: cap, + bias (-inf outside [lo, hi)), softmax; masked keys become exactly 0.
    float* brow = rbuf.data() + tid * rsize;
    const float* bbase = bd + ob[b] + h * bs_h;
    float inv[BQ];
    const int64_t tiled_rows = ceil_div(rows, MR) * MR;
    for (int64_t r = 0; r < tiled_rows; ++r) {
      float* row = P + r * ld;
      if (r >= rows || hi[r] <= lo[r]) {
        std::fill(row, row + wd, 0.0f);
        inv[r] = 0.0f;
        continue;
      }
      const int64_t a = lo[r] - base, z = hi[r] - base;
      const float* bsrc = bbase + (i0 + r) * bs_s + base * bs_t;
      std::fill(brow, brow + a, NEG_INF);
      if (bs_t == 1)
        std::memcpy(brow + a, bsrc + a, static_cast<size_t>(z - a) * sizeof(float));
      else
        for (int64_t j = a; j < z; ++j) brow[j] = bsrc[j * bs_t];
      std::fill(brow + z, brow + wd, NEG_INF);
      vf mv = splat(NEG_INF);
      for (int64_t j = 0; j < wd; j += VL) {  // wd is a multiple of NR, hence of VL
        vf s = loadv(row + j);
        if (flat) s = vf{};
        else if (capped) s = tanh_v(s * inv_cap) * cap;
        s += loadv(brow + j);
        mv = s > mv ? s : mv;
        storev(row + j, s);
      }
      const float m = hmax(mv);
      if (m == NEG_INF) {  // every allowed key masked by the bias
        std::fill(row, row + wd, 0.0f);
        inv[r] = 0.0f;
        continue;
      }
      vf sum = vf{};
      const vf mm = splat(m), ninf = splat(NEG_INF);
      for (int64_t j = 0; j < wd; j += VL) {
        const vf s = loadv(row + j);
        const vf e = exp_nonpositive(s - mm);
        const vf kept = s > ninf ? e : vf{};
        sum += kept;
        storev(row + j, kept);
      }
      inv[r] = 1.0f / hsum(sum);
    }

    // out = P @ V, MR rows x NR columns at a time, over the keys the MR rows see.
    for (int64_t r0 = 0; r0 < rows; r0 += MR) {
      const int64_t j0 = lo[r0], j1 = hi[std::min<int64_t>(r0 + MR, rows) - 1];
      for (int64_t c0 = 0; c0 < Dv; c0 += NR) {
        vf acc[MR][2];
        if (j1 > j0)
          value_tile(j0 - base, j1 - base, P + r0 * ld, ld, vp + (c0 / NR) * T * NR + base * NR, acc);
        else
          for (int r = 0; r < MR; ++r) acc[r][0] = acc[r][1] = vf{};
        const int64_t cols = std::min<int64_t>(NR, Dv - c0);
        for (int64_t r = r0; r < std::min<int64_t>(r0 + MR, rows); ++r) {
          float tile[NR];
          const vf s = splat(inv[r]);
          storev(tile, acc[r - r0][0] * s);
          storev(tile + VL, acc[r - r0][1] * s);
          std::memcpy(obase + r * Dv + c0, tile, static_cast<size_t>(cols) * sizeof(float));
        }
      }
    }
  };

  const double work = static_cast<double>(B) * Hq * S * static_cast<double>(T) * (D + Dv);
  const bool parallel = threads > 1 && work > 2.0e5;
  // With many kv heads, or as many per thread (all of a call's kv heads carry the same work),
  // each thread takes whole kv heads: it packs one into its own buffers and serves all its query
  // heads and blocks at once, with no barrier in between (a barrier costs dearly when the
  // threads share their cores with other work). With few that do not divide evenly the packs
  // are shared and built first (panels in parallel), then the blocks are spread.
  const bool per_slot = !parallel || slots >= 4 * threads || slots % threads == 0;
  const int64_t owners = per_slot ? threads : slots;
  std::vector<float> Kp(static_cast<size_t>(std::max<int64_t>(owners * kslot, 1)));
  std::vector<float> Vp(static_cast<size_t>(std::max<int64_t>(owners * vslot, 1)));

#pragma omp parallel num_threads(threads) if (parallel)
  {
    int tid = 0;
#ifdef _OPENMP
    tid = omp_get_thread_num();
#endif
    if (per_slot) {
      float* kp = Kp.data() + tid * kslot;
      float* vp = Vp.data() + tid * vslot;
#pragma omp for schedule(dynamic, 1)
      for (int64_t slot = 0; slot < slots; ++slot) {
        for (int64_t p = 0; p < kpanels; ++p) pack_panel(slot, p, kp, vp);
        const int64_t b = slot / Hkv, g = slot % Hkv;
        for (int64_t h = g * group; h < (g + 1) * group; ++h)
          for (int64_t blk = 0; blk < qblocks; ++blk) attend_block(b, h, blk, kp, vp, tid);
      }
    } else {
#pragma omp for schedule(dynamic, 1)
      for (int64_t item = 0; item < slots * kpanels; ++item) {
        const int64_t slot = item / kpanels;
        pack_panel(slot, item % kpanels, Kp.data() + slot * kslot, Vp.data() + slot * vslot);
      }
      // Under causal masking the late blocks see the most keys: hand them out first.
#pragma omp for schedule(dynamic, 1)
      for (int64_t task = 0; task < B * Hq * qblocks; ++task) {
        const int64_t blk = qblocks - 1 - task % qblocks, bh = task / qblocks;
        const int64_t b = bh / Hq, h = bh % Hq, slot = b * Hkv + h / group;
        attend_block(b, h, blk, Kp.data() + slot * kslot, Vp.data() + slot * vslot, tid);
      }
    }
  }
}


// ---- half storage, float32 arithmetic ------------------------------------------------------
// The float32 kernel above runs on float32 copies of the inputs (every float16 value is a float32,
// so widening is exact) and its float32 result is rounded once into `out` (to nearest, ties to
// even). Dims of stride 0 (broadcast) stay stride 0 in the copies.
namespace {

using Half = _Float16;

inline float widen(_Float16 h) { return static_cast<float>(h); }
inline float widen(opgen::bfloat16 h) { return opgen::to_float(h); }
inline void narrow(float f, _Float16& h) { h = static_cast<_Float16>(f); }
inline void narrow(float f, opgen::bfloat16& h) { h = opgen::to_bfloat16(f); }

// Unit-stride rows converted sixteen values at a time where the build has AVX-512 (GCC 12 leaves
// _Float16 conversion loops scalar without AVX512-FP16). Each lane computes exactly what the
// scalar conversion above computes: vcvtph2ps/vcvtps2ph are the instructions GCC emits for one
// value (to nearest even, nan kept quiet), and the bfloat16 rounding is to_bfloat16's integer
// arithmetic lane by lane (not vcvtneps2bf16, which flushes subnormals).
inline void widen_row(const _Float16* a, float* b, int64_t n) {
  int64_t i = 0;
#if defined(__AVX512F__)
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_ps(b + i, _mm512_maskz_cvtph_ps(0xffff, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + i))));
#endif
  for (; i < n; ++i) b[i] = widen(a[i]);
}
inline void widen_row(const opgen::bfloat16* a, float* b, int64_t n) {
  int64_t i = 0;
#if defined(__AVX512F__)
  for (; i + 16 <= n; i += 16) {
    const __m512i bits = _mm512_maskz_cvtepu16_epi32(0xffff, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + i)));
    _mm512_storeu_ps(b + i, _mm512_castsi512_ps(_mm512_slli_epi32(bits, 16)));
  }
#endif
  for (; i < n; ++i) b[i] = widen(a[i]);
}
inline void narrow_row(const float* a, _Float16* b, int64_t n) {
  int64_t i = 0;
#if defined(__AVX512F__)
  for (; i + 16 <= n; i += 16)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(b + i),
                        _mm512_cvtps_ph(_mm512_loadu_ps(a + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
#endif
  for (; i < n; ++i) narrow(a[i], b[i]);
}
inline void narrow_row(const float* a, opgen::bfloat16* b, int64_t n) {
  int64_t i = 0;
#if defined(__AVX512F__)
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
  for (; i < n; ++i) narrow(a[i], b[i]);
}

struct Float32Copy {
  std::vector<float> data;
  opgen::Tensor tensor;
};

// A float32 copy of a half tensor: contiguous over its dims, except that stride-0 dims stay
// stride 0 (one copy of what they repeat). The innermost dim is a tight loop (a unit-stride one
// where the input is, which GCC vectorises: F16C conversions, bfloat16 shifts) and only the outer
// dims advance an odometer, so the copy costs about one load and one store per stored value.
Float32Copy widened(const opgen::Tensor& t) {
  const int nd = t.ndim();
  int64_t shape[OPGEN_MAX_DIMS] = {}, strides[OPGEN_MAX_DIMS] = {};
  int64_t count = 1;
  for (int d = nd - 1; d >= 0; --d) {
    shape[d] = t.size(d);
    const bool repeated = t.stride(d) == 0 && t.size(d) > 1;
    strides[d] = repeated ? 0 : count;
    if (!repeated) count *= t.size(d);
  }
  Float32Copy c;
  c.data.resize(static_cast<size_t>(t.numel() == 0 ? 0 : count));
  if (t.numel() > 0 && nd == 0) {
    c.data[0] = widen(*t.data<Half>());
  } else if (t.numel() > 0) {
    const Half* src = t.data<Half>();
    float* dst = c.data.data();
    const int inner = nd - 1;
    const int64_t n = strides[inner] == 0 && shape[inner] > 1 ? 1 : shape[inner];
    const int64_t step = t.stride(inner);
    int64_t idx[OPGEN_MAX_DIMS] = {};
    int64_t from = 0, to = 0;
    for (;;) {  // every index of the outer dims whose repeated dims are 0: each stored row once
      const Half* a = src + from;
      float* b = dst + to;
      if (step == 1) {
        widen_row(a, b, n);
      } else {
        for (int64_t i = 0; i < n; ++i) b[i] = widen(a[i * step]);
      }
      int d = inner - 1;
      for (; d >= 0; --d) {
        if (strides[d] == 0 && shape[d] > 1) continue;
        from += t.stride(d);
        to += strides[d];
        if (++idx[d] < shape[d]) break;
        from -= idx[d] * t.stride(d);
        to -= idx[d] * strides[d];
        idx[d] = 0;
      }
      if (d < 0) break;
    }
  }
  opgen_tensor raw{};
  raw.data = c.data.data();
  raw.device = opgen_device{1, 0};
  raw.ndim = nd;
  raw.dtype = opgen_dtype{2, 32, 1};
  raw.shape = shape;
  raw.strides = strides;
  raw.byte_offset = 0;
  c.tensor = opgen::Tensor(raw);
  return c;
}

// A contiguous float32 result of out's shape, rounded into out afterwards.
struct Float32Result {
  std::vector<float> data;
  opgen::Tensor tensor;
  explicit Float32Result(const opgen::Tensor& out) : data(static_cast<size_t>(out.numel())) {
    int64_t shape[OPGEN_MAX_DIMS] = {};
    for (int d = 0; d < out.ndim(); ++d) shape[d] = out.size(d);
    opgen_tensor raw{};
    raw.data = data.data();
    raw.device = opgen_device{1, 0};
    raw.ndim = out.ndim();
    raw.dtype = opgen_dtype{2, 32, 1};
    raw.shape = shape;
    raw.strides = nullptr;
    raw.byte_offset = 0;
    tensor = opgen::Tensor(raw);
  }
  void store(opgen::Tensor& out) const {
    narrow_row(data.data(), out.data<Half>(), static_cast<int64_t>(data.size()));
  }
};

}  // namespace

void opgen_nn_attention__f16(const opgen::Tensor& q, const opgen::Tensor& k, const opgen::Tensor& v, const opgen::Tensor& bias, bool is_causal, int64_t offset, int64_t left_window, int64_t right_window, double softcap, double scale, opgen::Tensor& out) {
  const Float32Copy wide_q = widened(q);
  const Float32Copy wide_k = widened(k);
  const Float32Copy wide_v = widened(v);
  const Float32Copy wide_bias = widened(bias);
  Float32Result wide_out(out);
  float32_kernel(wide_q.tensor, wide_k.tensor, wide_v.tensor, wide_bias.tensor, is_causal, offset, left_window, right_window, softcap, scale, wide_out.tensor);
  wide_out.store(out);
}

}  // namespace opgen::kernels
