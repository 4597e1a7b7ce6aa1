// opgen kernel API, C++ side: what an LLM-written kernel sees.
//
// Kernels are plain C++17 functions in namespace opgen::kernels. They take inputs as
// const opgen::Tensor& (strided views, possibly non-contiguous, possibly with stride 0
// where opgen broadcast them) and idiomatic scalars, and write results into a
// caller-allocated, contiguous `opgen::Tensor& out` or return them by value.
// Errors Python would raise are thrown as opgen::Error; the generated shim turns them
// into status codes.
#ifndef OPGEN_KERNEL_HPP
#define OPGEN_KERNEL_HPP

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "opgen_abi.h"

namespace opgen {

// bfloat16, a storage type: the upper 16 bits of a float32. GCC 12 on x86 has no arithmetic type
// for it, so kernels read with to_float, compute in float, and store with to_bfloat16 (round to
// nearest, ties to even, as PyTorch and ml_dtypes convert; a nan stays a quiet nan of its sign).
// float16 kernels use _Float16 the same way (static_cast to float and back).
struct bfloat16 {
  uint16_t bits;
};

inline float to_float(bfloat16 h) {
  const uint32_t u = static_cast<uint32_t>(h.bits) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

inline bfloat16 to_bfloat16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  if ((u & 0x7fffffffu) > 0x7f800000u) return bfloat16{static_cast<uint16_t>((u >> 16) | 0x0040u)};
  u += 0x7fffu + ((u >> 16) & 1u);
  return bfloat16{static_cast<uint16_t>(u >> 16)};
}

enum class ErrorKind : int32_t {
  Overflow = OPGEN_OVERFLOW_ERROR,
  ZeroDivision = OPGEN_ZERO_DIVISION_ERROR,
  Value = OPGEN_VALUE_ERROR,
  Internal = OPGEN_INTERNAL_ERROR,
  Index = OPGEN_INDEX_ERROR,
};

struct Error : std::runtime_error {
  ErrorKind kind;
  Error(ErrorKind k, const std::string& what) : std::runtime_error(what), kind(k) {}
};

// A strided view over caller-owned memory. Sizes and strides are in elements.
class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(const opgen_tensor& t) : data_(static_cast<char*>(t.data) + t.byte_offset), ndim_(t.ndim), dtype_(t.dtype) {
    if (t.ndim < 0 || t.ndim > OPGEN_MAX_DIMS) throw Error(ErrorKind::Value, "tensor rank out of range");
    int64_t compact = 1;
    for (int d = ndim_ - 1; d >= 0; --d) {
      shape_[d] = t.shape[d];
      strides_[d] = t.strides ? t.strides[d] : compact;
      compact *= t.shape[d];
    }
  }

  template <class T> T* data() const { return reinterpret_cast<T*>(data_); }
  int ndim() const { return ndim_; }
  int64_t size(int d) const { return shape_[d < 0 ? d + ndim_ : d]; }
  int64_t stride(int d) const { return strides_[d < 0 ? d + ndim_ : d]; }
  const int64_t* sizes() const { return shape_; }
  const int64_t* strides() const { return strides_; }
  opgen_dtype dtype() const { return dtype_; }
  int64_t numel() const {
    int64_t n = 1;
    for (int d = 0; d < ndim_; ++d) n *= shape_[d];
    return n;
  }
  bool is_contiguous() const {
    if (numel() == 0) return true;  // nothing to lay out; NumPy reports arbitrary strides here
    int64_t expect = 1;
    for (int d = ndim_ - 1; d >= 0; --d) {
      if (shape_[d] != 1 && strides_[d] != expect) return false;
      expect *= shape_[d];
    }
    return true;
  }

  // Used by generated shims only: a view with new leading dims of stride 0 (NumPy broadcasting).
  Tensor broadcast_to(const int64_t* shape, int ndim) const {
    if (ndim < ndim_ || ndim > OPGEN_MAX_DIMS) throw Error(ErrorKind::Value, "cannot broadcast to a lower rank");
    Tensor r = *this;
    r.ndim_ = ndim;
    int lead = ndim - ndim_;
    for (int d = ndim - 1; d >= 0; --d) {
      int src = d - lead;
      int64_t size = src >= 0 ? shape_[src] : 1, stride = src >= 0 ? strides_[src] : 0;
      if (size == shape[d]) {
        r.shape_[d] = size;
        r.strides_[d] = stride;
      } else if (size == 1) {
        r.shape_[d] = shape[d];
        r.strides_[d] = 0;
      } else {
        throw Error(ErrorKind::Value, "shapes cannot be broadcast together");
      }
    }
    return r;
  }

  // Used by generated shims only: same view, with dims [from, ndim) replaced by a core shape.
  Tensor with_leading(const int64_t* lead_shape, int lead_ndim, int core_ndim) const {
    int64_t full[OPGEN_MAX_DIMS];
    for (int d = 0; d < lead_ndim; ++d) full[d] = lead_shape[d];
    for (int d = 0; d < core_ndim; ++d) full[lead_ndim + d] = shape_[ndim_ - core_ndim + d];
    return broadcast_to(full, lead_ndim + core_ndim);
  }

 private:
  char* data_ = nullptr;
  int ndim_ = 0;
  opgen_dtype dtype_{};
  int64_t shape_[OPGEN_MAX_DIMS] = {};
  int64_t strides_[OPGEN_MAX_DIMS] = {};
};

}  // namespace opgen

#endif

