// operator.matmul, overload f32, variant private_packing: out[..., i, j] = sum_p a[..., i, p] * b[..., p, j].
//
// The shim has already broadcast the batch dims (stride 0 where broadcast), so a is
// (*batch, m, k), b is (*batch, k, n) and out (*batch, m, n), contiguous. Inputs may have
// any strides (transposed, sliced, negative, 0).
//
// The plain kernel's GotoBLAS/BLIS-style GEMM (packed MR-row panels of a, NR-column panels of b,
// an MR x NR register-tile micro-kernel: 12 x 32 floats with AVX-512), with what the linear
// layer's GEMM measured faster on a shared 2-core machine:
//   - the threads share nothing while they multiply: each packs the blocks of b it uses itself
//     (a few percent of the work, done twice), where the plain kernel packs each block of b once
//     between two barriers; a barrier per block waits for whichever thread the OS descheduled,
//     which on a loaded machine costs more than the packing it saves (ffn-down, k = 1536: three
//     blocks of 512 with the plain kernel, twelve of 128 here, and no barrier);
//   - shallower blocks: KC = 128 (a 6 KiB panel of a and a 16 KiB panel of b share L1), NC = 1024.
// Every product a[i,p]*b[p,j] is summed (no skipping of zeros), so nan and inf propagate
// exactly as in the plain triple loop; padding only ever feeds discarded tile entries.
// Accumulation is in float (the spec's tolerance covers any summation order). k == 0
// gives zeros; m, n or a batch dim of 0 gives nothing to write.
#include "opgen_kernel.hpp"

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
constexpr int VL = kVecBytes / static_cast<int>(sizeof(T));  // lanes per vector
constexpr int NV = 2;                                           // vectors per tile row
constexpr int NR = NV * VL;
typedef T vec __attribute__((vector_size(kVecBytes)));

// Blocking, measured on a 2-core AMD EPYC (Zen 4, AVX-512, 32 KiB L1d, 1 MiB L2 per core) for the
// linear layer's GEMM: one MR x KC panel of a (6 KiB) and one KC x NR panel of b (16 KiB) share L1
// in the micro-kernel, the KC x NC block of b (512 KiB) stays in L2.
constexpr int64_t KC = 128;   // depth of a packed block
constexpr int64_t NC = 1024;  // columns of b per packed block (a multiple of NR)

