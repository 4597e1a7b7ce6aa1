// opgen.nn.scaled_dot_product_attention, overload f32: bidirectional attention with a key
// padding mask, grouped-query heads, a symmetric sliding window and a given scale.
//
// Shapes (the shim has aligned the loop dims, stride 0 where broadcast): q (*, Hq, S, D),
// k (*, Hkv, T, D), v (*, Hkv, T, Dv), key_mask (*, T), out (*, Hq, S, Dv) contiguous.
//
// How it is computed, blocked rather than flash-style (a whole row of scores fits in cache
// for encoder lengths):
//   1. The visible keys (key_mask != 0) of each loop index are listed in order; per key/value
//      head they are gathered once, NR keys at a time: K into NR-key panels laid out d-major
//      (the score micro-kernel reads two vectors of keys per d), V into NR-column panels
//      laid out key-major. Padded keys are skipped entirely: they would get probability
//      exactly 0. The query heads of a group share these packs (grouped-query attention).
//   2. Per (loop index, query head, block of BQ queries): the block's queries
//      are packed, pre-multiplied by the scale; scores for the keys any of its rows can see
//      (the window makes that a contiguous range of the gathered keys) come from an MR x NR
//      register-tiled micro-kernel with one fused multiply-add per (row, key vector, d);
//      each row's softmax is max, exp (a vectorised polynomial, ~1e-7 relative), sum, with
//      the keys outside the row's own window set to exactly 0; the output tile is
//      P @ V by the same kind of micro-kernel, scaled by 1 / sum. A query that sees no key
//      gets zeros.
// Everything accumulates in float32 (the spec's tolerance covers any summation order).
// Vectors are GCC vector extensions sized to the ISA -march=native gives (16 lanes with
// AVX-512, 8 with AVX2, 4 otherwise). OpenMP spreads whole key/value heads over the threads
// when there are many (each thread packs one and serves its query heads, no barrier), else
// packs the few shared ones panel by panel and then spreads the query blocks.
#include "opgen_kernel.hpp"

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

}  // namespace

