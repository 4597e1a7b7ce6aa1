// torch.addmm, overload f64: out = beta * input + alpha * (mat1 @ mat2), float64, BLAS rules.
//
// mat1 is (m, k), mat2 (k, n), input and out (m, n), out contiguous; every operand may have
// any strides (mat2 as a transposed view x @ W.T, sliced, reversed, stride 0 for a broadcast
// bias). beta == 0 never reads input (nan/inf there do not propagate); alpha == 0 (or k == 0)
// never reads mat1 or mat2: out = beta * input (zeros when beta is 0 too). alpha and beta are
// rounded to float64 first, as torch passes them to gemm.
//
// The GotoBLAS/BLIS-style GEMM of the shipped linear kernel (mat2 (k, n) is linear's W^T, W
// (n, k) with mat2's strides swapped):
//   - mat2 is packed, KC rows (of k) by NC columns at a time, into NR-wide column panels, and
//     mat1 into MR-tall row panels (zero-padded to whole panels), so the inner kernel reads
//     both contiguously whatever the strides;
//   - the MR x NR micro-kernel keeps its whole output tile in vector registers (GCC vector
//     extensions sized to the ISA) with one fused multiply-add per broadcast element of mat1
//     and vector of mat2; partial sums of the earlier KC blocks are kept in out;
//   - at the last KC block the epilogue writes alpha * sum + beta * input (input read through
//     its strides: vector loads where its rows are contiguous, a broadcast where stride 0);
//   - two or more OpenMP threads split the rows (or, for few rows, the columns), each packing
//     what it uses, so no thread waits for another inside the product.
// Every product is summed (zeros are not skipped), so nan and inf in mat1 and mat2 propagate
// as in the plain loop when alpha != 0.
#include "opgen_kernel.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>
#ifdef _OPENMP
#include <omp.h>
#endif

