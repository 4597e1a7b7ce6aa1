// torch.erf, overload f32: out[i] = erf(input[i]) elementwise for float32 tensors.
//
// Each element is widened to double and evaluated there, eight lanes at a time with GCC vector
// extensions, no branches, then rounded once to float32 (within about 0.5 float32 ulp + 2^-40 of
// the true value). erf is odd: the kernel works on a = |x| and puts x's sign bit back at the
// end. The rational approximations are FreeBSD msun's double erf (s_erf.c, Sun Microsystems
// 1993, each within 2^-57 of its target), all evaluated and the right one selected per lane:
//   a < 0.84375:         erf = a + a P(a^2)/Q(a^2)      (tiny a and subnormals: a * 1.128..)
//   0.84375 <= a < 1.25: erf = erx + P(a-1)/Q(a-1)      (erx = erf(1) rounded to 24 bits)
//   1.25 <= a < 6:       erf = 1 - exp(-a^2 - 0.5625 + R(1/a^2)/S(1/a^2)) / a, with R/S's
//                        coefficients chosen per lane for [1.25, 1/0.35) or [1/0.35, 6) (the
//                        second set padded with zeros); exp by k ln2 + r, |r| <= ln2/2, e^r by
//                        its Taylor series to r^12 and 2^k from k's bits;
//   a >= 6 (and inf):    erf = 1 (float32 erf rounds to 1 from 3.92 on).
// erf(nan) = nan (selected at the end), erf(+-inf) = +-1, erf(-0.0) = -0.0.
// `input` may be strided (any strides, including 0 and negative), 0-d or empty; `out` is
// contiguous with input's shape. Dims of size 1 are dropped and mergeable neighbours merged.
#include "opgen_kernel.hpp"

#include <cstdint>
#include <cstring>