void opgen_nn_scaled_dot_product_attention__f32(const opgen::Tensor& q, const opgen::Tensor& k,
                                                const opgen::Tensor& v, const opgen::Tensor& key_mask,
                                                int64_t window, double scale, opgen::Tensor& out) {
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
  // A window wider than both sequences cuts nothing; clamping it keeps i + W in range.
  const int64_t W = window <= 0 ? 0 : std::min<int64_t>(window, S + T + 1);
  const float sc = static_cast<float>(scale);

  // Element offsets of each loop index in every tensor (stride 0 where broadcast).
  std::vector<int64_t> oq(B), ok(B), ov(B), om(B);
  {
    std::vector<int64_t> idx(L, 0);
    for (int64_t b = 0; b < B; ++b) {
      int64_t a = 0, c = 0, e = 0, m = 0;
      for (int d = 0; d < L; ++d) {
        a += idx[d] * q.stride(d);
        c += idx[d] * k.stride(d);
        e += idx[d] * v.stride(d);
        m += idx[d] * key_mask.stride(d);
      }
      oq[b] = a, ok[b] = c, ov[b] = e, om[b] = m;
      for (int d = L - 1; d >= 0; --d) {
        if (++idx[d] < out.size(d)) break;
        idx[d] = 0;
      }
    }
  }

  const float* qd = q.data<float>();
  const float* kd = k.data<float>();
  const float* vd = v.data<float>();
  const int64_t* md = key_mask.data<int64_t>();
  float* od = out.data<float>();
  const int64_t qs_h = q.stride(L), qs_s = q.stride(L + 1), qs_d = q.stride(L + 2);
  const int64_t ks_h = k.stride(L), ks_t = k.stride(L + 1), ks_d = k.stride(L + 2);
  const int64_t vs_h = v.stride(L), vs_t = v.stride(L + 1), vs_e = v.stride(L + 2);
  const int64_t ms_t = key_mask.stride(L);

  // The visible keys of each loop index, in order (the padding mask does not depend on the head).
  std::vector<int32_t> keys(static_cast<size_t>(std::max<int64_t>(B * T, 1)));
  std::vector<int64_t> count(static_cast<size_t>(B));
  for (int64_t b = 0; b < B; ++b) {
    int64_t n = 0;
    for (int64_t j = 0; j < T; ++j)
      if (md[om[b] + j * ms_t] != 0) keys[b * T + n++] = static_cast<int32_t>(j);
    count[b] = n;
  }

  // Packed keys and values per (loop index, kv head): K as ceil(T/NR) panels of D x NR,
  // V as ceil(Dv/NR) panels of T x NR; only the visible keys, zero-padded.
  const int64_t slots = B * Hkv;
  const int64_t kpanels = ceil_div(T, NR), vpanels = ceil_div(Dv, NR);
  const int64_t kslot = kpanels * NR * D, vslot = vpanels * T * NR;

  // Gathers key panel p (NR keys: their K columns and V rows) of kv slot `slot` into that
  // slot's packs kp and vp.
  auto pack_panel = [&](int64_t slot, int64_t p, float* kp, float* vp) {
    const int64_t b = slot / Hkv, g = slot % Hkv, n = count[b];
    if (p * NR >= n) return;
    const int32_t* kid = keys.data() + b * T;
    float* kpanel = kp + p * NR * D;
    const float* kbase = kd + ok[b] + g * ks_h;
    const float* vbase = vd + ov[b] + g * vs_h;
    for (int64_t c = 0; c < NR; ++c) {
      const int64_t jj = p * NR + c;
      if (jj >= n) {
        for (int64_t d = 0; d < D; ++d) kpanel[d * NR + c] = 0.0f;
        continue;
      }
      const float* krow = kbase + kid[jj] * ks_t;
      if (ks_d == 1)
        for (int64_t d = 0; d < D; ++d) kpanel[d * NR + c] = krow[d];
      else
        for (int64_t d = 0; d < D; ++d) kpanel[d * NR + c] = krow[d * ks_d];
      const float* vrow = vbase + kid[jj] * vs_t;
      for (int64_t cp = 0; cp < vpanels; ++cp) {
        float* dst = vp + (cp * T + jj) * NR;
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
  const int64_t qsize = BQ * std::max<int64_t>(D, 1), ssize = BQ * std::max<int64_t>(width, 1);
  std::vector<float> qbuf(static_cast<size_t>(threads * qsize)), sbuf(static_cast<size_t>(threads * ssize));

  // Block blk (BQ queries) of query head h at loop index b, against its kv head's packs.
  auto attend_block = [&](int64_t b, int64_t h, int64_t blk, const float* kp, const float* vp, int tid) {
    const int64_t i0 = blk * BQ, rows = std::min<int64_t>(BQ, S - i0);
    const int64_t n = count[b];
    const int32_t* kid = keys.data() + b * T;
    float* obase = od + ((b * Hq + h) * S + i0) * Dv;

    // Each row's visible keys are the gathered keys [lo, hi): those inside its window.
    int64_t lo[BQ], hi[BQ];
    for (int64_t r = 0; r < BQ; ++r) {
      const int64_t i = i0 + std::min(r, rows - 1);
      lo[r] = W ? std::lower_bound(kid, kid + n, i - W + 1) - kid : 0;
      hi[r] = W ? std::lower_bound(kid, kid + n, i + W) - kid : n;
    }
    const int64_t p0 = lo[0] / NR, p1 = ceil_div(hi[BQ - 1], NR);  // key panels the block needs
    if (p1 <= p0) {  // no row sees a key
      std::fill(obase, obase + rows * Dv, 0.0f);
      return;
    }
    const int64_t base = p0 * NR, ld = (p1 - p0) * NR;

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

    // Softmax per row over [lo, hi); everything else in the row becomes exactly 0.
    float inv[BQ];
    const int64_t tiled_rows = ceil_div(rows, MR) * MR;
    for (int64_t r = 0; r < tiled_rows; ++r) {
      float* row = P + r * ld;
      if (r >= rows || hi[r] <= lo[r]) {
        std::fill(row, row + ld, 0.0f);
        inv[r] = 0.0f;
        continue;
      }
      const int64_t a = lo[r] - base, z = hi[r] - base;
      float m = -std::numeric_limits<float>::infinity();
      int64_t j = a;
      if (z - a >= VL) {
        vf mv = loadv(row + a);
        for (j = a + VL; j + VL <= z; j += VL) {
          const vf x = loadv(row + j);
          mv = x > mv ? x : mv;
        }
        m = hmax(mv);
      }
      for (; j < z; ++j) m = std::max(m, row[j]);
      vi lane;
      for (int l = 0; l < VL; ++l) lane[l] = l;
      vf sum = vf{};
      const vf mm = splat(m);
      for (j = 0; j < ld; j += VL) {  // ld is a multiple of NR, hence of VL
        const vi idx = lane + static_cast<int32_t>(j);
        const vi inside = (idx >= static_cast<int32_t>(a)) & (idx < static_cast<int32_t>(z));
        const vf e = exp_nonpositive(loadv(row + j) - mm);
        const vf kept = inside ? e : vf{};
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
  // With many kv heads (MiniLM: batch x 12) each thread takes whole kv heads: it packs one into
  // its own buffers and serves all its query heads and blocks at once, with no barrier in
  // between (16 per thread keep these coarse tasks balanced). With few (EmbeddingGemma: one
  // per sequence) the packs are shared and built first (panels in parallel), then the blocks
  // are spread over the threads.
  const bool per_slot = !parallel || slots >= 16 * threads;
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
#pragma omp for schedule(dynamic, 1)
      for (int64_t task = 0; task < B * Hq * qblocks; ++task) {
        const int64_t blk = task % qblocks, bh = task / qblocks;
        const int64_t b = bh / Hq, h = bh % Hq, slot = b * Hkv + h / group;
        attend_block(b, h, blk, Kp.data() + slot * kslot, Vp.data() + slot * vslot, tid);
      }
    }
  }
}

}  // namespace opgen::kernels