namespace opgen::kernels {

namespace {

#pragma GCC diagnostic ignored "-Wpsabi"  // the vector types never cross a library boundary

using T = double;
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

// Blocking as in the linear kernel (tuned on a 2-core Zen 4): an MR x KC panel of mat1 and a
// KC x NR panel of mat2 share L1, the KC x NC block of mat2 stays in L2.
constexpr int64_t KC = 128;   // depth of a packed block (KC x NR doubles: 16 KiB with AVX-512)
constexpr int64_t NC = 1024;
constexpr double kThreadFlops = 2.0e6;  // below this one thread is faster

inline vec loadv(const T* p) {
  vec v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void storev(T* p, vec v) { std::memcpy(p, &v, sizeof v); }

// The epilogue of the last KC block: what to scale by and the input to add.
struct Epilogue {
  bool last;       // this is the last block: scale by alpha, add beta * input
  T alpha, beta;
  const T* in;     // input at the tile's origin, or null when beta == 0
  int64_t si, sj;  // input's strides
};

// acc = A (MR x kc, packed p-major) * B (kc x NR, packed p-major); for the top-left mr x nr of
// the tile at C (rows ldc apart): s = acc, or C + acc when `accumulate`; then C = s, or at the
// last block C = alpha * s (+ beta * input).
void micro_kernel(int64_t kc, const T* __restrict A, const T* __restrict B, T* __restrict C, int64_t ldc,
                  bool accumulate, const Epilogue& e, int mr, int nr) {
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
        vec r = accumulate ? loadv(c) + acc[i][v] : acc[i][v];
        if (e.last) {
          r *= e.alpha;
          if (e.in) {
            const T* in = e.in + i * e.si + v * VL * e.sj;
            vec x;
            if (e.sj == 1) {
              x = loadv(in);
            } else if (e.sj == 0) {
              x = vec{} + in[0];
            } else {
              for (int l = 0; l < VL; ++l) x[l] = in[l * e.sj];
            }
            r += e.beta * x;
          }
        }
        storev(c, r);
      }
    return;
  }
  alignas(64) T tile[MR][NR];
  for (int i = 0; i < MR; ++i)
    for (int v = 0; v < NV; ++v) storev(&tile[i][v * VL], acc[i][v]);
  for (int i = 0; i < mr; ++i) {
    T* c = C + i * ldc;
    for (int j = 0; j < nr; ++j) {
      T r = accumulate ? c[j] + tile[i][j] : tile[i][j];
      if (e.last) {
        r *= e.alpha;
        if (e.in) r += e.beta * e.in[i * e.si + j * e.sj];
      }
      c[j] = r;
    }
  }
}

// Rows [i0, i0+mr) (mr <= MR) x depth [p0, p0+kc) of mat1 into one MR-row panel, zero rows past mr.
void pack_a(const T* X, int64_t sm, int64_t sk, int64_t i0, int mr, int64_t p0, int64_t kc, T* dst) {
  for (int r = 0; r < mr; ++r) {
    const T* row = X + (i0 + r) * sm + p0 * sk;
    if (sk == 1) {
      for (int64_t p = 0; p < kc; ++p) dst[p * MR + r] = row[p];
    } else {
      for (int64_t p = 0; p < kc; ++p) dst[p * MR + r] = row[p * sk];
    }
  }
  for (int r = mr; r < MR; ++r)
    for (int64_t p = 0; p < kc; ++p) dst[p * MR + r] = T(0);
}

// Columns [j0, j0+nr) (nr <= NR) x depth [p0, p0+kc) of mat2 (strides swk along k, swn along n)
// into one NR-wide panel: dst[p][c] = mat2[p0 + p][j0 + c], zero columns past nr.
void pack_b(const T* W, int64_t swn, int64_t swk, int64_t j0, int nr, int64_t p0, int64_t kc, T* dst) {
  if (nr < NR)
    for (int64_t p = 0; p < kc; ++p)
      for (int c = nr; c < NR; ++c) dst[p * NR + c] = T(0);
  if (swn == 1 && nr == NR) {  // mat2's rows contiguous: copy whole rows
    for (int64_t p = 0; p < kc; ++p) std::memcpy(dst + p * NR, W + j0 + (p0 + p) * swk, NR * sizeof(T));
    return;
  }
  if (swn == 1) {
    for (int64_t p = 0; p < kc; ++p)
      for (int c = 0; c < nr; ++c) dst[p * NR + c] = W[j0 + c + (p0 + p) * swk];
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

// An uninitialised, 64-byte aligned scratch array.
struct AlignedBuf {
  std::vector<T> raw;
  T* p;
  explicit AlignedBuf(size_t n) : raw(n + 64 / sizeof(T)) {
    const uintptr_t u = reinterpret_cast<uintptr_t>(raw.data());
    p = raw.data() + ((64 - u % 64) % 64) / sizeof(T);
  }
};

// The result for rows [r0, r1) and columns [c0, c1) of out (ldc = n), by one thread with
// private packing buffers bp (KC x NC) and ap (MR x KC).
void gemm_part(const T* X, int64_t sm, int64_t sk, const T* W, int64_t swn, int64_t swk, T alpha, T beta,
               const T* in, int64_t si, int64_t sj, T* C, int64_t n, int64_t k, int64_t r0, int64_t r1, int64_t c0,
               int64_t c1, T* bp, T* ap) {
  for (int64_t j0 = c0; j0 < c1; j0 += NC) {
    const int64_t nc = std::min<int64_t>(NC, c1 - j0);
    for (int64_t p0 = 0; p0 < k; p0 += KC) {
      const int64_t kc = std::min<int64_t>(KC, k - p0);
      const bool last = p0 + kc == k;
      for (int64_t jj = 0; jj < nc; jj += NR)
        pack_b(W, swn, swk, j0 + jj, static_cast<int>(std::min<int64_t>(NR, nc - jj)), p0, kc, bp + jj * kc);
      for (int64_t i = r0; i < r1; i += MR) {
        const int mr = static_cast<int>(std::min<int64_t>(MR, r1 - i));
        pack_a(X, sm, sk, i, mr, p0, kc, ap);
        for (int64_t jj = 0; jj < nc; jj += NR) {
          const int nr = static_cast<int>(std::min<int64_t>(NR, nc - jj));
          const Epilogue e{last, alpha, beta, in ? in + i * si + (j0 + jj) * sj : nullptr, si, sj};
          micro_kernel(kc, ap, bp + jj * kc, C + i * n + j0 + jj, n, p0 > 0, e, mr, nr);
        }
      }
    }
  }
}

void addmm(const opgen::Tensor& input, const opgen::Tensor& mat1, const opgen::Tensor& mat2, double beta_d,
           double alpha_d, opgen::Tensor& out) {
  if (out.ndim() != 2 || input.ndim() != 2 || mat1.ndim() != 2 || mat2.ndim() != 2)
    throw opgen::Error(opgen::ErrorKind::Value, "addmm expects 2-d input (m, n), mat1 (m, k) and mat2 (k, n)");
  const int64_t m = out.size(0), n = out.size(1), k = mat1.size(1);
  if (m == 0 || n == 0) return;
  const T alpha = static_cast<T>(alpha_d), beta = static_cast<T>(beta_d);
  T* C = out.data<T>();
  const T* in = beta != T(0) ? input.data<T>() : nullptr;
  const int64_t si = input.stride(0), sj = input.stride(1);
  if (alpha == T(0) || k == 0) {  // out = beta * input; the product is never read
    for (int64_t i = 0; i < m; ++i) {
      T* c = C + i * n;
      if (!in) {
        std::memset(c, 0, static_cast<size_t>(n) * sizeof(T));
      } else {
        const T* row = in + i * si;
        for (int64_t j = 0; j < n; ++j) c[j] = beta * row[j * sj];
      }
    }
    return;
  }
  int threads = 1;
#ifdef _OPENMP
  threads = omp_get_max_threads();
#endif
  if (2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) < kThreadFlops) threads = 1;
  const bool by_rows = m >= static_cast<int64_t>(threads) * 2 * MR;
  const int64_t panels = (n + NR - 1) / NR;
  if (!by_rows) threads = static_cast<int>(std::min<int64_t>(threads, panels));
  const size_t bp_size = static_cast<size_t>(std::min<int64_t>(KC, k) * std::min<int64_t>(NC, panels * NR));
  const size_t ap_size = static_cast<size_t>((MR * std::min<int64_t>(KC, k) + 15) / 16 * 16);
  const T* X = mat1.data<T>();
  const T* W = mat2.data<T>();
  const int64_t sm = mat1.stride(0), sk = mat1.stride(1), swk = mat2.stride(0), swn = mat2.stride(1);
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
      gemm_part(X, sm, sk, W, swn, swk, alpha, beta, in, si, sj, C, n, k, r0, r1, c0, c1, bp, bp + bp_size);
  }
}

}  // namespace

void torch_addmm__f64(const opgen::Tensor& input, const opgen::Tensor& mat1, const opgen::Tensor& mat2, double beta,
                      double alpha, opgen::Tensor& out) {
  addmm(input, mat1, mat2, beta, alpha, out);
}

}  // namespace opgen::kernels
