// torch.nn.functional.softmax, overload f32: softmax of a float32 tensor along `dim`.
//
// Each slice along `dim` is computed as PyTorch defines it: m = max(slice),
// out = exp(x - m) * (1 / sum(exp(x - m))). When `dim` is innermost (each slice one
// row of out) the row is computed in float32 with sixteen-lane GCC vector extensions:
// exp by a degree-6 polynomial after k*ln2 range reduction (~1 ulp), the sum in sixteen
// float lanes reduced in float, so results are within a few float32 ulps of the exact
// softmax (the spec's allowance grows with the slice length for the sum). When `dim` is
// not innermost, max, exp, sum and scaling run in double with eight-lane vectors (exp a
// degree-8 polynomial, ~3e-10 relative) and the exps are parked in `out` as float32 and
// scaled in place (two roundings): within about 1 ulp.
// Special slices follow PyTorch: any nan makes the whole slice nan; a slice that is
// all -inf is nan (exp(-inf - -inf) = exp(nan)); a +inf makes the slice nan
// (inf - inf); other -inf entries get probability exactly 0. `dim` may be negative;
// x may be strided (any strides, including 0 and negative), 0-d or empty; `out` is
// contiguous with x's shape. When `dim` is not the innermost dim, up to 256 slices are
// processed side by side, a row at a time, so that reads and writes stay contiguous.
#include "opgen_kernel.hpp"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <vector>