inline vec loadv(const T* p) {
  vec v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void storev(T* p, vec v) { std::memcpy(p, &v, sizeof v); }

// acc = A_panel (MR x kc, packed p-major) * B_panel (kc x NR, packed p-major); then
// C (ldc apart) = acc or += acc, for the top-left mr x nr of the tile.
void micro_kernel(int64_t kc, const T* __restrict A, const T* __restrict B, T* __restrict C, int64_t ldc,
                  bool accumulate, int mr, int nr) {
  vec acc[MR][NV];
  for (int i = 0; i < MR; ++i)
    for (int v = 0; v < NV; ++v) acc[i][v] = vec{};
  for (int64_t p = 0; p < kc; ++p) {
    vec b[NV];
    for (int v = 0; v < NV; ++v) b[v] = loadv(B + v * VL);
    for (int i = 0; i < MR; ++i) {
      const T a = A[i];
      for (int v = 0; v < NV; ++v) acc[i][v] += a * b[v];
    }
    A += MR;
    B += NR;
  }
  if (mr == MR && nr == NR) {
    for (int i = 0; i < MR; ++i)
      for (int v = 0; v < NV; ++v) {
        T* c = C + i * ldc + v * VL;
        storev(c, accumulate ? loadv(c) + acc[i][v] : acc[i][v]);
      }
    return;
  }
  alignas(64) T tile[MR][NR];
  for (int i = 0; i < MR; ++i)
    for (int v = 0; v < NV; ++v) storev(&tile[i][v * VL], acc[i][v]);
  for (int i = 0; i < mr; ++i) {
    T* c = C + i * ldc;
    if (accumulate) {
      for (int j = 0; j < nr; ++j) c[j] += tile[i][j];
    } else {
      for (int j = 0; j < nr; ++j) c[j] = tile[i][j];
    }
  }
}

// Pack rows [i0, i0+mc) x cols [p0, p0+kc) of a (strides sm, sk) into MR-row panels:
// dst[panel][p][r], zero rows past mc.
void pack_a(const T* a, int64_t sm, int64_t sk, int64_t i0, int64_t mc, int64_t p0, int64_t kc, T* dst) {
  for (int64_t ir = 0; ir < mc; ir += MR) {
    const int64_t rows = std::min<int64_t>(MR, mc - ir);
    T* d = dst + ir * kc;
    const T* s = a + (i0 + ir) * sm + p0 * sk;
    if (sk == 1) {
      for (int64_t r = 0; r < rows; ++r) {
        const T* row = s + r * sm;
        for (int64_t p = 0; p < kc; ++p) d[p * MR + r] = row[p];
      }
    } else {
      for (int64_t p = 0; p < kc; ++p) {
        const T* col = s + p * sk;
        for (int64_t r = 0; r < rows; ++r) d[p * MR + r] = col[r * sm];
      }
    }
    for (int64_t r = rows; r < MR; ++r)
      for (int64_t p = 0; p < kc; ++p) d[p * MR + r] = T(0);
  }
}

// Pack the NR-column panel starting at column j0 (nr <= NR valid columns) of rows
// [p0, p0+kc) of b (strides sk, sn): dst[p][c], zero columns past nr.
void pack_b_panel(const T* b, int64_t sk, int64_t sn, int64_t p0, int64_t kc, int64_t j0, int64_t nr, T* dst) {
  const T* s = b + p0 * sk + j0 * sn;
  if (nr == NR && sn == 1) {
    for (int64_t p = 0; p < kc; ++p) std::memcpy(dst + p * NR, s + p * sk, NR * sizeof(T));
    return;
  }
  if (sk == 1) {
    for (int64_t p = 0; p < kc; ++p)
      for (int64_t c = nr; c < NR; ++c) dst[p * NR + c] = T(0);
    for (int64_t c = 0; c < nr; ++c) {
      const T* col = s + c * sn;
      for (int64_t p = 0; p < kc; ++p) dst[p * NR + c] = col[p];
    }
    return;
  }
  for (int64_t p = 0; p < kc; ++p) {
    const T* row = s + p * sk;
    T* d = dst + p * NR;
    for (int64_t c = 0; c < nr; ++c) d[c] = row[c * sn];
    for (int64_t c = nr; c < NR; ++c) d[c] = T(0);
  }
}

// An uninitialised, 64-byte aligned scratch array (new[] throws std::bad_alloc).
struct AlignedBuf {
  T* raw;
  T* p;
  explicit AlignedBuf(size_t n) : raw(new T[n + 64 / sizeof(T)]) {
    const uintptr_t u = reinterpret_cast<uintptr_t>(raw);
    p = raw + ((64 - u % 64) % 64) / sizeof(T);
  }
  ~AlignedBuf() { delete[] raw; }
  AlignedBuf(const AlignedBuf&) = delete;
  AlignedBuf& operator=(const AlignedBuf&) = delete;
};

// Rows [r0, r1) x columns [c0, c1) of one (m x k) @ (k x n) product into contiguous c (ldc = n),
// k > 0, by one thread with private packing buffers bp (KC x NC) and ap (MR x KC).
void gemm_part(int64_t n, int64_t k, const T* a, int64_t sam, int64_t sak, const T* b, int64_t sbk, int64_t sbn,
               T* c, int64_t r0, int64_t r1, int64_t c0, int64_t c1, T* bp, T* ap) {
  for (int64_t j0 = c0; j0 < c1; j0 += NC) {
    const int64_t nc = std::min<int64_t>(NC, c1 - j0);
    for (int64_t p0 = 0; p0 < k; p0 += KC) {
      const int64_t kc = std::min<int64_t>(KC, k - p0);
      for (int64_t jj = 0; jj < nc; jj += NR)
        pack_b_panel(b, sbk, sbn, p0, kc, j0 + jj, std::min<int64_t>(NR, nc - jj), bp + jj * kc);
      for (int64_t i = r0; i < r1; i += MR) {
        const int mr = static_cast<int>(std::min<int64_t>(MR, r1 - i));
        pack_a(a, sam, sak, i, mr, p0, kc, ap);
        for (int64_t jj = 0; jj < nc; jj += NR) {
          const int nr = static_cast<int>(std::min<int64_t>(NR, nc - jj));
          micro_kernel(kc, ap, bp + jj * kc, c + i * n + j0 + jj, n, p0 > 0, mr, nr);
        }
      }
    }
  }
}

// One product with `threads` OpenMP threads: rows split between them when each gets a few MR
// panels, else whole NR column panels. `work` holds (bp_size + ap_size) per thread.
void gemm(int64_t m, int64_t n, int64_t k, const T* a, int64_t sam, int64_t sak, const T* b, int64_t sbk,
          int64_t sbn, T* c, int threads, T* work, size_t bp_size, size_t ap_size) {
  const bool by_rows = m >= static_cast<int64_t>(threads) * 2 * MR;
  const int64_t panels = (n + NR - 1) / NR;
  if (!by_rows) threads = static_cast<int>(std::min<int64_t>(threads, panels));
#pragma omp parallel num_threads(threads) if (threads > 1)
  {
    int t = 0, team = 1;
#ifdef _OPENMP
    t = omp_get_thread_num();
    team = omp_get_num_threads();
#endif
    T* bp = work + (bp_size + ap_size) * static_cast<size_t>(t);
    int64_t r0 = 0, r1 = m, c0 = 0, c1 = n;
    if (team > 1 && by_rows) {
      const int64_t tiles = (m + MR - 1) / MR;
      r0 = std::min<int64_t>(m, tiles * t / team * MR);
      r1 = std::min<int64_t>(m, tiles * (t + 1) / team * MR);
    } else if (team > 1) {
      c0 = std::min<int64_t>(n, panels * t / team * NR);
      c1 = std::min<int64_t>(n, panels * (t + 1) / team * NR);
    }
    if (r0 < r1 && c0 < c1) gemm_part(n, k, a, sam, sak, b, sbk, sbn, c, r0, r1, c0, c1, bp, bp + bp_size);
  }
}

}  // namespace

