// operator.matmul, overload f16: float16 storage, float32 arithmetic. Written by scripts/half_kernels.py from
// answers/cpp/operator.matmul__f32.cpp (its algorithm, unchanged and private) and a widening wrapper.
// operator.matmul, overload f32: out[..., i, j] = sum_p a[..., i, p] * b[..., p, j].
//
// The shim has already broadcast the batch dims (stride 0 where broadcast), so a is
// (*batch, m, k), b is (*batch, k, n) and out (*batch, m, n), contiguous. Inputs may have
// any strides (transposed, sliced, negative, 0).
//
// A GotoBLAS/BLIS-style GEMM:
//   - b is packed, kc rows at a time, into NR-wide column panels and a into MR-tall row
//     panels (zero-padded to whole panels), so the inner kernel reads both contiguously
//     whatever the input strides;
//   - the MR x NR micro-kernel keeps the whole output tile in vector registers (GCC
//     vector extensions sized to the ISA: 12 rows x 2 vectors with AVX-512, i.e. 12 x 32 floats,
//     6 x 2 with AVX/AVX2, 4 x 2 otherwise) and does one fused multiply-add per
//     broadcast element of a and vector of b (GCC contracts `acc += a * b` into FMA);
//   - each kc x nc block of b is packed once and shared by the threads; each thread
//     packs its own MR x kc panels of a. OpenMP splits the rows of a large product (or
//     its columns when a has few rows), or the batch of many small products.
// Every product a[i,p]*b[p,j] is summed (no skipping of zeros), so nan and inf propagate
// exactly as in the plain triple loop; padding only ever feeds discarded tile entries.
// Accumulation is in float (the spec's tolerance covers any summation order). k == 0
// gives zeros; m, n or a batch dim of 0 gives nothing to write.
#include "opgen_kernel.hpp"

#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
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

// Blocking, tuned on a 2-core AMD EPYC (Zen 4, AVX-512): one packed MR x KC panel of a
// (24 KiB) stays in L1 while the packed KC x NC block of b streams past it from L2/L3.
constexpr int64_t KC = 512;   // depth of a packed block
constexpr int64_t NC = 2048;  // columns of b per packed block (a multiple of NR)

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

// One (m x k) @ (k x n) product into contiguous c (ldc = n), m, n, k > 0.
// `bp` has room for min(NC, n rounded up to NR) * min(KC, k) elements; `ap` has room
// for MR * KC elements per thread. With threads > 1 the OpenMP threads share the
// packing of each block of b, then split the rows of a evenly between them (or, when
// a has too few rows for that, the column panels of b).
void gemm(int64_t m, int64_t n, int64_t k, const T* a, int64_t sam, int64_t sak, const T* b, int64_t sbk,
          int64_t sbn, T* c, int threads, T* bp, T* ap) {
  const bool by_rows = threads == 1 || m >= static_cast<int64_t>(threads) * 4 * MR;
  int64_t rows = m;  // rows per thread, a multiple of MR
  int nt = threads;
  if (by_rows) {
    rows = (m + threads - 1) / threads;
    rows = (rows + MR - 1) / MR * MR;
    nt = static_cast<int>(std::min<int64_t>(threads, (m + rows - 1) / rows));
  } else {
    nt = static_cast<int>(std::min<int64_t>(threads, (std::min<int64_t>(NC, n) + NR - 1) / NR));
  }
  (void)nt;
#pragma omp parallel num_threads(nt) if (nt > 1)
  {
    int t = 0, team = 1;
#ifdef _OPENMP
    t = omp_get_thread_num();
    team = omp_get_num_threads();
#endif
    const int64_t r0 = by_rows ? std::min<int64_t>(m, t * rows) : 0;
    const int64_t r1 = by_rows ? std::min<int64_t>(m, r0 + rows) : m;
    T* apt = ap + static_cast<int64_t>(t) * MR * KC;
    for (int64_t j0 = 0; j0 < n; j0 += NC) {
      const int64_t nc = std::min<int64_t>(NC, n - j0);
      const int64_t panels = (nc + NR - 1) / NR;
      // This thread's column panels of the block.
      const int64_t q0 = by_rows ? 0 : panels * t / team;
      const int64_t q1 = by_rows ? panels : panels * (t + 1) / team;
      for (int64_t p0 = 0; p0 < k; p0 += KC) {
        const int64_t kc = std::min<int64_t>(KC, k - p0);
#pragma omp for schedule(static)
        for (int64_t jp = 0; jp < panels; ++jp) {
          const int64_t jj = jp * NR;
          pack_b_panel(b, sbk, sbn, p0, kc, j0 + jj, std::min<int64_t>(NR, nc - jj), bp + jj * kc);
        }
        // (implicit barrier: the packed block of b is complete)
        for (int64_t i = r0; i < r1; i += MR) {
          const int mr = static_cast<int>(std::min<int64_t>(MR, r1 - i));
          pack_a(a, sam, sak, i, mr, p0, kc, apt);
          for (int64_t q = q0; q < q1; ++q) {
            const int64_t jj = q * NR;
            const int nr = static_cast<int>(std::min<int64_t>(NR, nc - jj));
            micro_kernel(kc, apt, bp + jj * kc, c + i * n + j0 + jj, n, p0 > 0, mr, nr);
          }
        }
#pragma omp barrier
      }
    }
  }
}

}  // namespace

static void float32_kernel(const opgen::Tensor& a, const opgen::Tensor& b, opgen::Tensor& out) {
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
  // Packing buffers, allocated here so nothing inside the parallel regions can throw.
  const int workers = std::max(inner_threads, batch_threads);
  const size_t bp_size = static_cast<size_t>(std::min<int64_t>(NC, (n + NR - 1) / NR * NR) * std::min<int64_t>(KC, k));
  const size_t ap_size = static_cast<size_t>(MR * KC);
  const size_t per_gemm = bp_size + static_cast<size_t>(inner_threads) * ap_size;
  AlignedBuf work(per_gemm * static_cast<size_t>(batch_threads > 1 ? workers : 1));
#pragma omp parallel for schedule(static) num_threads(batch_threads) if (batch_threads > 1)
  for (int64_t t = 0; t < batch; ++t) {
    int w = 0;
#ifdef _OPENMP
    if (batch_threads > 1) w = omp_get_thread_num();
#endif
    T* bp = work.p + static_cast<size_t>(w) * per_gemm;
    gemm(m, n, k, A + aoff[static_cast<size_t>(t)], sam, sak, B + boff[static_cast<size_t>(t)], sbk, sbn, C + t * m * n,
         inner_threads, bp, bp + bp_size);
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

void operator_matmul__f16(const opgen::Tensor& a, const opgen::Tensor& b, opgen::Tensor& out) {
  const Float32Copy wide_a = widened(a);
  const Float32Copy wide_b = widened(b);
  Float32Result wide_out(out);
  float32_kernel(wide_a.tensor, wide_b.tensor, wide_out.tensor);
  wide_out.store(out);
}

}  // namespace opgen::kernels
