// Helpers for the host code opgen generates around a GPU kernel (CPU execution layer and CUDA).
// Hand-written, versioned with opgen. Plain C++17: nvcc compiles it as host code too.
#ifndef OPGEN_GPU_HOST_HPP
#define OPGEN_GPU_HOST_HPP

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

// opgen_kernel.hpp is included first by the generated code (its shim helpers have no include guard).
#ifndef OPGEN_KERNEL_HPP
#error "include opgen_kernel.hpp before this header"
#endif

namespace opgen::gpu {

// A launch: blocks per grid and threads per block (from the kernel's @launch line).
struct Launch {
  int64_t grid[3];
  int64_t block[3];
};

[[noreturn]] inline void launch_error(const std::string& what) {
  throw Error(ErrorKind::Internal, "the kernel's @launch line " + what);
}

// Checked int64 arithmetic for launch lines (an overflow or a division by zero is the launch line's bug).
inline int64_t add(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) launch_error("overflows int64 in an addition");
  return r;
}
inline int64_t sub(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r)) launch_error("overflows int64 in a subtraction");
  return r;
}
inline int64_t mul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) launch_error("overflows int64 in a multiplication");
  return r;
}
inline int64_t floor_div(int64_t a, int64_t b) {
  if (b == 0) launch_error("divides by zero (with these sizes)");
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
inline int64_t mod(int64_t a, int64_t b) { return sub(a, mul(floor_div(a, b), b)); }
inline int64_t ceil_div(int64_t a, int64_t b) { return -floor_div(-a, b); }
inline int64_t min_of(std::initializer_list<int64_t> v) {
  int64_t r = *v.begin();
  for (int64_t x : v) r = x < r ? x : r;
  return r;
}
inline int64_t max_of(std::initializer_list<int64_t> v) {
  int64_t r = *v.begin();
  for (int64_t x : v) r = x > r ? x : r;
  return r;
}

// Grid extents the device can take (0 means: launch nothing).
inline void check_grid(const Launch& l) {
  const int64_t limit[3] = {2147483647, 65535, 65535};
  const char* axis[3] = {"x", "y", "z"};
  for (int i = 0; i < 3; ++i) {
    if (l.grid[i] < 0) launch_error(std::string("gives a negative grid extent in ") + axis[i]);
    if (l.grid[i] > limit[i])
      launch_error(std::string("gives ") + std::to_string(l.grid[i]) + " blocks in " + axis[i] + " (at most " +
                   std::to_string(limit[i]) + "); map the largest extent to x");
  }
}
inline bool empty_grid(const Launch& l) { return l.grid[0] == 0 || l.grid[1] == 0 || l.grid[2] == 0; }

inline int64_t product(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims)
    if (__builtin_mul_overflow(n, d, &n)) throw Error(ErrorKind::Value, "the tensor is too large");
  return n;
}

// Device kernels index with 32-bit ints: every size and every element count must fit.
inline int to_int(int64_t v, const char* name) {
  if (v < 0 || v > std::numeric_limits<int32_t>::max())
    throw Error(ErrorKind::Value, std::string("size ") + name + " = " + std::to_string(v) +
                                      " does not fit the GPU kernel's 32-bit sizes");
  return static_cast<int>(v);
}
inline size_t count(int64_t numel, const char* name) {
  if (numel < 0 || numel > std::numeric_limits<int32_t>::max())
    throw Error(ErrorKind::Value, std::string("tensor ") + name + " has " + std::to_string(numel) +
                                      " elements, more than the GPU kernel's 32-bit indexing reaches");
  return static_cast<size_t>(numel);
}

// A strided host view copied row-major into a contiguous vector (broadcast dims materialised).
template <class T>
std::vector<T> pack(const Tensor& t, const char* name) {
  std::vector<T> out(count(t.numel(), name));
  if (out.empty()) return out;
  const int nd = t.ndim();
  int64_t index[OPGEN_MAX_DIMS] = {};
  const T* base = t.data<T>();
  for (size_t i = 0; i < out.size(); ++i) {
    int64_t offset = 0;
    for (int d = 0; d < nd; ++d) offset += index[d] * t.stride(d);
    out[i] = base[offset];
    for (int d = nd - 1; d >= 0; --d) {
      if (++index[d] < t.size(d)) break;
      index[d] = 0;
    }
  }
  return out;
}

}  // namespace opgen::gpu

#endif
