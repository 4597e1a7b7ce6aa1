// The CUDA names the prompts allow, for device code compiled as C++ on the CPU execution layer.
// Hand-written, versioned with opgen. Included first in the kernel's translation unit;
// the kernel source follows it unchanged (its line numbers kept).
//
// What maps to what:
//   __global__ __device__ __host__ __launch_bounds__(...)   nothing (a plain C++ function)
//   __forceinline__ / __noinline__                           always_inline / noinline
//   __shared__                                               one block-wide static (blocks run one at a
//                                                            time), NaN-poisoned before every block
//   __constant__                                             static const (read-only tables)
//   threadIdx blockIdx blockDim gridDim                      the running fiber's indices (read-only)
//   __syncthreads()                                          the block barrier (every thread must reach it)
//   float2/float4, int2/int4, uint2/uint4, make_*            CUDA's layout and alignment
//   expf __expf rsqrtf __fdividef fmaxf min max ...          the C++ math library
// Everything else (warp intrinsics, atomics, printf, dynamic parallelism, inline PTX) is
// rejected by opgen's GPU policy before the source is compiled.
#ifndef OPGEN_EMU_CUDA_HPP
#define OPGEN_EMU_CUDA_HPP

#include <math.h>  // libstdc++'s <math.h>: the float overloads (exp(float), fabs(float), ...) in the global namespace

#include <cfloat>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "opgen_emu.hpp"

struct uint3 {
  unsigned x, y, z;
};
struct dim3 {
  unsigned x, y, z;
  constexpr dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};

// CUDA's vector types: same members, sizes and alignment as vector_types.h.
struct alignas(8) float2 { float x, y; };
struct float3 { float x, y, z; };
struct alignas(16) float4 { float x, y, z, w; };
struct alignas(8) int2 { int x, y; };
struct int3 { int x, y, z; };
struct alignas(16) int4 { int x, y, z, w; };
struct alignas(8) uint2 { unsigned x, y; };
struct alignas(16) uint4 { unsigned x, y, z, w; };
struct alignas(16) double2 { double x, y; };
inline float2 make_float2(float x, float y) { return {x, y}; }
inline float3 make_float3(float x, float y, float z) { return {x, y, z}; }
inline float4 make_float4(float x, float y, float z, float w) { return {x, y, z, w}; }
inline int2 make_int2(int x, int y) { return {x, y}; }
inline int4 make_int4(int x, int y, int z, int w) { return {x, y, z, w}; }
inline uint2 make_uint2(unsigned x, unsigned y) { return {x, y}; }
inline uint3 make_uint3(unsigned x, unsigned y, unsigned z) { return {x, y, z}; }
inline uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) { return {x, y, z, w}; }
inline double2 make_double2(double x, double y) { return {x, y}; }

namespace opgen_emu {
inline uint3 cuda_thread_idx() { return {state.thread_idx.x, state.thread_idx.y, state.thread_idx.z}; }
inline uint3 cuda_block_idx() { return {state.block_idx.x, state.block_idx.y, state.block_idx.z}; }
inline dim3 cuda_block_dim() { return dim3(state.block_dim.x, state.block_dim.y, state.block_dim.z); }
inline dim3 cuda_grid_dim() { return dim3(state.grid_dim.x, state.grid_dim.y, state.grid_dim.z); }
}  // namespace opgen_emu

// Read-only values (an rvalue each time): writing threadIdx.x does not compile, as on a GPU.
#define threadIdx (::opgen_emu::cuda_thread_idx())
#define blockIdx (::opgen_emu::cuda_block_idx())
#define blockDim (::opgen_emu::cuda_block_dim())
#define gridDim (::opgen_emu::cuda_grid_dim())

#define __syncthreads() (::opgen_emu::barrier("__syncthreads()", __FILE__, __LINE__, __COUNTER__))