// Helpers for the C-ABI shims opgen generates (kernels need not use them).
namespace opgen::shim {

inline void check_dtype(const opgen_tensor* t, uint8_t code, uint8_t bits, const char* name) {
  if (t == nullptr) throw Error(ErrorKind::Value, std::string("tensor argument '") + name + "' is null");
  if (t->dtype.code != code || t->dtype.bits != bits || t->dtype.lanes != 1)
    throw Error(ErrorKind::Value, std::string("tensor argument '") + name + "' has the wrong dtype");
  if (t->device.device_type != 1 /* kDLCPU */)
    throw Error(ErrorKind::Value, std::string("tensor argument '") + name + "' is not in CPU memory");
}

inline std::vector<int64_t> shape_of(const Tensor& t) { return std::vector<int64_t>(t.sizes(), t.sizes() + t.ndim()); }

inline std::vector<int64_t> broadcast_shapes(const std::vector<std::vector<int64_t>>& shapes) {
  size_t nd = 0;
  for (auto& s : shapes) nd = s.size() > nd ? s.size() : nd;
  std::vector<int64_t> out(nd, 1);
  for (auto& s : shapes) {
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t& o = out[nd - s.size() + i];
      int64_t v = s[i];
      if (o == 1) o = v;
      else if (v != 1 && v != o) throw Error(ErrorKind::Value, "input shapes cannot be broadcast together");
    }
  }
  return out;
}

inline void check_output(const Tensor& out, const std::vector<int64_t>& expect) {
  if (shape_of(out) != expect) throw Error(ErrorKind::Value, "output tensor does not have the shape the spec's shape rule gives");
  if (!out.is_contiguous()) throw Error(ErrorKind::Value, "output tensor must be contiguous");
}

inline int64_t normalize_axis(int64_t axis, int ndim) {
  if (axis < -ndim || axis >= ndim) throw Error(ErrorKind::Value, "axis out of range");
  return axis < 0 ? axis + ndim : axis;
}

// The views of a list-of-tensors argument (an array of opgen_tensor and its length), each checked
// like a single tensor argument.
inline std::vector<Tensor> tensor_list(const opgen_tensor* xs, int64_t len, uint8_t code, uint8_t bits,
                                       const char* name) {
  if (len < 0) throw Error(ErrorKind::Value, std::string("list argument '") + name + "' has a negative length");
  if (len > 0 && xs == nullptr) throw Error(ErrorKind::Value, std::string("list argument '") + name + "' is null");
  std::vector<Tensor> out;
  out.reserve(static_cast<size_t>(len));
  for (int64_t i = 0; i < len; ++i) {
    check_dtype(&xs[i], code, bits, name);
    out.emplace_back(xs[i]);
  }
  return out;
}

// numpy.concatenate's (stack == false) or numpy.stack's result shape, with NumPy's ValueErrors in
// NumPy's order and words (opgen.spec.shapes.join_shape is the same rule in Python).
inline std::vector<int64_t> join_shape(const std::vector<Tensor>& xs, int64_t axis, bool stack) {
  auto value = [](const std::string& m) { return Error(ErrorKind::Value, m); };
  if (xs.empty()) throw value(stack ? "need at least one array to stack" : "need at least one array to concatenate");
  std::vector<int64_t> first = shape_of(xs[0]);
  const int64_t nd = static_cast<int64_t>(first.size());
  if (stack) {
    for (const Tensor& x : xs)
      if (shape_of(x) != first) throw value("all input arrays must have the same shape");
    if (axis < -(nd + 1) || axis > nd)
      throw value("axis " + std::to_string(axis) + " is out of bounds for array of dimension " + std::to_string(nd + 1));
    if (nd + 1 > OPGEN_MAX_DIMS) throw value("the result has more dims than an opgen tensor holds (8)");
    const int64_t ax = axis < 0 ? axis + nd + 1 : axis;
    first.insert(first.begin() + ax, static_cast<int64_t>(xs.size()));
    return first;
  }
  if (nd == 0) throw value("zero-dimensional arrays cannot be concatenated");
  if (axis < -nd || axis >= nd)
    throw value("axis " + std::to_string(axis) + " is out of bounds for array of dimension " + std::to_string(nd));
  const int64_t ax = axis < 0 ? axis + nd : axis;
  int64_t total = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    const Tensor& x = xs[i];
    if (x.ndim() != nd)
      throw value("all the input arrays must have same number of dimensions, but the array at index 0 has " +
                  std::to_string(nd) + " dimension(s) and the array at index " + std::to_string(i) + " has " +
                  std::to_string(x.ndim()) + " dimension(s)");
    for (int64_t d = 0; d < nd; ++d)
      if (d != ax && x.size(static_cast<int>(d)) != first[static_cast<size_t>(d)])
        throw value("all the input array dimensions except for the concatenation axis must match exactly, but along "
                    "dimension " + std::to_string(d) + ", the array at index 0 has size " +
                    std::to_string(first[static_cast<size_t>(d)]) + " and the array at index " + std::to_string(i) +
                    " has size " + std::to_string(x.size(static_cast<int>(d))));
    total += x.size(static_cast<int>(ax));
  }
  first[static_cast<size_t>(ax)] = total;
  return first;
}

inline int32_t fail(opgen_error* err, int32_t kind, const char* msg) {
  if (err) {
    err->kind = kind;
    std::strncpy(err->message, msg, sizeof(err->message) - 1);
    err->message[sizeof(err->message) - 1] = '\0';
  }
  return kind;
}

inline char* copy_bytes(const std::string& s) {
  char* p = static_cast<char*>(std::malloc(s.size() ? s.size() : 1));
  if (!p) throw std::bad_alloc();
  std::memcpy(p, s.data(), s.size());
  return p;
}

}  // namespace opgen::shim

// One release function for every result a shim mallocs. Weak, so several kernel
// libraries can be linked into one program (the compiler's emitter does that).
extern "C" __attribute__((weak, visibility("default"))) void opgen_free(void* p) { std::free(p); }
