// numpy.tanh, overload f32: out[i] = tanh(x[i]) elementwise for float32 tensors.
//
// Piecewise polynomials, sixteen lanes at a time in float32 (one AVX-512 register), no
// branches and no division: tanh is odd, so the kernel works on a = |x| and puts x's sign
// bit back at the end. a is clamped to 9 (tanh(a) rounds to 1 in float32 from 9.01 on; the
// clamp also maps inf to 1, and a nan stays nan through it). [0, 9] is cut into 30 pieces:
// piece 0 is [0, 1/16), and pieces 1..29 split each octave [2^e, 2^(e+1)), e = -4..3, into
// quarters (the last one, [8, 10), is only used up to 9). The piece index comes straight from
// a's bits, (bits >> 21) - 491 clamped at 0 (exponent and the top two mantissa bits). On each
// piece tanh(start + y) is a degree-5 polynomial in y = a - start, fitted (near-minimax, in
// 40-digit arithmetic) to tanh's relative error: at most 0.09 float32 eps on every piece. Its
// six coefficients and the piece start are fetched with register permutes
// (vpermt2ps from 32-entry tables). Piece 0 is the odd polynomial a - a^3/3 + c5 a^5 with
// coefficients 0 and 1 exact, so tiny |x| (subnormals included) gives x itself.
//
// Measured on every float32 in [1e-30, 10] and its negative (exhaustively): at most 1.11 ulp
// from tanh evaluated in float64, and within 0.27 of the spec's tolerance against NumPy.
// tanh(nan) = nan, tanh(+-inf) = +-1, tanh(-0.0) = -0.0. `x` may be strided (any strides,
// including 0 and negative), 0-d or empty; `out` is contiguous with x's shape.
#include "opgen_kernel.hpp"

#include <cstdint>
#include <cstring>
#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace opgen::kernels {