// Device math beyond <math.h>: the intrinsics' exact-rounding counterparts (the fast
// __expf may differ from expf by a few ulp on a GPU; the tolerances allow it).
inline float __expf(float x) { return expf(x); }
inline float __logf(float x) { return logf(x); }
inline float __log2f(float x) { return log2f(x); }
inline float __exp10f(float x) { return powf(10.0f, x); }
inline float __powf(float x, float y) { return powf(x, y); }
inline float __sinf(float x) { return sinf(x); }
inline float __cosf(float x) { return cosf(x); }
inline float __tanf(float x) { return tanf(x); }
inline float __fdividef(float x, float y) { return x / y; }
inline float fdividef(float x, float y) { return x / y; }
inline float __frcp_rn(float x) { return 1.0f / x; }
inline float __fsqrt_rn(float x) { return sqrtf(x); }
inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
inline double rsqrt(double x) { return 1.0 / sqrt(x); }
inline float __fmaf_rn(float a, float b, float c) { return fmaf(a, b, c); }
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __saturatef(float x) { return x != x ? 0.0f : x < 0.0f ? 0.0f : x > 1.0f ? 1.0f : x; }
inline float __int_as_float(int v) { float f; std::memcpy(&f, &v, sizeof f); return f; }
inline int __float_as_int(float f) { int v; std::memcpy(&v, &f, sizeof v); return v; }
inline unsigned __float_as_uint(float f) { unsigned v; std::memcpy(&v, &f, sizeof v); return v; }
inline float __uint_as_float(unsigned v) { float f; std::memcpy(&f, &v, sizeof f); return f; }
template <class T> inline T __ldg(const T* p) { return *p; }

// CUDA's min and max: overloads for each arithmetic type, and mixed int/unsigned as CUDA
// resolves them (to the unsigned or wider type). Float ones return the non-nan operand, as fminf/fmaxf.
inline int min(int a, int b) { return a < b ? a : b; }
inline int max(int a, int b) { return a > b ? a : b; }
inline unsigned min(unsigned a, unsigned b) { return a < b ? a : b; }
inline unsigned max(unsigned a, unsigned b) { return a > b ? a : b; }
inline unsigned min(int a, unsigned b) { return min(static_cast<unsigned>(a), b); }
inline unsigned max(int a, unsigned b) { return max(static_cast<unsigned>(a), b); }
inline unsigned min(unsigned a, int b) { return min(a, static_cast<unsigned>(b)); }
inline unsigned max(unsigned a, int b) { return max(a, static_cast<unsigned>(b)); }
inline long long min(long long a, long long b) { return a < b ? a : b; }
inline long long max(long long a, long long b) { return a > b ? a : b; }
inline long long min(int a, long long b) { return min(static_cast<long long>(a), b); }
inline long long max(int a, long long b) { return max(static_cast<long long>(a), b); }
inline long long min(long long a, int b) { return min(a, static_cast<long long>(b)); }
inline long long max(long long a, int b) { return max(a, static_cast<long long>(b)); }
inline long min(long a, long b) { return a < b ? a : b; }
inline long max(long a, long b) { return a > b ? a : b; }
inline float min(float a, float b) { return fminf(a, b); }
inline float max(float a, float b) { return fmaxf(a, b); }
inline double min(double a, double b) { return fmin(a, b); }
inline double max(double a, double b) { return fmax(a, b); }
inline float min(float a, int b) { return fminf(a, static_cast<float>(b)); }
inline float max(float a, int b) { return fmaxf(a, static_cast<float>(b)); }
inline float min(int a, float b) { return fminf(static_cast<float>(a), b); }
inline float max(int a, float b) { return fmaxf(static_cast<float>(a), b); }

// math_constants.h
#define CUDART_INF_F __builtin_huge_valf()
#define CUDART_NAN_F __builtin_nanf("")
#define CUDART_PI_F 3.141592654f

// Qualifiers. __shared__ variables are statics (one per block, since blocks run one at a
// time); outside a sanitizer build they live in one section that the runtime fills with
// 0xff (a NaN in every float) before each block, so reading shared memory no thread of the
// block wrote gives NaN, as garbage would on a GPU. A sanitizer build leaves them where
// AddressSanitizer can guard them with redzones instead.
#define __global__
#define __device__
#define __host__
#define __forceinline__ __attribute__((always_inline)) inline
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
#define __constant__ static const
#if defined(__SANITIZE_ADDRESS__)
#define __shared__ static
#else
#define __shared__ static __attribute__((section("opgen_shared"), aligned(16)))
#endif

#endif
