// Metal Shading Language scalar and vector types for the CPU execution layer.
// Hand-written, versioned with opgen. Shared by the kernel's translation unit (through
// opgen_emu_metal.hpp) and the generated host code, so that both spell the kernel's
// parameter types alike.
//
// Vectors have the members x, y, z (, w), element-wise arithmetic with vectors and scalars,
// and the constructors MSL has (a scalar broadcast, one value per component, a conversion
// from another element type). Swizzles (v.xy, v.rgba) are not emulated: the GPU policy
// rejects them before compiling.
#ifndef OPGEN_EMU_METAL_TYPES_HPP
#define OPGEN_EMU_METAL_TYPES_HPP

typedef unsigned int uint;
typedef unsigned short ushort;
typedef unsigned char uchar;
typedef unsigned long ulong;

namespace opgen_emu {

template <class T, int N> struct vec;

#define OPGEN_EMU_VEC_OPS(N)                                                                             \
  T& operator[](int i) { return (&x)[i]; }                                                                \
  const T& operator[](int i) const { return (&x)[i]; }                                                    \
  friend vec operator+(vec a, const vec& b) { for (int i = 0; i < N; ++i) a[i] += b[i]; return a; }      \
  friend vec operator-(vec a, const vec& b) { for (int i = 0; i < N; ++i) a[i] -= b[i]; return a; }      \
  friend vec operator*(vec a, const vec& b) { for (int i = 0; i < N; ++i) a[i] *= b[i]; return a; }      \
  friend vec operator/(vec a, const vec& b) { for (int i = 0; i < N; ++i) a[i] /= b[i]; return a; }      \
  friend vec operator+(vec a, T s) { for (int i = 0; i < N; ++i) a[i] += s; return a; }                  \
  friend vec operator-(vec a, T s) { for (int i = 0; i < N; ++i) a[i] -= s; return a; }                  \
  friend vec operator*(vec a, T s) { for (int i = 0; i < N; ++i) a[i] *= s; return a; }                  \
  friend vec operator/(vec a, T s) { for (int i = 0; i < N; ++i) a[i] /= s; return a; }                  \
  friend vec operator+(T s, vec a) { for (int i = 0; i < N; ++i) a[i] = s + a[i]; return a; }            \
  friend vec operator-(T s, vec a) { for (int i = 0; i < N; ++i) a[i] = s - a[i]; return a; }            \
  friend vec operator*(T s, vec a) { for (int i = 0; i < N; ++i) a[i] = s * a[i]; return a; }            \
  friend vec operator/(T s, vec a) { for (int i = 0; i < N; ++i) a[i] = s / a[i]; return a; }            \
  friend vec operator-(vec a) { for (int i = 0; i < N; ++i) a[i] = -a[i]; return a; }                    \
  vec& operator+=(const vec& b) { return *this = *this + b; }                                             \
  vec& operator-=(const vec& b) { return *this = *this - b; }                                             \
  vec& operator*=(const vec& b) { return *this = *this * b; }                                             \
  vec& operator/=(const vec& b) { return *this = *this / b; }                                             \
  vec& operator+=(T s) { return *this = *this + s; }                                                      \
  vec& operator-=(T s) { return *this = *this - s; }                                                      \
  vec& operator*=(T s) { return *this = *this * s; }                                                      \
  vec& operator/=(T s) { return *this = *this / s; }

template <class T> struct alignas(2 * sizeof(T)) vec<T, 2> {
  T x, y;
  vec() = default;
  constexpr vec(T s) : x(s), y(s) {}
  constexpr vec(T x_, T y_) : x(x_), y(y_) {}
  template <class U> constexpr explicit vec(const vec<U, 2>& v) : x(T(v.x)), y(T(v.y)) {}
  OPGEN_EMU_VEC_OPS(2)
};
// MSL pads 3-component vectors to 4 (size and alignment of the 4-vector).
template <class T> struct alignas(4 * sizeof(T)) vec<T, 3> {
  T x, y, z;
  vec() = default;
  constexpr vec(T s) : x(s), y(s), z(s) {}
  constexpr vec(T x_, T y_, T z_) : x(x_), y(y_), z(z_) {}
  template <class U> constexpr explicit vec(const vec<U, 3>& v) : x(T(v.x)), y(T(v.y)), z(T(v.z)) {}
  OPGEN_EMU_VEC_OPS(3)
};
template <class T> struct alignas(4 * sizeof(T)) vec<T, 4> {
  T x, y, z, w;
  vec() = default;
  constexpr vec(T s) : x(s), y(s), z(s), w(s) {}
  constexpr vec(T x_, T y_, T z_, T w_) : x(x_), y(y_), z(z_), w(w_) {}
  template <class U> constexpr explicit vec(const vec<U, 4>& v) : x(T(v.x)), y(T(v.y)), z(T(v.z)), w(T(v.w)) {}
  OPGEN_EMU_VEC_OPS(4)
};
#undef OPGEN_EMU_VEC_OPS

}  // namespace opgen_emu

typedef opgen_emu::vec<float, 2> float2;
typedef opgen_emu::vec<float, 3> float3;
typedef opgen_emu::vec<float, 4> float4;
typedef opgen_emu::vec<int, 2> int2;
typedef opgen_emu::vec<int, 3> int3;
typedef opgen_emu::vec<int, 4> int4;
typedef opgen_emu::vec<uint, 2> uint2;
typedef opgen_emu::vec<uint, 3> uint3;
typedef opgen_emu::vec<uint, 4> uint4;

#endif