namespace opgen::kernels {

namespace {

// The vector types below never cross a library boundary; silence GCC's note that their
// calling convention depends on -m flags (it appears when -march lacks AVX/AVX-512).
#pragma GCC diagnostic ignored "-Wpsabi"

typedef float v8f __attribute__((vector_size(32)));
typedef double v8d __attribute__((vector_size(64)));
typedef int64_t v8l __attribute__((vector_size(64)));
typedef uint64_t v8u __attribute__((vector_size(64)));

inline v8d splat(double v) { return v8d{} + v; }

constexpr double kInvLn2 = 0x1.71547652b82fep+0;
constexpr double kShift = 0x1.8p52;
constexpr uint64_t kShiftBits = 0x4338000000000000ull;
constexpr double kLn2Hi = 0x1.62e42feep-1;  // 32 significant bits: k ln2_hi is exact for |k| < 2^21
constexpr double kLn2Lo = 0x1.a39ef35793c76p-33;
// 1/n! for n = 0..12
constexpr double kF[13] = {1.0, 1.0, 0x1p-1, 0x1.5555555555555p-3, 0x1.5555555555555p-5, 0x1.1111111111111p-7,
                           0x1.6c16c16c16c17p-10, 0x1.a01a01a01a01ap-13, 0x1.a01a01a01a01ap-16,
                           0x1.71de3a556c734p-19, 0x1.27e4fb7789f5cp-22, 0x1.ae64567f544e4p-26,
                           0x1.1eed8eff8d898p-29};
// msun's coefficients
constexpr double kErx = 8.45062911510467529297e-01;
constexpr double kPP[5] = {1.28379167095512558561e-01, -3.25042107247001499370e-01, -2.84817495755985104766e-02, -5.77027029648944159157e-03, -2.37630166566501626084e-05};
constexpr double kQQ[6] = {1.0, 3.97917223959155352819e-01, 6.50222499887672944485e-02, 5.08130628187576562776e-03, 1.32494738004321644526e-04, -3.96022827877536812320e-06};
constexpr double kPA[7] = {-2.36211856075265944077e-03, 4.14856118683748331666e-01, -3.72207876035701323847e-01, 3.18346619901161753674e-01, -1.10894694282396677476e-01, 3.54783043256182359371e-02, -2.16637559486879084300e-03};
constexpr double kQA[7] = {1.0, 1.06420880400844228286e-01, 5.40397917702171048937e-01, 7.18286544141962662868e-02, 1.26171219808761642112e-01, 1.36370839120290507362e-02, 1.19844998467991074170e-02};
constexpr double kRA[8] = {-9.86494403484714822705e-03, -6.93858572707181764372e-01, -1.05586262253232909814e+01, -6.23753324503260060396e+01, -1.62396669462573470355e+02, -1.84605092906711035994e+02, -8.12874355063065934246e+01, -9.81432934416914548592e+00};
constexpr double kSA[9] = {1.0, 1.96512716674392571292e+01, 1.37657754143519042600e+02, 4.34565877475229228821e+02, 6.45387271733267880336e+02, 4.29008140027567833386e+02, 1.08635005541779435134e+02, 6.57024977031928170135e+00, -6.04244152148580987438e-02};
constexpr double kRB[8] = {-9.86494292470009928597e-03, -7.99283237680523006574e-01, -1.77579549177547519889e+01, -1.60636384855821916062e+02, -6.37566443368389627722e+02, -1.02509513161107724954e+03, -4.83519191608651397019e+02, 0.0};
constexpr double kSB[9] = {1.0, 3.03380607434824582924e+01, 3.25792512996573918826e+02, 1.53672958608443695994e+03, 3.19985821950859553908e+03, 2.55305040643316442583e+03, 4.74528541206955367215e+02, -2.24409524465858183362e+01, 0.0};

template <int N>
inline v8d horner(const double (&c)[N], v8d t) {
  v8d p = splat(c[N - 1]);
  for (int n = N - 2; n >= 0; --n) p = p * t + c[n];
  return p;
}

inline v8f op8(v8f xf) {
  const v8d x = __builtin_convertvector(xf, v8d);
  const v8u sign = (v8u)x & 0x8000000000000000ull;
  const v8d a = (v8d)((v8u)x & 0x7fffffffffffffffull);
  // [0, 0.84375)
  const v8d z = a * a;
  const v8d ra = a + a * (horner(kPP, z) / horner(kQQ, z));
  // [0.84375, 1.25)
  const v8d s = a - 1.0;
  const v8d rb = kErx + horner(kPA, s) / horner(kQA, s);
  // [1.25, 6)
  v8d ac = a < 1.25 ? splat(1.25) : a;
  ac = ac > 6.0 ? splat(6.0) : ac;  // a nan fails both comparisons; its lane is replaced at the end
  const v8d w = 1.0 / (ac * ac);
  const auto lo = ac < 1.0 / 0.35;
  v8d rr = splat(0.0), ss = splat(0.0);
  for (int n = 7; n >= 0; --n) rr = rr * w + (lo ? splat(kRA[n]) : splat(kRB[n]));
  for (int n = 8; n >= 0; --n) ss = ss * w + (lo ? splat(kSA[n]) : splat(kSB[n]));
  const v8d t = -(ac * ac) - 0.5625 + rr / ss;
  const v8d kd0 = t * kInvLn2 + kShift;
  const v8u k = (v8u)kd0 - kShiftBits;  // k, two's complement
  const v8d kd = kd0 - kShift;
  v8d r = t - kd * kLn2Hi;
  r = r - kd * kLn2Lo;
  const v8d e = horner(kF, r) * (v8d)((k + 1023) << 52);
  const v8d rc = 1.0 - e / ac;
  v8d v = a < 6.0 ? rc : splat(1.0);
  v = a < 1.25 ? rb : v;
  v = a < 0.84375 ? ra : v;
  v = (v8d)((v8u)v | sign);
  v = x == x ? v : x;  // nan
  return __builtin_convertvector(v, v8f);
}

inline void op_block(const float* in, float* y) {
  v8f v;
  std::memcpy(&v, in, sizeof v);
  const v8f o = op8(v);
  std::memcpy(y, &o, sizeof o);
}

// n contiguous outputs from inputs `stride` elements apart (any stride: 0, negative).
void op_run(const float* x, int64_t stride, float* y, int64_t n) {
  int64_t i = 0;
  if (stride == 1) {
    for (; i + 8 <= n; i += 8) op_block(x + i, y + i);
  } else {
    for (; i + 8 <= n; i += 8) {
      const float* s = x + i * stride;
      float buf[8] = {s[0], s[stride], s[2 * stride], s[3 * stride], s[4 * stride], s[5 * stride], s[6 * stride], s[7 * stride]};
      op_block(buf, y + i);
    }
  }
  if (i < n) {  // the tail, through a buffer padded with harmless lanes
    float buf[8] = {0, 0, 0, 0, 0, 0, 0, 0}, res[8];
    for (int64_t j = i; j < n; ++j) buf[j - i] = x[j * stride];
    op_block(buf, res);
    for (int64_t j = i; j < n; ++j) y[j] = res[j - i];
  }
}

}  // namespace

void torch_erf__f32(const opgen::Tensor& x, opgen::Tensor& out) {
  const int64_t total = x.numel();
  if (total == 0) return;
  const float* src = x.data<float>();
  float* dst = out.data<float>();
  int nd = 0;
  int64_t shape[OPGEN_MAX_DIMS], stride[OPGEN_MAX_DIMS];
  for (int d = 0; d < x.ndim(); ++d) {
    if (x.size(d) == 1) continue;
    if (nd > 0 && stride[nd - 1] == x.stride(d) * x.size(d)) {
      shape[nd - 1] *= x.size(d);
      stride[nd - 1] = x.stride(d);
    } else {
      shape[nd] = x.size(d);
      stride[nd] = x.stride(d);
      ++nd;
    }
  }
  if (nd == 0) {  // 0-d, or every dim of size 1
    op_run(src, 1, dst, 1);
    return;
  }
  const int64_t run = shape[nd - 1], run_stride = stride[nd - 1];
  const int64_t runs = total / run;
  int64_t idx[OPGEN_MAX_DIMS] = {};
  int64_t off = 0;
  for (int64_t r = 0; r < runs; ++r) {
    op_run(src + off, run_stride, dst + r * run, run);
    for (int d = nd - 2; d >= 0; --d) {
      if (++idx[d] < shape[d]) {
        off += stride[d];
        break;
      }
      off -= stride[d] * (shape[d] - 1);
      idx[d] = 0;
    }
  }
}

}  // namespace opgen::kernels
