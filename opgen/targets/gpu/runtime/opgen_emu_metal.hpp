// The Metal Shading Language names the prompts allow, for kernel code compiled as C++ on
// the CPU execution layer. Hand-written, versioned with opgen. Included first in the
// kernel's translation unit; the source follows with its `#include <metal_stdlib>` lines
// blanked (their line numbers kept).
//
// What maps to what:
//   kernel, device, thread                 nothing (a plain function; plain pointers)
//   constant                               const (kernel arguments by reference, constant tables)
//   threadgroup T name[N];                 one block-wide static (threadgroups run one at a time),
//                                          NaN-poisoned before every threadgroup
//   [[buffer(i)]], [[thread_position_in_grid]], ...   attributes g++ ignores; the generated host
//                                          passes each position argument by its place in the fixed signature
//   threadgroup_barrier(mem_flags::...)    the threadgroup barrier (every thread must reach it)
//   metal:: math (exp, fast::exp, max, clamp, select, rsqrt, ...)   float overloads over <cmath>
//   float2/3/4, int2/3/4, uint2/3/4        opgen_emu_metal_types.hpp
// What g++ cannot check for MSL: address spaces (a `device` pointer assigned to a `thread`
// one compiles here and not in Apple's compiler), and the MSL-only rules the GPU policy
// states instead (no double, no recursion, no function pointers).
#ifndef OPGEN_EMU_METAL_HPP
#define OPGEN_EMU_METAL_HPP

#include <cfloat>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "opgen_emu.hpp"
#include "opgen_emu_metal_types.hpp"

namespace metal {

enum class mem_flags : unsigned { mem_none = 0, mem_device = 1, mem_threadgroup = 2, mem_texture = 4 };
constexpr mem_flags operator|(mem_flags a, mem_flags b) {
  return static_cast<mem_flags>(static_cast<unsigned>(a) | static_cast<unsigned>(b));
}

using std::numeric_limits;

#define OPGEN_EMU_UNARY(name, expr) \
  inline float name(float x) { return expr; }
#define OPGEN_EMU_MATH                                                                        \
  OPGEN_EMU_UNARY(exp, std::exp(x))                                                           \
  OPGEN_EMU_UNARY(exp2, std::exp2(x))                                                         \
  OPGEN_EMU_UNARY(exp10, std::pow(10.0f, x))                                                  \
  OPGEN_EMU_UNARY(log, std::log(x))                                                           \
  OPGEN_EMU_UNARY(log2, std::log2(x))                                                         \
  OPGEN_EMU_UNARY(sqrt, std::sqrt(x))                                                         \
  OPGEN_EMU_UNARY(rsqrt, 1.0f / std::sqrt(x))                                                 \
  OPGEN_EMU_UNARY(tanh, std::tanh(x))                                                         \
  OPGEN_EMU_UNARY(sin, std::sin(x))                                                           \
  OPGEN_EMU_UNARY(cos, std::cos(x))                                                           \
  inline float pow(float x, float y) { return std::pow(x, y); }                               \
  inline float powr(float x, float y) { return std::pow(x, y); }                              \
  inline float divide(float x, float y) { return x / y; }

OPGEN_EMU_MATH
namespace fast { OPGEN_EMU_MATH }
namespace precise { OPGEN_EMU_MATH }
#undef OPGEN_EMU_MATH
#undef OPGEN_EMU_UNARY

inline float abs(float x) { return std::fabs(x); }
inline float fabs(float x) { return std::fabs(x); }
inline float floor(float x) { return std::floor(x); }
inline float ceil(float x) { return std::ceil(x); }
inline float round(float x) { return std::round(x); }
inline float trunc(float x) { return std::trunc(x); }
inline float fma(float a, float b, float c) { return std::fma(a, b, c); }
inline float fmax(float a, float b) { return std::fmax(a, b); }
inline float fmin(float a, float b) { return std::fmin(a, b); }
inline float max(float a, float b) { return std::fmax(a, b); }
inline float min(float a, float b) { return std::fmin(a, b); }
inline int max(int a, int b) { return a > b ? a : b; }
inline int min(int a, int b) { return a < b ? a : b; }
inline uint max(uint a, uint b) { return a > b ? a : b; }
inline uint min(uint a, uint b) { return a < b ? a : b; }
inline long max(long a, long b) { return a > b ? a : b; }
inline long min(long a, long b) { return a < b ? a : b; }
inline float clamp(float x, float lo, float hi) { return std::fmin(std::fmax(x, lo), hi); }
inline int clamp(int x, int lo, int hi) { return x < lo ? lo : x > hi ? hi : x; }
inline uint clamp(uint x, uint lo, uint hi) { return x < lo ? lo : x > hi ? hi : x; }
inline float mix(float a, float b, float t) { return a + (b - a) * t; }
inline float sign(float x) { return x > 0.0f ? 1.0f : x < 0.0f ? -1.0f : x; }
template <class T> inline T select(T a, T b, bool c) { return c ? b : a; }
inline bool isnan(float x) { return std::isnan(x); }
inline bool isinf(float x) { return std::isinf(x); }
inline bool isfinite(float x) { return std::isfinite(x); }
inline bool signbit(float x) { return std::signbit(x); }
template <class T, int N> inline T dot(const opgen_emu::vec<T, N>& a, const opgen_emu::vec<T, N>& b) {
  T s = 0;
  for (int i = 0; i < N; ++i) s += a[i] * b[i];
  return s;
}

}  // namespace metal

#ifndef MAXFLOAT
#define MAXFLOAT FLT_MAX
#endif

#define threadgroup_barrier(flags) \
  ((void)(flags), ::opgen_emu::barrier("threadgroup_barrier(...)", __FILE__, __LINE__, __COUNTER__))

// Address spaces and the kernel qualifier. `threadgroup` declares a block-wide array:
// a static (threadgroups run one at a time), outside a sanitizer build in the section the
// runtime NaN-poisons before every threadgroup (see opgen_emu_cuda.hpp's __shared__).
#define kernel
#define device
#define thread
#define constant const
#if defined(__SANITIZE_ADDRESS__)
#define threadgroup static
#else
#define threadgroup static __attribute__((section("opgen_shared"), aligned(16)))
#endif

#endif