namespace opgen::kernels {

namespace {

// The vector types below never cross a library boundary; silence GCC's note that their
// calling convention depends on -m flags (it appears when -march lacks AVX/AVX-512).
#pragma GCC diagnostic ignored "-Wpsabi"

using T = float;

typedef double v8d __attribute__((vector_size(64)));
typedef uint64_t v8u __attribute__((vector_size(64)));
typedef int64_t v8i __attribute__((vector_size(64)));

inline v8d splat(double v) { return v8d{v, v, v, v, v, v, v, v}; }

// exp of eight lanes of x - max (<= 0 or nan), in double to ~3e-10 relative: more than
// enough for a result rounded to float32. x = k*ln2 + r with |r| <= ln2/2, exp(r) by
// its degree-8 Taylor polynomial, times 2**k from the exponent bits. Inputs are clamped
// at -200 (exp(-200) / sum is far below float32's smallest subnormal, so such entries,
// -inf included, still come out as exactly 0).
inline v8d exp8(v8d x) {
  const v8d kShift = splat(0x1.8p52);
  const v8d kLog2e = splat(0x1.71547652b82fep+0);
  const v8d kLn2Hi = splat(0x1.62e42fee00000p-1);
  const v8d kLn2Lo = splat(0x1.a39ef35793c76p-33);
  const v8d lo = splat(-200.0);
  x = x < lo ? lo : x;
  v8d kd = x * kLog2e + kShift;
  const v8u kbits = (v8u)kd;
  kd -= kShift;
  const v8d r = (x - kd * kLn2Hi) - kd * kLn2Lo;
  v8d p = splat(1.0 / 40320.0);
  p = p * r + 1.0 / 5040.0;
  p = p * r + 1.0 / 720.0;
  p = p * r + 1.0 / 120.0;
  p = p * r + 1.0 / 24.0;
  p = p * r + 1.0 / 6.0;
  p = p * r + 0.5;
  p = p * r + 1.0;
  p = p * r + 1.0;
  const v8d scale = (v8d)((kbits + 1023u) << 52);  // k in [-289, 1]
  return p * scale;
}

inline v8d load8(const double* p) {
  v8d v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

inline void store8(double* p, v8d v) { std::memcpy(p, &v, sizeof v); }

// The slice path (`dim` innermost in out, the common case) computes in float32, sixteen
// lanes at a time (one AVX-512 register; two AVX2 ones): a row of a few hundred floats
// stays in L1 across its three short passes, so the arithmetic is what costs, and float
// lanes do twice the work of double ones.
typedef float v16f __attribute__((vector_size(64)));
typedef int32_t v16i __attribute__((vector_size(64)));
typedef uint32_t v16u __attribute__((vector_size(64)));
constexpr int64_t kLanes = 16;

inline v16f splat16(float v) { return v16f{} + v; }

inline v16f load16(const float* p) {
  v16f v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

inline void store16(float* p, v16f v) { std::memcpy(p, &v, sizeof v); }

// The last k < 16 elements at p, the other lanes `pad`.
inline v16f load_tail(const float* p, int64_t k, float pad) {
  v16f v = splat16(pad);
  for (int64_t j = 0; j < k; ++j) v[j] = p[j];
  return v;
}

// exp(d) for d <= 0 or -inf, in float32 to about 1 ulp: d = k*ln2 + r with |r| <= ln2/2
// (ln2 split in two so k*ln2 is exact), exp(r) by its degree-6 Taylor polynomial (error
// below r^7/7! = 1.2e-7 relative), times
// 2**k built in the exponent bits. Where d < -87.3 the exact softmax is below float32's
// smallest normal (1.2e-38, under the spec's atol), so 0 is written: -inf entries too.
inline v16f exp16(v16f d) {
  const v16f lo = splat16(-87.3f);
  const v16i tiny = d < lo;
  d = d < lo ? lo : d;
  const v16f kShift = splat16(0x1.8p23f);
  v16f kd = d * splat16(0x1.715476p+0f) + kShift;  // round(d / ln2) in the low mantissa bits
  const v16u kbits = (v16u)kd;
  kd -= kShift;
  const v16f r = (d - kd * splat16(0x1.62e400p-1f)) - kd * splat16(0x1.7f7d1cp-20f);
  v16f p = splat16(1.0f / 720.0f);
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  const v16f scale = (v16f)((kbits + 127u) << 23);  // 2**k, k in [-126, 0]
  const v16f e = p * scale;
  return tiny ? splat16(0.0f) : e;
}

inline v16f vmax(v16f a, v16f b) { return a > b ? a : b; }

// Lane reductions in four shuffle steps: a row of 64 floats is only four vectors, so a
// lane-by-lane scalar loop here would cost as much as the row's arithmetic.
inline float hmax16(v16f v) {
  v = vmax(v, __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7));
  v = vmax(v, __builtin_shufflevector(v, v, 4, 5, 6, 7, 0, 1, 2, 3, 12, 13, 14, 15, 8, 9, 10, 11));
  v = vmax(v, __builtin_shufflevector(v, v, 2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13));
  v = vmax(v, __builtin_shufflevector(v, v, 1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14));
  return v[0];
}

inline float hsum16(v16f v) {
  v += __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7);
  v += __builtin_shufflevector(v, v, 4, 5, 6, 7, 0, 1, 2, 3, 12, 13, 14, 15, 8, 9, 10, 11);
  v += __builtin_shufflevector(v, v, 2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13);
  v += __builtin_shufflevector(v, v, 1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14);
  return v[0];
}

// Softmax of n >= 1 contiguous floats x into y: max (exact; nan lanes are passed over
// here), e = exp(x - max) parked in y while 16 float lanes sum it (each lane n/16 terms),
// then y *= 1/sum. A nan input makes its exp and so the sum nan, which is how nan slices
// are found without a test per element.
void softmax_row(const T* x, int64_t n, T* y) {
  const float ninf = -std::numeric_limits<float>::infinity();
  const int64_t whole = n - n % kLanes, rest = n - whole;
  v16f mv = splat16(ninf);
  for (int64_t i = 0; i < whole; i += kLanes) mv = vmax(load16(x + i), mv);
  if (rest) mv = vmax(load_tail(x + whole, rest, ninf), mv);
  const float m = hmax16(mv);
  const v16f mm = splat16(m);
  v16f sv = splat16(0.0f);
  for (int64_t i = 0; i < whole; i += kLanes) {
    const v16f e = exp16(load16(x + i) - mm);
    store16(y + i, e);
    sv += e;
  }
  if (rest) {
    const v16f e = exp16(load_tail(x + whole, rest, ninf) - mm);  // padding lanes: exp(-inf) = 0
    for (int64_t j = 0; j < rest; ++j) y[whole + j] = e[j];
    sv += e;
  }
  const float sum = hsum16(sv);
  if (std::isinf(m) || sum != sum) {
    // nan anywhere, all -inf (every x - m is nan), or +inf (inf - inf is nan):
    // PyTorch gives nan for the whole slice.
    for (int64_t j = 0; j < n; ++j) y[j] = std::numeric_limits<T>::quiet_NaN();
    return;
  }
  const v16f inv = splat16(1.0f / sum);
  for (int64_t i = 0; i < whole; i += kLanes) store16(y + i, load16(y + i) * inv);
  for (int64_t j = whole; j < n; ++j) y[j] *= inv[0];
}

// Softmax of `rows` contiguous rows of n floats, row r at x + r * xs, written to y + r * n:
// the same arithmetic as softmax_row, a block of rows per pass so that the rows' lane
// reductions (a chain of dependent shuffles each) overlap instead of running one by one.
void softmax_rows(const T* x, int64_t rows, int64_t xs, int64_t n, T* y) {
  constexpr int64_t kBlock = 4;
  const float ninf = -std::numeric_limits<float>::infinity();
  const int64_t whole = n - n % kLanes, rest = n - whole;
  for (int64_t r0 = 0; r0 < rows; r0 += kBlock) {
    const int64_t b = rows - r0 < kBlock ? rows - r0 : kBlock;
    float m[kBlock], inv[kBlock];
    for (int64_t r = 0; r < b; ++r) {
      const T* xr = x + (r0 + r) * xs;
      v16f mv = splat16(ninf);
      for (int64_t i = 0; i < whole; i += kLanes) mv = vmax(load16(xr + i), mv);
      if (rest) mv = vmax(load_tail(xr + whole, rest, ninf), mv);
      m[r] = hmax16(mv);
    }
    for (int64_t r = 0; r < b; ++r) {
      const T* xr = x + (r0 + r) * xs;
      T* yr = y + (r0 + r) * n;
      const v16f mm = splat16(m[r]);
      v16f sv = splat16(0.0f);
      for (int64_t i = 0; i < whole; i += kLanes) {
        const v16f e = exp16(load16(xr + i) - mm);
        store16(yr + i, e);
        sv += e;
      }
      if (rest) {
        const v16f e = exp16(load_tail(xr + whole, rest, ninf) - mm);
        for (int64_t j = 0; j < rest; ++j) yr[whole + j] = e[j];
        sv += e;
      }
      inv[r] = hsum16(sv);
    }
    for (int64_t r = 0; r < b; ++r) {
      T* yr = y + (r0 + r) * n;
      const float sum = inv[r];
      if (std::isinf(m[r]) || sum != sum) {
        for (int64_t j = 0; j < n; ++j) yr[j] = std::numeric_limits<T>::quiet_NaN();
        continue;
      }
      const v16f iv = splat16(1.0f / sum);
      for (int64_t i = 0; i < whole; i += kLanes) store16(yr + i, load16(yr + i) * iv);
      for (int64_t j = whole; j < n; ++j) yr[j] *= iv[0];
    }
  }
}

// Softmax of one slice: n >= 1 elements `s` apart in x, written contiguously to y.
// A strided slice is gathered into `buf` (room for n floats) first.
void softmax_slice(const T* x, int64_t s, int64_t n, T* y, T* buf) {
  if (s == 1) {
    softmax_row(x, n, y);
    return;
  }
  for (int64_t q = 0; q < n; ++q) buf[q] = x[q * s];
  softmax_row(buf, n, y);
}

constexpr int64_t kCols = 256;  // slices processed side by side when `dim` is not innermost

// Softmax of c <= kCols slices side by side: slice jj has its elements at
// x + xoff[jj] + q*sD (q < n). Its outputs go to y + jj + q*ystride, or, when `ebuf`
// is given (room for n * c rounded up to 8 doubles), to y + jj*n + q: then the
// exps are kept in ebuf and each slice is written out contiguously at the end.
// All passes over x run along rows of the c slices, eight at a time.
void softmax_columns(const T* x, const int64_t* xoff, int64_t sD, int64_t n, int64_t c, T* y, int64_t ystride,
                     double* ebuf, bool unit /* xoff[jj] == jj */) {
  const double ninf = -std::numeric_limits<double>::infinity();
  alignas(64) double m[kCols], s[kCols];
  alignas(64) int64_t bad[kCols];
  const int64_t cp = (c + 7) & ~int64_t(7);  // padded to whole vectors
  for (int64_t j = 0; j < cp; ++j) {
    m[j] = ninf;
    s[j] = 0.0;
    bad[j] = 0;
  }
  alignas(64) double row[kCols];
  auto load_row = [&](int64_t q) {
    const T* p = x + q * sD;
    if (unit) {
      for (int64_t j = 0; j < c; ++j) row[j] = static_cast<double>(p[j]);
    } else {
      for (int64_t j = 0; j < c; ++j) row[j] = static_cast<double>(p[xoff[j]]);
    }
    for (int64_t j = c; j < cp; ++j) row[j] = 0.0;
  };
  // Pass 1: max and nan per slice.
  for (int64_t q = 0; q < n; ++q) {
    load_row(q);
    for (int64_t j = 0; j < cp; j += 8) {
      const v8d v = load8(row + j);
      v8d mv = load8(m + j);
      v8i b;
      std::memcpy(&b, bad + j, sizeof b);
      b |= v != v;
      mv = v > mv ? v : mv;
      store8(m + j, mv);
      std::memcpy(bad + j, &b, sizeof b);
    }
  }
  for (int64_t j = 0; j < cp; j += 8) {
    const v8d mv = load8(m + j);
    v8i b;
    std::memcpy(&b, bad + j, sizeof b);
    b |= (mv == splat(ninf)) | (mv == splat(-ninf));
    std::memcpy(bad + j, &b, sizeof b);
  }
  // Pass 2: e = exp(x - m) into y (rounded to T for now), sums in double.
  alignas(64) double e_row[kCols];
  for (int64_t q = 0; q < n; ++q) {
    load_row(q);
    for (int64_t j = 0; j < cp; j += 8) {
      v8i b;
      std::memcpy(&b, bad + j, sizeof b);
      v8d d = load8(row + j) - load8(m + j);
      d = b ? splat(0.0) : d;  // keep nan out of the sums of slices that are nan anyway
      const v8d e = exp8(d);
      store8(s + j, load8(s + j) + e);
      store8(e_row + j, e);
    }
    if (ebuf) {
      std::memcpy(ebuf + q * cp, e_row, static_cast<size_t>(cp) * sizeof(double));
    } else {
      T* w = y + q * ystride;
      for (int64_t j = 0; j < c; ++j) w[j] = static_cast<T>(e_row[j]);
    }
  }
  // Pass 3: scale by 1/sum; nan slices become nan.
  alignas(64) double inv[kCols];
  for (int64_t j = 0; j < c; ++j) inv[j] = bad[j] ? std::numeric_limits<double>::quiet_NaN() : 1.0 / s[j];
  if (ebuf) {
    for (int64_t j = 0; j < c; ++j) {
      T* w = y + j * n;
      const double* e = ebuf + j;
      for (int64_t q = 0; q < n; ++q) w[q] = static_cast<T>(e[q * cp] * inv[j]);
    }
  } else {
    for (int64_t q = 0; q < n; ++q) {
      T* w = y + q * ystride;
      for (int64_t j = 0; j < c; ++j) w[j] = static_cast<T>(static_cast<double>(w[j]) * inv[j]);
    }
  }
}

}  // namespace

void torch_nn_functional_softmax__f32(const opgen::Tensor& x, int64_t dim, opgen::Tensor& out) {
  const int nd = x.ndim();
  const int rank = nd == 0 ? 1 : nd;  // PyTorch treats a 0-d tensor as one slice of one
  if (dim < -rank || dim >= rank) throw opgen::Error(opgen::ErrorKind::Value, "dim out of range");
  if (dim < 0) dim += rank;
  if (x.numel() == 0) return;
  const T* src = x.data<T>();
  T* dst = out.data<T>();
  if (nd == 0) {
    softmax_row(src, 1, dst);
    return;
  }
  const int sd = static_cast<int>(dim);
  const int64_t D = x.size(sd), sD = x.stride(sd);

  // Dims before and after `dim`, each with size-1 dims dropped and neighbours merged.
  int ond = 0, ind = 0;
  int64_t oshape[OPGEN_MAX_DIMS], ostride[OPGEN_MAX_DIMS], ishape[OPGEN_MAX_DIMS], istride[OPGEN_MAX_DIMS];
  int64_t outer_n = 1, inner_n = 1;
  for (int d = 0; d < nd; ++d) {
    if (d == sd || x.size(d) == 1) continue;
    const bool before = d < sd;
    int64_t* shp = before ? oshape : ishape;
    int64_t* str = before ? ostride : istride;
    int& k = before ? ond : ind;
    (before ? outer_n : inner_n) *= x.size(d);
    if (k > 0 && str[k - 1] == x.stride(d) * x.size(d)) {
      shp[k - 1] *= x.size(d);
      str[k - 1] = x.stride(d);
    } else {
      shp[k] = x.size(d);
      str[k] = x.stride(d);
      ++k;
    }
  }

  std::vector<T> buf(inner_n == 1 && sD != 1 ? static_cast<size_t>(D) : 0);
  int64_t xoff[kCols];

  if (inner_n == 1 && ond > 0 && sD != 1 && std::llabs(ostride[ond - 1]) < std::llabs(sD)) {
    // `dim` is innermost in out but not in x (e.g. a transposed x): take up to kCols
    // slices side by side along x's fastest outer dim, so that x is read in rows.
    const int64_t L = oshape[ond - 1], sL = ostride[ond - 1];
    // Slices per block: their exps (D doubles each) stay within about 256 KiB.
    // (A multiple of 8, since softmax_columns pads rows of ebuf to whole vectors.)
    int64_t cb = (32768 / D) & ~int64_t(7);
    cb = cb < 8 ? 8 : cb > kCols ? kCols : cb;
    std::vector<double> ebuf(static_cast<size_t>(D * cb));
    for (int64_t j = 0; j < kCols; ++j) xoff[j] = j * sL;
    int64_t oidx[OPGEN_MAX_DIMS] = {};
    int64_t ooff = 0;
    for (int64_t o = 0; o < outer_n / L; ++o) {
      for (int64_t j0 = 0; j0 < L; j0 += cb) {
        const int64_t c = L - j0 < cb ? L - j0 : cb;
        softmax_columns(src + ooff + j0 * sL, xoff, sD, D, c, dst + (o * L + j0) * D, 0, ebuf.data(), sL == 1);
      }
      for (int d = ond - 2; d >= 0; --d) {  // advance the outer multi-index, last dim excluded
        if (++oidx[d] < oshape[d]) {
          ooff += ostride[d];
          break;
        }
        ooff -= ostride[d] * (oshape[d] - 1);
        oidx[d] = 0;
      }
    }
    return;
  }

  if (inner_n == 1 && sD == 1 && ond == 1) {  // rows (the common case): a block of them per pass
    softmax_rows(src, outer_n, ostride[0], D, dst);
    return;
  }
  // Slices side by side read contiguously when the inner dims merged into one unit-stride dim.
  const bool unit = ind == 1 && istride[0] == 1;
  int64_t oidx[OPGEN_MAX_DIMS] = {};
  int64_t ooff = 0;
  for (int64_t o = 0; o < outer_n; ++o) {
    const T* sbase = src + ooff;
    T* dbase = dst + o * D * inner_n;
    if (inner_n == 1) {
      softmax_slice(sbase, sD, D, dbase, buf.data());
    } else {
      int64_t iidx[OPGEN_MAX_DIMS] = {};
      int64_t icur = 0;
      for (int64_t j0 = 0; j0 < inner_n; j0 += kCols) {
        const int64_t c = inner_n - j0 < kCols ? inner_n - j0 : kCols;
        const int64_t first = icur;
        for (int64_t jj = 0; jj < c; ++jj) {
          xoff[jj] = icur - first;
          for (int d = ind - 1; d >= 0; --d) {  // advance the inner multi-index
            if (++iidx[d] < ishape[d]) {
              icur += istride[d];
              break;
            }
            icur -= istride[d] * (ishape[d] - 1);
            iidx[d] = 0;
          }
        }
        softmax_columns(sbase + first, xoff, sD, D, c, dbase + j0, inner_n, nullptr, unit);
      }
    }
    for (int d = ond - 1; d >= 0; --d) {  // advance the outer multi-index
      if (++oidx[d] < oshape[d]) {
        ooff += ostride[d];
        break;
      }
      ooff -= ostride[d] * (oshape[d] - 1);
      oidx[d] = 0;
    }
  }
}

}  // namespace opgen::kernels