namespace {

// The vector types below never cross a library boundary; silence GCC's note that their
// calling convention depends on -m flags (it appears when -march lacks AVX/AVX-512).
#pragma GCC diagnostic ignored "-Wpsabi"

typedef float v16f __attribute__((vector_size(64)));
typedef uint32_t v16u __attribute__((vector_size(64)));
typedef int32_t v16i __attribute__((vector_size(64)));

// kStart[j] is where piece j starts; tanh(kStart[j] + y) ~ sum_k kCk[j] y^k on the piece.
// Entries 30 and 31 are never selected (zero).
static const float kStart[32] = {
    0x0p+0f, 0x1p-4f, 0x1.4p-4f, 0x1.8p-4f,
    0x1.cp-4f, 0x1p-3f, 0x1.4p-3f, 0x1.8p-3f,
    0x1.cp-3f, 0x1p-2f, 0x1.4p-2f, 0x1.8p-2f,
    0x1.cp-2f, 0x1p-1f, 0x1.4p-1f, 0x1.8p-1f,
    0x1.cp-1f, 0x1p+0f, 0x1.4p+0f, 0x1.8p+0f,
    0x1.cp+0f, 0x1p+1f, 0x1.4p+1f, 0x1.8p+1f,
    0x1.cp+1f, 0x1p+2f, 0x1.4p+2f, 0x1.8p+2f,
    0x1.cp+2f, 0x1p+3f, 0x0p+0f, 0x0p+0f,
};
static const float kC0[32] = {
    0x0p+0f, 0x1.ff559ap-5f, 0x1.3f59bep-4f, 0x1.7ee102p-4f,
    0x1.be38d8p-4f, 0x1.fd5992p-4f, 0x1.3d6bc8p-3f, 0x1.7b8ffap-3f,
    0x1.b8fd04p-3f, 0x1.f597eap-3f, 0x1.35f98ap-2f, 0x1.6ef53ep-2f,
    0x1.a5729ep-2f, 0x1.d9353ep-2f, 0x1.1bf47ep-1f, 0x1.45323ep-1f,
    0x1.68665p-1f, 0x1.85efacp-1f, 0x1.b2523cp-1f, 0x1.cf6f98p-1f,
    0x1.e1fbfap-1f, 0x1.ed9506p-1f, 0x1.f92582p-1f, 0x1.fd77d2p-1f,
    0x1.ff112cp-1f, 0x1.ffa818p-1f, 0x1.fff41ap-1f, 0x1.fffe64p-1f,
    0x1.ffffc8p-1f, 0x1.fffff8p-1f, 0x0p+0f, 0x0p+0f,
};
static const float kC1[32] = {
    0x1p+0f, 0x1.fe0154p-1f, 0x1.fce33ep-1f, 0x1.fb86b8p-1f,
    0x1.f9ec6cp-1f, 0x1.f81526p-1f, 0x1.f3b36p-1f, 0x1.ee69e4p-1f,
    0x1.e842cap-1f, 0x1.e149ap-1f, 0x1.d11574p-1f, 0x1.be3fbap-1f,
    0x1.a945bap-1f, 0x1.92a946p-1f, 0x1.6284c2p-1f, 0x1.3173b2p-1f,
    0x1.02500ap-1f, 0x1.ae0deap-2f, 0x1.1f252cp-2f, 0x1.721666p-3f,
    0x1.d22ca8p-4f, 0x1.2161f4p-4f, 0x1.b3ad56p-6f, 0x1.434806p-7f,
    0x1.dd3436p-9f, 0x1.5f4d92p-10f, 0x1.7c918p-13f, 0x1.9c1114p-16f,
    0x1.be245ap-19f, 0x1.e307dep-22f, 0x0p+0f, 0x0p+0f,
};
static const float kC2[32] = {
    0x0p+0f, -0x1.fd5798p-5f, -0x1.3d68c6p-4f, -0x1.7b888ep-4f,
    -0x1.b8ed1ep-4f, -0x1.f57932p-4f, -0x1.35cbbcp-3f, -0x1.6e8666p-3f,
    -0x1.a48aacp-3f, -0x1.d7812p-3f, -0x1.199202p-2f, -0x1.3fd534p-2f,
    -0x1.5e0ef2p-2f, -0x1.742648p-2f, -0x1.893b06p-2f, -0x1.8403fep-2f,
    -0x1.6ba83ap-2f, -0x1.478e64p-2f, -0x1.e73284p-3f, -0x1.4eff8p-3f,
    -0x1.b6d9ap-4f, -0x1.16e76p-4f, -0x1.ad9e66p-6f, -0x1.417a42p-7f,
    -0x1.dc02c8p-9f, -0x1.5c96e2p-10f, -0x1.79d3d2p-13f, -0x1.9920c6p-16f,
    -0x1.baf6fp-19f, -0x1.df975ap-22f, 0x0p+0f, 0x0p+0f,
};
static const float kC3[32] = {
    -0x1.55553ep-2f, -0x1.500792p-2f, -0x1.4d1264p-2f, -0x1.497b52p-2f,
    -0x1.45461ep-2f, -0x1.4077b8p-2f, -0x1.352106p-2f, -0x1.27a5d4p-2f,
    -0x1.183be8p-2f, -0x1.0725fep-2f, -0x1.c1b464p-3f, -0x1.6dd39ep-3f,
    -0x1.16ee82p-3f, -0x1.82632ap-4f, -0x1.24e5e4p-6f, 0x1.56aa64p-5f,
    0x1.4f4f6ap-4f, 0x1.aa6dd6p-4f, 0x1.bcef6p-4f, 0x1.683418p-4f,
    0x1.01d1fep-4f, 0x1.57c348p-5f, 0x1.14cf9ep-6f, 0x1.a4e944p-8f,
    0x1.396e7ep-9f, 0x1.bb1b64p-11f, 0x1.e0ab7ep-14f, 0x1.044636p-16f,
    0x1.19cde6p-19f, 0x1.311b2p-22f, 0x0p+0f, 0x0p+0f,
};
static const float kC4[32] = {
    0x0p+0f, 0x1.51be56p-5f, 0x1.a38e7cp-5f, 0x1.f3a676p-5f,
    0x1.20da8ep-4f, 0x1.472ee4p-4f, 0x1.8ee8f2p-4f, 0x1.d0583ap-4f,
    0x1.054f2ep-3f, 0x1.1ff062p-3f, 0x1.45bde4p-3f, 0x1.5a16f8p-3f,
    0x1.5db294p-3f, 0x1.5597fp-3f, 0x1.1bfca8p-3f, 0x1.977936p-4f,
    0x1.eb19a6p-5f, 0x1.857108p-6f, -0x1.ef90d2p-7f, -0x1.a9b402p-6f,
    -0x1.84a694p-6f, -0x1.1c6f38p-6f, -0x1.ee9a9p-8f, -0x1.81dc64p-9f,
    -0x1.21fbfap-10f, -0x1.69091cp-12f, -0x1.880a0cp-15f, -0x1.a89f7ap-18f,
    -0x1.cbc1acp-21f, -0x1.f1c61cp-24f, 0x0p+0f, 0x0p+0f,
};
static const float kC5[32] = {
    0x1.1077bep-3f, 0x1.05bd34p-3f, 0x1.003d76p-3f, 0x1.f3744ap-4f,
    0x1.e47dbap-4f, 0x1.cab604p-4f, 0x1.a2868cp-4f, 0x1.74c97ep-4f,
    0x1.42ad32p-4f, 0x1.e4bdcp-5f, 0x1.068f24p-5f, 0x1.897f8ap-8f,
    -0x1.18307ap-6f, -0x1.630d64p-5f, -0x1.f7f4ccp-5f, -0x1.00ac68p-4f,
    -0x1.b2c94p-5f, -0x1.070c6ap-5f, -0x1.3916aap-7f, 0x1.6963d4p-10f,
    0x1.2d321ap-8f, 0x1.0494c2p-8f, 0x1.f67644p-10f, 0x1.947e22p-11f,
    0x1.334c92p-12f, 0x1.202a0ep-14f, 0x1.3936aep-17f, 0x1.534a4cp-20f,
    0x1.6f5eacp-23f, 0x1.8dbfa6p-26f, 0x0p+0f, 0x0p+0f,
};

struct Tables {
#if defined(__AVX512F__)
  __m512 lo[7], hi[7];  // the 32-entry tables as register pairs: start, c0 .. c5
#endif
};

inline Tables load_tables() {
  Tables t;
#if defined(__AVX512F__)
  const float* src[7] = {kStart, kC0, kC1, kC2, kC3, kC4, kC5};
  for (int k = 0; k < 7; ++k) {
    std::memcpy(&t.lo[k], src[k], 64);
    std::memcpy(&t.hi[k], src[k] + 16, 64);
  }
#endif
  return t;
}

inline v16f tanh16(v16f x, const Tables& t) {
  const v16u sign = (v16u)x & 0x80000000u;
  v16f a = (v16f)((v16u)x & 0x7fffffffu);
  a = a > 9.0f ? v16f{} + 9.0f : a;  // a nan fails the comparison and stays nan
  v16i j = ((v16i)a >> 21) - 491;     // exponent and top two mantissa bits
  j = j < 0 ? v16i{} : j;             // everything below 1/16 is piece 0
#if defined(__AVX512F__)
  const __m512i ix = (__m512i)j;
  auto look = [&](int k) { return (v16f)_mm512_permutex2var_ps(t.lo[k], ix, t.hi[k]); };
  const v16f y = a - look(0);
  v16f p = look(6);
  p = p * y + look(5);
  p = p * y + look(4);
  p = p * y + look(3);
  p = p * y + look(2);
  p = p * y + look(1);
#else
  (void)t;
  v16f p;
  for (int l = 0; l < 16; ++l) {
    const int i = j[l] & 31;
    const float y = a[l] - kStart[i];
    float q = kC5[i];
    q = q * y + kC4[i];
    q = q * y + kC3[i];
    q = q * y + kC2[i];
    q = q * y + kC1[i];
    p[l] = q * y + kC0[i];
  }
#endif
  return (v16f)((v16u)p | sign);
}

// n contiguous outputs from inputs `stride` elements apart (any stride: 0, negative).
void tanh_run(const float* x, int64_t stride, float* y, int64_t n, const Tables& t) {
  int64_t i = 0;
  if (stride == 1) {
    for (; i + 16 <= n; i += 16) {
      v16f v;
      std::memcpy(&v, x + i, sizeof v);
      v = tanh16(v, t);
      std::memcpy(y + i, &v, sizeof v);
    }
  } else {
    for (; i + 16 <= n; i += 16) {
      const float* s = x + i * stride;
      v16f v = {s[0], s[1 * stride], s[2 * stride], s[3 * stride], s[4 * stride], s[5 * stride], s[6 * stride], s[7 * stride], s[8 * stride], s[9 * stride], s[10 * stride], s[11 * stride], s[12 * stride], s[13 * stride], s[14 * stride], s[15 * stride]};
      v = tanh16(v, t);
      std::memcpy(y + i, &v, sizeof v);
    }
  }
  if (i < n) {  // the tail, through a buffer padded with harmless lanes
    float buf[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    for (int64_t j = i; j < n; ++j) buf[j - i] = x[j * stride];
    v16f v;
    std::memcpy(&v, buf, sizeof v);
    v = tanh16(v, t);
    std::memcpy(buf, &v, sizeof v);
    for (int64_t j = i; j < n; ++j) y[j] = buf[j - i];
  }
}

}  // namespace

void numpy_tanh__f32(const opgen::Tensor& x, opgen::Tensor& out) {
  const int64_t total = x.numel();
  if (total == 0) return;
  const Tables t = load_tables();
  const float* src = x.data<float>();
  float* dst = out.data<float>();
  // Row-major dims of x with size-1 dims dropped and mergeable neighbours merged, so the
  // innermost run is as long as the strides allow. out is contiguous throughout.
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
    tanh_run(src, 1, dst, 1, t);
    return;
  }
  const int64_t run = shape[nd - 1], run_stride = stride[nd - 1];
  const int64_t runs = total / run;
  int64_t idx[OPGEN_MAX_DIMS] = {};
  int64_t off = 0;
  for (int64_t r = 0; r < runs; ++r) {
    tanh_run(src + off, run_stride, dst + r * run, run, t);
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