void operator_matmul__f32(const opgen::Tensor& a, const opgen::Tensor& b, opgen::Tensor& out) {
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
  const T* A = a.data<T>();
  const T* B = b.data<T>();
  T* C = out.data<T>();
  const int64_t sam = a.stride(nd - 2), sak = a.stride(nd - 1);
  const int64_t sbk = b.stride(nd - 2), sbn = b.stride(nd - 1);

  int max_threads = 1;
#ifdef _OPENMP
  max_threads = omp_get_max_threads();
#endif
  // Below ~2 MFLOP per product threads cost more than they save.
  const double flops = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  const bool big = flops >= 2.0e6;
  const int inner_threads = big ? max_threads : 1;
  const int batch_threads = (!big && batch > 1 && flops * static_cast<double>(batch) >= 2.0e6) ? max_threads : 1;

  // Offsets of each batch element in a and b (row-major over the batch dims).
  const int bd = nd - 2;
  std::vector<int64_t> aoff(static_cast<size_t>(batch)), boff(static_cast<size_t>(batch));
  {
    int64_t idx[OPGEN_MAX_DIMS] = {};
    int64_t ao = 0, bo = 0;
    for (int64_t t = 0; t < batch; ++t) {
      aoff[static_cast<size_t>(t)] = ao;
      boff[static_cast<size_t>(t)] = bo;
      for (int d = bd - 1; d >= 0; --d) {
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
  if (k == 0) {
    std::fill(C, C + batch * m * n, T(0));
    return;
  }
  // Packing buffers, allocated here so nothing inside the parallel regions can throw: one
  // (bp, ap) pair per thread of whichever level runs threads.
  const int workers = std::max(inner_threads, batch_threads);
  const size_t bp_size = static_cast<size_t>(std::min<int64_t>(NC, (n + NR - 1) / NR * NR) * std::min<int64_t>(KC, k));
  const size_t ap_size = static_cast<size_t>((MR * std::min<int64_t>(KC, k) + 15) / 16 * 16);  // whole cache lines
  const size_t per_thread = bp_size + ap_size;
  AlignedBuf work(per_thread * static_cast<size_t>(workers));
#pragma omp parallel for schedule(static) num_threads(batch_threads) if (batch_threads > 1)
  for (int64_t t = 0; t < batch; ++t) {
    int w = 0;
#ifdef _OPENMP
    if (batch_threads > 1) w = omp_get_thread_num();
#endif
    gemm(m, n, k, A + aoff[static_cast<size_t>(t)], sam, sak, B + boff[static_cast<size_t>(t)], sbk, sbn, C + t * m * n,
         inner_threads, work.p + static_cast<size_t>(w) * per_thread, bp_size, ap_size);
  }
}

}  // namespace opgen::kernels
