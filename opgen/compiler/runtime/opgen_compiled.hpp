// opgen compiled-function runtime: what C++ emitted by `opgen compile` uses around the
// registry's kernels. Hand-written, versioned with opgen; it is hashed into every build key.
//
// Values a compiled function holds:
//   int, float, bool, str  -> int64_t, double, bool, std::string
//   list[T]                -> std::vector<T> (list[bool] as std::vector<uint8_t>, contiguous for the C ABI)
//   dict[str, T]           -> opgen::compiled::Dict<T>
//   tensor[dtype]          -> opgen::compiled::Array (owned and reference-counted, or borrowed from the host)
//
// Kernels are reached through their generated C shims; the emitted adapters turn C++
// values into shim arguments, allocate tensor outputs from the spec's shape rule (the
// shim checks the shape) and turn a non-zero status into an opgen::Error carrying the
// Python exception kind, which the entry point hands back to the host.
#ifndef OPGEN_COMPILED_HPP
#define OPGEN_COMPILED_HPP

#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <new>
#include <string>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <functional>
#include <utility>
#include <vector>

#include "opgen_kernel.hpp"

// A missing dict key (Python KeyError) and a TypeError: compiled functions only, kernels never raise them.
#define OPGEN_KEY_ERROR 6
#define OPGEN_TYPE_ERROR 7

namespace opgen::compiled {

constexpr ErrorKind KeyError = static_cast<ErrorKind>(OPGEN_KEY_ERROR);
constexpr ErrorKind TypeError = static_cast<ErrorKind>(OPGEN_TYPE_ERROR);
// What compiled code cannot do where Python can (a sort of nan, the tolist() of a 2-d array): no compiled
// `except` catches it (Python would not have raised), and it leaves the entry as ValueError or TypeError.
constexpr ErrorKind UnsupportedValue = static_cast<ErrorKind>(100 + OPGEN_VALUE_ERROR);
constexpr ErrorKind UnsupportedType = static_cast<ErrorKind>(100 + OPGEN_TYPE_ERROR);

// Whether a compiled `except` clause naming these kinds (their statuses) catches an error: never one of
// the Unsupported kinds above, nor an opgen internal error.
inline bool catches(const Error& e, std::initializer_list<int> kinds) {
  const int k = static_cast<int>(e.kind);
  if (k >= 100 || k == OPGEN_INTERNAL_ERROR) return false;
  for (int want : kinds)
    if (want == k) return true;
  return false;
}

[[noreturn]] inline void raise(ErrorKind kind, const std::string& message) { throw Error(kind, message); }

// A kernel called through another library's name (Tensor.argmax for numpy.argmax's kernel), which
// raises its own kind where the kernel raises NumPy's (spec library_errors): the kind becomes the
// library's, the message stays the kernel's.
template <class F>
auto with_error_kinds(std::initializer_list<std::pair<int, int>> remap, F&& call) -> decltype(call()) {
  try {
    return call();
  } catch (Error& e) {
    for (const auto& [from, to] : remap)
      if (static_cast<int>(e.kind) == from) {
        e.kind = static_cast<ErrorKind>(to);
        break;
      }
    throw;
  }
}

// A kernel call's status: 0, or the Python error kind with the kernel's message.
inline void check(int32_t status, const opgen_error& err) {
  if (status != OPGEN_OK) raise(static_cast<ErrorKind>(status), err.message);
}

// A kernel that lives in its own shared library (a Rust cdylib, with its own standard
// library), shipped in kernels/ beside this library and loaded on first use.
inline void* kernel_symbol(const char* library, const char* symbol) {
  Dl_info self{};
  if (dladdr(reinterpret_cast<void*>(&kernel_symbol), &self) == 0 || self.dli_fname == nullptr)
    raise(ErrorKind::Internal, "cannot tell where this library was loaded from");
  std::string path(self.dli_fname);
  path = path.substr(0, path.find_last_of('/') + 1) + "kernels/" + library;
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) raise(ErrorKind::Internal, std::string("cannot load kernel library ") + path);
  void* fn = dlsym(handle, symbol);
  if (fn == nullptr) raise(ErrorKind::Internal, std::string(symbol) + " is missing from " + path);
  return fn;
}

// ---------------------------------------------------------------- tensors

inline size_t item_size(opgen_dtype dt) { return static_cast<size_t>(dt.bits) / 8; }

// One part of a subscript: an index, a slice (each bound optional, as Python's None), `...` or None.
struct IndexPart {
  enum Kind { At = 0, Slice = 1, Ellipsis = 2, NewAxis = 3 };
  int kind;
  int64_t start = 0, stop = 0, step = 1;
  bool has_start = false, has_stop = false, has_step = false;
};

// A torch tensor's slice step: torch raises ValueError for one below 1 (NumPy reverses with it).
inline int64_t torch_step(int64_t step) {
  if (step <= 0) raise(ErrorKind::Value, "step must be greater than zero");
  return step;
}

// Python's slice.indices(n): the first index and the count a slice selects of n elements.
inline void slice_range(const IndexPart& p, int64_t n, int64_t& start, int64_t& step, int64_t& count) {
  step = p.has_step ? p.step : 1;
  if (step == 0) raise(ErrorKind::Value, "slice step cannot be zero");
  const int64_t lower = step < 0 ? -1 : 0, upper = step < 0 ? n - 1 : n;
  auto clamp = [&](bool has, int64_t v, int64_t missing) {
    if (!has) return missing;
    if (v < 0) {
      v += n;
      return v < lower ? lower : v;
    }
    return v > upper ? upper : v;
  };
  start = clamp(p.has_start, p.start, step < 0 ? upper : lower);
  const int64_t stop = clamp(p.has_stop, p.stop, step < 0 ? lower : upper);
  if (step > 0)
    count = stop > start ? (stop - start - 1) / step + 1 : 0;
  else
    count = start > stop ? (start - stop - 1) / (-step) + 1 : 0;
}

class Array {
 public:
  Array() = default;

  // The host's memory, as it is (strides kept); lives as long as the call.
  static Array borrow(const opgen_tensor* t) {
    if (t == nullptr) raise(ErrorKind::Value, "tensor argument is null");
    if (t->ndim < 0 || t->ndim > OPGEN_MAX_DIMS) raise(ErrorKind::Value, "tensor rank out of range");
    Array a;
    a.data_ = static_cast<char*>(t->data) + t->byte_offset;
    a.dtype_ = t->dtype;
    a.shape_.assign(t->shape, t->shape + t->ndim);
    if (t->strides != nullptr) a.strides_.assign(t->strides, t->strides + t->ndim);
    return a;
  }

  // A fresh contiguous tensor for a kernel to write (64-byte aligned; contents undefined).
  static Array empty(opgen_dtype dtype, std::vector<int64_t> shape) {
    Array a;
    a.dtype_ = dtype;
    a.shape_ = std::move(shape);
    size_t bytes = item_size(dtype);
    for (int64_t s : a.shape_) bytes *= static_cast<size_t>(s);
    size_t rounded = (bytes + 63) / 64 * 64;
    a.owner_ = std::make_shared<Buffer>();
    a.owner_->p = std::aligned_alloc(64, rounded ? rounded : 64);
    if (a.owner_->p == nullptr) throw std::bad_alloc();
    a.data_ = static_cast<char*>(a.owner_->p);
    return a;
  }

  const std::vector<int64_t>& shape() const { return shape_; }
  int ndim() const { return static_cast<int>(shape_.size()); }
  opgen_dtype dtype() const { return dtype_; }
  int64_t numel() const {
    int64_t n = 1;
    for (int64_t s : shape_) n *= s;
    return n;
  }

  // The DLTensor-layout view a shim takes; valid while this Array is alive and unchanged.
  opgen_tensor view() const {
    opgen_tensor t{};
    t.data = data_;
    t.device = opgen_device{1 /* kDLCPU */, 0};
    t.ndim = ndim();
    t.dtype = dtype_;
    t.shape = const_cast<int64_t*>(shape_.data());
    t.strides = strides_.empty() ? nullptr : const_cast<int64_t*>(strides_.data());
    t.byte_offset = 0;
    return t;
  }

  // NumPy's basic indexing (x[1:3], q[0], a[:, ::2], m[..., None]) as a view of the same memory:
  // parts are applied left to right, `...` stands for the dims no part names, None adds a dim of 1.
  Array subscript(const std::vector<IndexPart>& parts) const;

  // The same memory seen with another shape and strides (in elements; the caller keeps every
  // position it names inside this array's memory).
  Array with_layout(std::vector<int64_t> shape, std::vector<int64_t> strides) const {
    Array r = *this;
    r.shape_ = std::move(shape);
    r.strides_ = std::move(strides);
    if (r.shape_.empty()) r.strides_.clear();
    return r;
  }

  // a[region] = value in place, as Python writes it, where this array alone holds its buffer and is
  // compact: no other name, view, or the value itself (a view of this array holds the buffer too) can
  // see the write. value has the region's shape at this array's rank, the region lies inside it
  // (opgen::compiled::region worked both out). False, and nothing written, otherwise: the caller
  // then makes the new array with opgen.assign_region.
  bool write_region(const std::vector<int64_t>& starts, const std::vector<int64_t>& steps, const Array& value) {
    if (!owner_ || owner_.use_count() != 1 || !strides_.empty() || data_ != owner_->p) return false;
    if (value.dtype_.code != dtype_.code || value.dtype_.bits != dtype_.bits || value.ndim() != ndim()) return false;
    const int nd = ndim();
    const int64_t n = value.numel();
    if (n == 0) return true;
    const std::vector<int64_t> compact = strides(), src_strides = value.strides();
    std::vector<int64_t> dst_strides(static_cast<size_t>(nd));
    int64_t dst = 0;
    for (int d = 0; d < nd; ++d) {
      dst += starts[d] * compact[d];
      dst_strides[d] = steps[d] * compact[d];
    }
    const size_t item = item_size(dtype_);
    const int64_t inner = nd ? value.shape_[nd - 1] : 1, outer = n / inner;
    const int64_t ds = nd ? dst_strides[nd - 1] : 0, ss = nd ? src_strides[nd - 1] : 0;
    std::vector<int64_t> at(static_cast<size_t>(nd > 1 ? nd - 1 : 0), 0);
    int64_t src = 0;
    for (int64_t row = 0; row < outer; ++row) {
      char* to = data_ + dst * static_cast<int64_t>(item);
      const char* from = value.data_ + src * static_cast<int64_t>(item);
      if (ds == 1 && ss == 1) {
        std::memcpy(to, from, static_cast<size_t>(inner) * item);
      } else {
        for (int64_t i = 0; i < inner; ++i)
          std::memcpy(to + i * ds * static_cast<int64_t>(item), from + i * ss * static_cast<int64_t>(item), item);
      }
      for (int d = nd - 2; d >= 0; --d) {  // odometer over the dims before the last
        if (++at[d] < value.shape_[d]) {
          dst += dst_strides[d];
          src += src_strides[d];
          break;
        }
        dst -= dst_strides[d] * (value.shape_[d] - 1);
        src -= src_strides[d] * (value.shape_[d] - 1);
        at[d] = 0;
      }
    }
    return true;
  }

  // Strides in elements, made explicit for a compact array.
  std::vector<int64_t> strides() const {
    if (!strides_.empty()) return strides_;
    std::vector<int64_t> s(shape_.size(), 1);
    for (int d = ndim() - 2; d >= 0; --d) s[d] = s[d + 1] * shape_[d + 1];
    return s;
  }

  // The same memory with the dims in another order: dim i of the result is dim order[i] of this
  // (order a permutation of 0..ndim-1, checked by the callers below).
  Array permuted(const std::vector<int64_t>& order) const {
    const std::vector<int64_t> strides = this->strides();
    Array r = *this;
    r.strides_.assign(order.size(), 0);
    for (size_t i = 0; i < order.size(); ++i) {
      r.shape_[i] = shape_[static_cast<size_t>(order[i])];
      r.strides_[i] = strides[static_cast<size_t>(order[i])];
    }
    if (r.shape_.empty()) r.strides_.clear();
    return r;
  }

  // The same memory without the size-1 dims marked in `drop` (flags for the last drop.size() dims):
  // no copy, and a compact array stays compact (removing a dim of 1 changes no other stride).
  Array without_unit_dims(const std::vector<bool>& drop) const {
    Array r = *this;
    const size_t first = shape_.size() - drop.size();
    for (size_t i = drop.size(); i-- > 0;) {
      if (!drop[i] || shape_[first + i] != 1) continue;
      r.shape_.erase(r.shape_.begin() + static_cast<std::ptrdiff_t>(first + i));
      if (!r.strides_.empty()) r.strides_.erase(r.strides_.begin() + static_cast<std::ptrdiff_t>(first + i));
    }
    return r;
  }

  // A bounded result (opgen.spec.shapes.BOUNDED: x[mask]) as its length: the view of its first
  // `count` rows, `count` the 0-d int64 the kernel reported (the shim has checked it lies in
  // [0, shape[0]]). No copy: compact strides stay compact, and the buffer is handed over as it is.
  Array first_rows(const Array& count) const {
    if (shape_.empty() || count.ndim() != 0 || count.dtype_.code != 0 || count.dtype_.bits != 64)
      raise(ErrorKind::Internal, "first_rows: a bounded result and its 0-d int64 count are expected");
    int64_t n = 0;
    std::memcpy(&n, count.data_, sizeof n);
    if (n < 0 || n > shape_[0]) raise(ErrorKind::Internal, "a kernel's count lies outside its result's bound");
    Array r = *this;
    r.shape_[0] = n;
    return r;
  }

  // Hand the result to the host: malloc'ed data and shape (freed with opgen_free), compact
  // strides. An owned, contiguous, unshared buffer is handed over without a copy.
  void release_into(opgen_tensor* out) {
    auto* shape = static_cast<int64_t*>(std::malloc(sizeof(int64_t) * (shape_.empty() ? 1 : shape_.size())));
    if (shape == nullptr) throw std::bad_alloc();
    for (size_t d = 0; d < shape_.size(); ++d) shape[d] = shape_[d];
    void* data;
    if (owner_ && owner_.use_count() == 1 && strides_.empty() && data_ == owner_->p) {
      data = owner_->p;
      owner_->p = nullptr;
    } else {
      data = compact_copy();
    }
    out->data = data;
    out->device = opgen_device{1, 0};
    out->ndim = ndim();
    out->dtype = dtype_;
    out->shape = shape;
    out->strides = nullptr;
    out->byte_offset = 0;
  }

 private:
  struct Buffer {
    void* p = nullptr;
    ~Buffer() { std::free(p); }
  };

  void* compact_copy() const {
    const size_t item = item_size(dtype_);
    const int64_t n = numel();
    char* dst = static_cast<char*>(std::malloc(n > 0 ? static_cast<size_t>(n) * item : 1));
    if (dst == nullptr) throw std::bad_alloc();
    if (strides_.empty()) {
      if (n > 0) std::memcpy(dst, data_, static_cast<size_t>(n) * item);
      return dst;
    }
    std::vector<int64_t> index(shape_.size(), 0);
    for (int64_t i = 0; i < n; ++i) {
      int64_t offset = 0;
      for (size_t d = 0; d < shape_.size(); ++d) offset += index[d] * strides_[d];
      std::memcpy(dst + static_cast<size_t>(i) * item, data_ + offset * static_cast<int64_t>(item), item);
      for (size_t d = shape_.size(); d-- > 0;) {  // odometer: last dim fastest
        if (++index[d] < shape_[d]) break;
        index[d] = 0;
      }
    }
    return dst;
  }

  std::shared_ptr<Buffer> owner_;
  char* data_ = nullptr;
  opgen_dtype dtype_{};
  std::vector<int64_t> shape_;
  std::vector<int64_t> strides_;  // in elements; empty means compact row-major
};

inline Array Array::subscript(const std::vector<IndexPart>& parts) const {
  const int nd = ndim();
  int named = 0, ellipses = 0;
  for (const IndexPart& p : parts) {
    named += p.kind == IndexPart::At || p.kind == IndexPart::Slice;
    ellipses += p.kind == IndexPart::Ellipsis;
  }
  if (ellipses > 1) raise(ErrorKind::Index, "an index can only have a single ellipsis ('...')");
  if (named > nd)
    raise(ErrorKind::Index, "too many indices for array: array is " + std::to_string(nd) + "-dimensional, but " +
                                std::to_string(named) + " were indexed");
  const std::vector<int64_t> strides = this->strides();
  Array r;
  r.owner_ = owner_;
  r.dtype_ = dtype_;
  int64_t offset = 0;
  int d = 0;
  auto keep = [&](int64_t size, int64_t stride) {
    r.shape_.push_back(size);
    r.strides_.push_back(stride);
  };
  for (const IndexPart& p : parts) {
    if (p.kind == IndexPart::At) {
      const int64_t n = shape_[d];
      int64_t i = p.start;
      if (i < -n || i >= n)
        raise(ErrorKind::Index, "index " + std::to_string(i) + " is out of bounds for axis " + std::to_string(d) +
                                    " with size " + std::to_string(n));
      offset += (i < 0 ? i + n : i) * strides[d];
      ++d;
    } else if (p.kind == IndexPart::Slice) {
      int64_t start, step, count;
      slice_range(p, shape_[d], start, step, count);
      if (count > 0) offset += start * strides[d];
      keep(count, step * strides[d]);
      ++d;
    } else if (p.kind == IndexPart::NewAxis) {
      keep(1, 0);
    } else {  // `...`: the dims no part names, as they are
      for (int k = 0; k < nd - named; ++k, ++d) keep(shape_[d], strides[d]);
    }
  }
  for (; d < nd; ++d) keep(shape_[d], strides[d]);
  r.data_ = data_ + offset * static_cast<int64_t>(item_size(dtype_));
  if (r.shape_.empty()) r.strides_.clear();  // 0-d: one element at data_
  return r;
}

// A basic-index write a[parts] = value (NumPy's and torch's item assignment through ints, slices,
// `...` and None), as opgen.assign_region takes it: the region's first index and step along each of
// a's dims, and value as a view of the region's shape at a's rank. value broadcasts to the view
// a[parts] as setitem broadcasts it (its leading dims of 1 beyond the view's rank dropped, then
// NumPy's rules one way: each dim equal or 1); an integer index's dim is a dim of 1 of the region
// and a None's dim of 1 is dropped. No copy: the value is a view of value's memory (stride 0 where
// it broadcasts). a[parts] is checked as a read checks it (IndexError, ValueError for a step of 0).
struct Region {
  Array value;
  std::vector<int64_t> starts, steps;
};

// A shape as NumPy's messages write it, (3,) or (2,4); torch's: [3], [2, 4].
inline std::string shape_text(const std::vector<int64_t>& shape, bool torch) {
  std::string s = torch ? "[" : "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? (torch ? ", " : ",") : "") + std::to_string(shape[i]);
  return s + (torch ? "]" : shape.size() == 1 ? ",)" : ")");
}

// in_place: the write of an augmented operator (a += v, torch's t.add_(v)), whose value is a's
// broadcast with v: it must have a's own shape, no leading dims of 1 dropped (NumPy's ValueError
// "non-broadcastable output operand", torch's RuntimeError otherwise).
inline Region region(const Array& a, const std::vector<IndexPart>& parts, const Array& value, bool torch,
                     bool in_place = false) {
  const std::vector<int64_t> view_shape = a.subscript(parts).shape();  // the read's checks and errors
  const int nd = a.ndim();
  int named = 0;
  for (const IndexPart& p : parts) named += p.kind == IndexPart::At || p.kind == IndexPart::Slice;
  Region r;
  r.starts.assign(static_cast<size_t>(nd), 0);
  r.steps.assign(static_cast<size_t>(nd), 1);
  std::vector<int64_t> counts(static_cast<size_t>(nd), 1);
  std::vector<int> dim_of;  // each view dim's dim of a, or -1 for a None's
  int d = 0;
  auto whole = [&]() {
    counts[d] = a.shape()[d];
    dim_of.push_back(d++);
  };
  for (const IndexPart& p : parts) {
    if (p.kind == IndexPart::At) {
      const int64_t n = a.shape()[d];
      r.starts[d++] = p.start < 0 ? p.start + n : p.start;  // in range: subscript checked it
    } else if (p.kind == IndexPart::Slice) {
      slice_range(p, a.shape()[d], r.starts[d], r.steps[d], counts[d]);
      dim_of.push_back(d++);
    } else if (p.kind == IndexPart::NewAxis) {
      dim_of.push_back(-1);
    } else {
      for (int k = 0; k < nd - named; ++k) whole();
    }
  }
  while (d < nd) whole();
  // value against the view's shape, right-aligned, after its extra leading dims of 1.
  const std::vector<int64_t>& vshape = value.shape();
  const std::vector<int64_t> vstrides = value.strides();
  size_t skip = 0;
  while (!in_place && vshape.size() - skip > view_shape.size() && vshape[skip] == 1) ++skip;
  bool fits = vshape.size() - skip <= view_shape.size();
  std::vector<int64_t> stride_of(view_shape.size(), 0);  // value's stride along each view dim
  for (size_t j = 0; fits && j < vshape.size() - skip; ++j) {
    const size_t v = vshape.size() - 1 - j, w = view_shape.size() - 1 - j;
    if (vshape[v] == view_shape[w])
      stride_of[w] = vshape[v] == 1 ? 0 : vstrides[v];
    else
      fits = vshape[v] == 1;
  }
  if (!fits && in_place) {
    if (!torch)
      raise(ErrorKind::Value, "non-broadcastable output operand with shape " + shape_text(view_shape, false) +
                                  " doesn't match the broadcast shape " + shape_text(vshape, false));
    raise(ErrorKind::Internal, "output with shape " + shape_text(view_shape, true) +
                                   " doesn't match the broadcast shape " + shape_text(vshape, true));
  }
  if (!fits) {
    if (!torch)
      raise(ErrorKind::Value, "could not broadcast input array from shape " + shape_text(vshape, false) +
                                  " into shape " + shape_text(view_shape, false));
    raise(ErrorKind::Internal, "shape mismatch: value tensor of shape " + shape_text(vshape, true) +
                                   " cannot be broadcast to indexing result of shape " + shape_text(view_shape, true));
  }
  std::vector<int64_t> strides(static_cast<size_t>(nd), 0);
  for (size_t j = 0; j < dim_of.size(); ++j)
    if (dim_of[j] >= 0) strides[static_cast<size_t>(dim_of[j])] = stride_of[j];
  r.value = value.with_layout(counts, strides);
  return r;
}

// Output shapes, from the spec's shape rule (the shim checks them, so they must be exact).
inline std::vector<int64_t> shape_same_as(const Array& a) { return a.shape(); }

// Creation rules (opgen.spec.shapes.creation_shape): numpy.zeros' shape itself, numpy.arange's length;
// {0} where the op rejects the parameters (the shim then raises NumPy's error before it looks at out).
inline std::vector<int64_t> shape_sized(const std::vector<int64_t>& shape) {
  for (int64_t d : shape) if (d < 0) return {0};
  if (shape.size() > OPGEN_MAX_DIMS) return {0};
  return shape;
}

template <typename T>
inline std::vector<int64_t> shape_arange(T start, T stop, T step) {
  if (step == 0) return {0};
  const double q = static_cast<double>(static_cast<long double>(stop) - static_cast<long double>(start)) /
                   static_cast<double>(step);
  if (!std::isfinite(q) || std::ceil(q) >= 9223372036854775808.0) return {0};
  const double n = std::ceil(q);
  return {n > 0 ? static_cast<int64_t>(n) : int64_t{0}};
}

// A library argument the native kernel reads from a tensor's shape instead (layer_norm's
// normalized_shape is weight's): checked, then the tensor goes on.
inline Array checked_shape(const Array& a, const std::vector<int64_t>& shape, const std::string& message) {
  if (a.shape() != shape) raise(ErrorKind::Value, message);
  return a;
}

inline std::vector<int64_t> shape_reduce(const Array& a, int64_t axis) {
  std::vector<int64_t> s = a.shape();
  s.erase(s.begin() + shim::normalize_axis(axis, a.ndim()));
  return s;
}

// A reduce rule with keepdims: the reduced axis kept as size 1 when keepdims is true.
inline std::vector<int64_t> shape_reduce(const Array& a, int64_t axis, bool keepdims) {
  if (!keepdims) return shape_reduce(a, axis);
  std::vector<int64_t> s = a.shape();
  s[shim::normalize_axis(axis, a.ndim())] = 1;
  return s;
}

// torch.topk (opgen.spec.shapes.topk_shape): dim's length becomes k; a 0-d input stays 0-d. {0} where
// torch rejects dim or k (the shim then raises IndexError in torch's words before it looks at out).
inline std::vector<int64_t> shape_topk(const Array& a, int64_t dim, int64_t k) {
  const int64_t nd = a.ndim() > 0 ? a.ndim() : 1;
  if (dim < -nd || dim >= nd) return {0};
  if (a.ndim() == 0) return k == 0 || k == 1 ? std::vector<int64_t>{} : std::vector<int64_t>{0};
  std::vector<int64_t> s = a.shape();
  const size_t at = static_cast<size_t>(dim < 0 ? dim + nd : dim);
  if (k < 0 || k > s[at]) return {0};
  s[at] = k;
  return s;
}

// Data-movement rules (opgen.spec.shapes.movement_shape): out's shape where the op accepts the
// parameters; {0} where it does not (the shim then raises ValueError before it looks at out).
inline std::vector<int64_t> shape_permute(const Array& a, const std::vector<int64_t>& axes) {
  const int64_t nd = a.ndim();
  if (static_cast<int64_t>(axes.size()) != nd) return {0};
  std::vector<int64_t> s;
  std::vector<char> seen(static_cast<size_t>(nd), 0);
  for (int64_t ax : axes) {
    if (ax < -nd || ax >= nd) return {0};
    const int64_t k = ax < 0 ? ax + nd : ax;
    if (seen[static_cast<size_t>(k)]) return {0};
    seen[static_cast<size_t>(k)] = 1;
    s.push_back(a.shape()[static_cast<size_t>(k)]);
  }
  return s;
}

inline std::vector<int64_t> shape_reshape(const Array& a, const std::vector<int64_t>& shape) {
  int64_t size = 1, known = 1, unknown = -1;
  for (int64_t d : a.shape()) size *= d;
  bool big = false;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] < 0) {
      if (unknown >= 0) return {0};
      unknown = static_cast<int64_t>(i);
    } else if (shape[i] == 0) {
      known = 0;
      big = false;
    } else if (known != 0 && (big || __builtin_mul_overflow(known, shape[i], &known))) {
      big = true;
    }
  }
  if (big || (unknown >= 0 ? (known == 0 || size % known != 0) : known != size)) return {0};
  std::vector<int64_t> s(shape);
  if (unknown >= 0) s[static_cast<size_t>(unknown)] = size / known;
  return s;
}

// numpy.broadcast_to: the target shape itself where a broadcasts to it ({0} otherwise: the kernel's
// shim then raises NumPy's ValueError).
inline std::vector<int64_t> shape_broadcast_to(const Array& a, const std::vector<int64_t>& shape) {
  const int64_t nd = a.ndim(), n = static_cast<int64_t>(shape.size());
  for (int64_t d : shape) if (d < 0) return {0};
  if (n < nd) return {0};
  for (int64_t i = 0; i < nd; ++i) {
    const int64_t s = a.shape()[static_cast<size_t>(i)], d = shape[static_cast<size_t>(n - nd + i)];
    if (s != 1 && s != d) return {0};
  }
  return shape;
}

// numpy.tile: a's shape and reps, the shorter padded with leading 1s, multiplied dim by dim ({0} for
// a negative rep: the kernel's shim then raises NumPy's ValueError).
inline std::vector<int64_t> shape_tile(const Array& a, const std::vector<int64_t>& reps) {
  const int64_t nd = a.ndim(), nr = static_cast<int64_t>(reps.size()), d = nd > nr ? nd : nr;
  int64_t size = 1;
  for (int64_t n : a.shape()) size *= n;
  std::vector<int64_t> s;
  for (int64_t i = 0; i < d; ++i) {
    const int64_t xi = i - (d - nd), ri = i - (d - nr), r = ri >= 0 ? reps[static_cast<size_t>(ri)] : 1;
    const int64_t o = (xi >= 0 ? a.shape()[static_cast<size_t>(xi)] : 1) * r;
    if ((r < 0 && size != 0) || o < 0) return {0};  // NumPy: a negative rep only passes on an empty dim of an empty array
    s.push_back(o);
  }
  return s;
}

// torch.nn.functional.pad, mode 'constant' (the torch_pad rule): (before, after) pairs from the last
// dim backwards, a negative entry cropping; {0} where torch refuses them (the kernel's shim then
// raises its ValueError).
inline std::vector<int64_t> shape_torch_pad(const Array& a, const std::vector<int64_t>& pad) {
  const int64_t nd = a.ndim(), np = static_cast<int64_t>(pad.size());
  if (np % 2 != 0 || np > 2 * nd) return {0};
  std::vector<int64_t> s = a.shape();
  for (int64_t k = 0; k < np / 2; ++k) {
    const size_t d = static_cast<size_t>(nd - 1 - k);
    const int64_t b = pad[static_cast<size_t>(2 * k)], e = pad[static_cast<size_t>(2 * k + 1)], n = s[d];
    if (n + std::min<int64_t>(b, 0) + std::min<int64_t>(e, 0) < 0 || n + b + e < 0) return {0};
    s[d] = n + b + e;
  }
  return s;
}

// numpy.pad (the pad rule, opgen.spec.shapes.movement_shape): each dim grown by its (before, after)
// pair: 1 width for all, one pair for all, or a pair per dim; {0} for widths or a mode NumPy rejects
// (the kernel's shim then raises its ValueError).
inline std::vector<int64_t> shape_pad(const Array& a, const std::vector<int64_t>& widths, const std::string& mode) {
  const int64_t nd = a.ndim(), nw = static_cast<int64_t>(widths.size());
  if (mode != "constant" && mode != "edge" && mode != "reflect" && mode != "wrap") return {0};
  if (nw == 0 || (nw != 1 && nw != 2 && nw != 2 * nd)) return {0};
  for (int64_t w : widths) if (w < 0) return {0};
  std::vector<int64_t> s;
  for (int64_t i = 0; i < nd; ++i) {
    const size_t b = nw == 2 * nd ? static_cast<size_t>(2 * i) : 0;
    const int64_t before = widths[b], after = widths[nw == 1 ? 0 : b + 1], n = a.shape()[static_cast<size_t>(i)];
    if (mode != "constant" && n == 0 && (before != 0 || after != 0)) return {0};
    s.push_back(n + before + after);
  }
  return s;
}

// torch's N-d pooling (pool and pool2d rules; opgen.spec.shapes.pool_error / pool_shape): a's
// shape with the last N dims pooled by pooling_output_shape (floor or ceil, dilation, the ceil
// overhang rule); for arguments torch rejects, 0 in the pooled dims (the kernel's shim then raises
// ValueError).
inline std::vector<int64_t> shape_pool(const Array& a, const std::vector<int64_t>& kernel,
                                       const std::vector<int64_t>& stride, const std::vector<int64_t>& padding,
                                       const std::vector<int64_t>& dilation, bool ceil_mode, bool check_input_size) {
  const int64_t n = static_cast<int64_t>(kernel.size()), nd = a.ndim();
  if (nd < n) return a.shape();
  std::vector<int64_t> s(a.shape().begin(), a.shape().end() - n), bad = s;
  for (int64_t i = 0; i < n; ++i) bad.push_back(0);
  for (int64_t i = 0; i < n; ++i) {
    const size_t j = static_cast<size_t>(i);
    const int64_t L = a.shape()[static_cast<size_t>(nd - n + i)], k = kernel[j], st = stride[j], p = padding[j],
                  d = dilation[j];
    if (k < 1 || st < 1 || p < 0 || d < 1 || p > k / 2 || L == 0 || (check_input_size && L < k)) return bad;
    const int64_t num = L + 2 * p - d * (k - 1) - 1 + (ceil_mode ? st - 1 : 0);
    if (num < 0) return bad;
    int64_t o = num / st + 1;
    if (ceil_mode && (o - 1) * st >= L + p) --o;
    if (o < 1) return bad;
    s.push_back(o);
  }
  return s;
}

inline std::vector<int64_t> shape_expand_dims(const Array& a, int64_t axis) {
  const int64_t nd = a.ndim();
  if (axis < -nd - 1 || axis > nd) return {0};
  std::vector<int64_t> s = a.shape();
  s.insert(s.begin() + (axis < 0 ? axis + nd + 1 : axis), 1);
  return s;
}

// numpy.dot(a, b): a 0-d operand gives the other's shape; else a's dims but its last, then b's but its
// second-to-last (b's only dim when 1-d). Lengths that do not align, or more than OPGEN_MAX_DIMS dims, give
// {0}: the shim raises NumPy's ValueError for them.
inline std::vector<int64_t> shape_dot(const Array& a, const Array& b) {
  const std::vector<int64_t> sa = a.shape(), sb = b.shape();
  if (sa.empty()) return sb;
  if (sb.empty()) return sa;
  const size_t k = sb.size() == 1 ? 0 : sb.size() - 2;  // b's contracted dim
  if (sa.back() != sb[k]) return {0};
  std::vector<int64_t> s(sa.begin(), sa.end() - 1);
  for (size_t d = 0; d < sb.size(); ++d)
    if (d != k) s.push_back(sb[d]);
  if (s.size() > OPGEN_MAX_DIMS) return {0};
  return s;
}

inline std::vector<int64_t> shape_squeeze(const Array& a, int64_t axis) {
  const int64_t nd = a.ndim();
  if (nd == 0 && (axis == 0 || axis == -1)) return {};  // NumPy: a 0-d array squeezes to itself
  if (axis < -nd || axis >= nd) return {0};
  const int64_t k = axis < 0 ? axis + nd : axis;
  if (a.shape()[static_cast<size_t>(k)] != 1) return {0};
  std::vector<int64_t> s = a.shape();
  s.erase(s.begin() + k);
  return s;
}

// numpy.concatenate (stack false) and numpy.stack (opgen.spec.shapes.join_shape): out's shape where
// NumPy accepts the elements and the axis; {0} where it does not (the kernel's shim then raises
// NumPy's ValueError in NumPy's words).
inline std::vector<int64_t> shape_join(const std::vector<Array>& xs, int64_t axis, bool stack) {
  if (xs.empty()) return {0};
  std::vector<int64_t> first = xs[0].shape();
  const int64_t nd = static_cast<int64_t>(first.size());
  if (stack) {
    for (const Array& x : xs)
      if (x.shape() != first) return {0};
    if (axis < -(nd + 1) || axis > nd || nd + 1 > 8) return {0};
    first.insert(first.begin() + (axis < 0 ? axis + nd + 1 : axis), static_cast<int64_t>(xs.size()));
    return first;
  }
  if (nd == 0 || axis < -nd || axis >= nd) return {0};
  const int64_t ax = axis < 0 ? axis + nd : axis;
  int64_t total = 0;
  for (const Array& x : xs) {
    if (x.ndim() != nd) return {0};
    for (int64_t d = 0; d < nd; ++d)
      if (d != ax && x.shape()[static_cast<size_t>(d)] != first[static_cast<size_t>(d)]) return {0};
    total += x.shape()[static_cast<size_t>(ax)];
  }
  first[static_cast<size_t>(ax)] = total;
  return first;
}

// Gathers (opgen.spec.shapes.gather_shape): out's shape where NumPy accepts the shapes and the axis;
// {0} where it does not (the kernel's shim then raises NumPy's ValueError or IndexError; the index
// values are the shim's to check). numpy.take: a.shape[:axis] + indices.shape + a.shape[axis+1:], a
// 0-d a taken as shape (1,).
// torch.index_select (opgen.spec.shapes.gather_shape): a's shape with dim's length replaced by the
// number of indices (a vector or 0-d), a 0-d a giving a 0-d result for one index; {0} where torch
// refuses the shapes or the dim (the kernel's shim then raises its IndexError; the values are the
// shim's to check).
inline std::vector<int64_t> shape_index_select(const Array& a, const Array& index, int64_t dim) {
  const int64_t nd0 = a.ndim(), nd = nd0 > 0 ? nd0 : 1;
  if (dim < -nd || dim >= nd || index.ndim() > 1) return {0};
  int64_t count = 1;
  for (int64_t d : index.shape()) count *= d;
  if (nd0 == 0) return count == 1 ? std::vector<int64_t>{} : std::vector<int64_t>{0};
  std::vector<int64_t> s = a.shape();
  const size_t k = static_cast<size_t>(dim < 0 ? dim + nd : dim);
  if (s[k] == 0 && count != 0) return {0};
  s[k] = count;
  return s;
}

inline std::vector<int64_t> shape_take(const Array& a, const Array& indices, int64_t axis) {
  std::vector<int64_t> x = a.shape();
  if (x.empty()) x.push_back(1);
  const int64_t nd = static_cast<int64_t>(x.size());
  if (axis < -nd || axis >= nd) return {0};
  const size_t k = static_cast<size_t>(axis < 0 ? axis + nd : axis);
  std::vector<int64_t> s(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(k));
  s.insert(s.end(), indices.shape().begin(), indices.shape().end());
  s.insert(s.end(), x.begin() + static_cast<std::ptrdiff_t>(k) + 1, x.end());
  if (s.size() > OPGEN_MAX_DIMS) return {0};
  int64_t numel = 1;
  for (int64_t d : s) numel *= d;
  if (x[k] == 0 && numel != 0) return {0};
  return s;
}

// opgen.boolean_mask (opgen.spec.shapes.boolean_mask_shape): x[mask]'s bound, (mask.size,
// *x.shape[mask.ndim:]), where NumPy accepts the mask's shape; {0} where it does not (the kernel's
// shim then raises NumPy's IndexError). The kernel reports how many rows it kept (Array::first_rows).
inline std::vector<int64_t> shape_boolean_mask(const Array& x, const Array& mask) {
  if (mask.ndim() > x.ndim()) return {0};
  for (int d = 0; d < mask.ndim(); ++d) {
    const int64_t n = x.shape()[static_cast<size_t>(d)], m = mask.shape()[static_cast<size_t>(d)];
    if (n != m && !(n == 1 && m == 0)) return {0};
  }
  std::vector<int64_t> s{mask.numel()};
  s.insert(s.end(), x.shape().begin() + mask.ndim(), x.shape().end());
  return s;
}

// The count a bounded result's kernel reports: a 0-d int64.
inline std::vector<int64_t> shape_count_of(const Array&) { return {}; }

// numpy.take_along_axis: arr's and indices' broadcast on every dim but axis, indices' length along it.
inline std::vector<int64_t> shape_take_along_axis(const Array& arr, const Array& indices, int64_t axis) {
  const int64_t nd = arr.ndim();
  if (axis < -nd || axis >= nd || indices.ndim() != nd) return {0};
  const size_t k = static_cast<size_t>(axis < 0 ? axis + nd : axis);
  std::vector<int64_t> s;
  for (size_t d = 0; d < static_cast<size_t>(nd); ++d) {
    const int64_t a = arr.shape()[d], i = indices.shape()[d];
    if (d == k) s.push_back(i);
    else if (a == i || i == 1) s.push_back(a);
    else if (a == 1) s.push_back(i);
    else return {0};
  }
  return s;
}

inline std::vector<int64_t> shape_elementwise(std::initializer_list<const Array*> inputs) {
  std::vector<std::vector<int64_t>> shapes;
  for (const Array* a : inputs) shapes.push_back(a->shape());
  return shim::broadcast_shapes(shapes);
}

// Transposes (x.T, x.mT, swapaxes, torch.transpose, permute): views, as NumPy and torch make them.
inline int64_t view_axis(int64_t axis, int64_t nd) {
  if (axis < -nd || axis >= nd)
    raise(ErrorKind::Index, "axis " + std::to_string(axis) + " is out of bounds for array of dimension " +
                                std::to_string(nd));
  return axis < 0 ? axis + nd : axis;
}

inline Array reverse_axes(const Array& x) {
  std::vector<int64_t> order(static_cast<size_t>(x.ndim()));
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int64_t>(order.size() - 1 - i);
  return x.permuted(order);
}

// scalar_ok: torch's transpose takes a 0-d tensor as one dim (dims 0 and -1 leave it as it is);
// NumPy's swapaxes refuses it.
inline Array swap_axes(const Array& x, int64_t a, int64_t b, bool scalar_ok) {
  if (x.ndim() == 0 && scalar_ok) {
    view_axis(a, 1);
    view_axis(b, 1);
    return x;
  }
  std::vector<int64_t> order(static_cast<size_t>(x.ndim()));
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int64_t>(i);
  std::swap(order[static_cast<size_t>(view_axis(a, x.ndim()))], order[static_cast<size_t>(view_axis(b, x.ndim()))]);
  return x.permuted(order);
}

inline Array matrix_transpose(const Array& x) {
  if (x.ndim() < 2) raise(ErrorKind::Value, "matrix transpose with ndim < 2 is undefined");
  return swap_axes(x, -2, -1, false);
}

inline Array permute_axes(const Array& x, const std::vector<int64_t>& axes) {
  const int64_t nd = x.ndim();
  if (static_cast<int64_t>(axes.size()) != nd) raise(ErrorKind::Value, "axes don't match array");
  std::vector<int64_t> order;
  std::vector<bool> seen(static_cast<size_t>(nd), false);
  for (int64_t a : axes) {
    const int64_t k = view_axis(a, nd);
    if (seen[static_cast<size_t>(k)]) raise(ErrorKind::Value, "repeated axis in transpose");
    seen[static_cast<size_t>(k)] = true;
    order.push_back(k);
  }
  return x.permuted(order);
}

// NumPy's flexible core dims (matmul's (m?,k),(k,n?)->(m?,n?)): an operand with fewer dims than its
// core lacks its flexible ones, which the kernel always sees, so they are inserted here as size-1
// dims (`lacked` says so, for without_unit_dims on the result). `flexible`: one flag per core dim.
inline Array with_flexible_dims(const Array& x, std::initializer_list<bool> flexible, bool& lacked) {
  int fixed = 0;
  for (bool f : flexible) fixed += !f;
  lacked = x.ndim() < static_cast<int>(flexible.size());
  if (!lacked) return x;
  if (x.ndim() < fixed)
    raise(ErrorKind::Value, "an input has fewer dims than its core dims (has " + std::to_string(x.ndim()) +
                                ", needs at least " + std::to_string(fixed) + ")");
  std::vector<IndexPart> parts{IndexPart{IndexPart::Ellipsis}};
  for (bool f : flexible) parts.push_back(IndexPart{f ? IndexPart::NewAxis : IndexPart::Slice});
  return x.subscript(parts);
}

struct Core {
  const Array* array;
  std::vector<const char*> dims;  // the input's core dimension names, e.g. {"m", "k"}
};

// gufunc rule, e.g. (m,k),(k,n)->(m,n): loop dims broadcast, core dims agree by name.
inline std::vector<int64_t> shape_gufunc(std::initializer_list<Core> inputs, std::initializer_list<const char*> out_dims) {
  std::vector<std::vector<int64_t>> loops;
  std::vector<std::pair<std::string, int64_t>> sizes;
  for (const Core& in : inputs) {
    const int k = static_cast<int>(in.dims.size());
    const auto& s = in.array->shape();
    if (in.array->ndim() < k) raise(ErrorKind::Value, "an input has fewer dims than its core dims");
    loops.emplace_back(s.begin(), s.end() - k);
    for (int i = 0; i < k; ++i) {
      int64_t size = s[s.size() - k + i];
      bool known = false;
      for (auto& [name, have] : sizes) {
        if (name == in.dims[i]) {
          known = true;
          if (have != size) raise(ErrorKind::Value, std::string("core dimension ") + in.dims[i] + " differs between inputs");
        }
      }
      if (!known) sizes.emplace_back(in.dims[i], size);
    }
  }
  std::vector<int64_t> shape = shim::broadcast_shapes(loops);
  for (const char* d : out_dims) {
    if (std::string(d) == "1") {  // a kept dim of size 1 (native_layer_norm's mean: (d)->(1))
      shape.push_back(1);
      continue;
    }
    for (auto& [name, have] : sizes) {
      if (name == d) shape.push_back(have);
    }
  }
  return shape;
}

// ---------------------------------------------------------------- strings, lists, dicts

inline std::string take_string(opgen_string& s) {
  std::string r(s.data, static_cast<size_t>(s.len));
  opgen_free(s.data);
  s.data = nullptr;
  return r;
}

template <class T>
std::vector<T> take_list(opgen_list& l) {
  const T* items = static_cast<const T*>(l.data);
  std::vector<T> r(items, items + l.len);
  opgen_free(l.data);
  l.data = nullptr;
  return r;
}

inline std::vector<std::string> take_strings(opgen_list& l) {
  const auto* items = static_cast<const opgen_string*>(l.data);
  std::vector<std::string> r;
  r.reserve(static_cast<size_t>(l.len));
  for (int64_t i = 0; i < l.len; ++i) r.emplace_back(items[i].data, static_cast<size_t>(items[i].len));
  opgen_free(l.data);
  l.data = nullptr;
  return r;
}

// Borrowed views of strings for a shim's `const opgen_string*` argument.
inline std::vector<opgen_string> string_views(const std::vector<std::string>& xs) {
  std::vector<opgen_string> r;
  r.reserve(xs.size());
  for (const auto& x : xs) r.push_back(opgen_string{const_cast<char*>(x.data()), static_cast<int64_t>(x.size())});
  return r;
}

// len(s) of a str: code points, as Python counts them (UTF-8 continuation bytes are not counted).
inline int64_t str_len(const std::string& s) {
  int64_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// xs[i] with Python's negative indices and IndexError.
template <class T>
const T& item(const std::vector<T>& xs, int64_t i) {
  const int64_t n = static_cast<int64_t>(xs.size());
  if (i < -n || i >= n) raise(ErrorKind::Index, "list index out of range");
  return xs[static_cast<size_t>(i < 0 ? i + n : i)];
}

// A str-keyed dict (module constant tables and dict parameters); insertion order kept.
template <class T>
class Dict {
 public:
  Dict() = default;
  Dict(std::initializer_list<std::pair<std::string, T>> items) {
    for (const auto& kv : items) put(kv.first, kv.second);
  }
  void put(const std::string& key, const T& value) {
    auto found = index_.find(key);
    if (found != index_.end()) {
      items_[found->second].second = value;  // a repeated key keeps its place, the last value wins
    } else {
      index_.emplace(key, items_.size());
      items_.emplace_back(key, value);
    }
  }
  const T& at(const std::string& key) const {
    auto found = index_.find(key);
    if (found == index_.end()) raise(KeyError, key);  // the host raises KeyError(key)
    return items_[found->second].second;
  }
  int64_t size() const { return static_cast<int64_t>(items_.size()); }
  bool contains(const std::string& key) const { return index_.count(key) != 0; }
  // What Python's d.items() / d.keys() / d.values() iterate, in insertion order.
  const std::vector<std::pair<std::string, T>>& items() const { return items_; }
  std::vector<std::string> keys() const {
    std::vector<std::string> r;
    r.reserve(items_.size());
    for (const auto& kv : items_) r.push_back(kv.first);
    return r;
  }
  std::vector<T> values() const {
    std::vector<T> r;
    r.reserve(items_.size());
    for (const auto& kv : items_) r.push_back(kv.second);
    return r;
  }

 private:
  std::vector<std::pair<std::string, T>> items_;
  std::unordered_map<std::string, size_t> index_;
};

// A Python number meeting an array (x * 0.5): a 0-d array of the array's dtype, as NumPy 2 (NEP 50)
// and torch treat Python scalars. An int outside an integer dtype's range is NumPy's OverflowError;
// torch (`wraps`) keeps its low bits. A float becomes a float16 rounded once from the double, as
// NumPy converts it (the compiler passes bfloat16 arrays, and torch's half arrays, only numbers they
// hold exactly).
inline Array weak_scalar(opgen_dtype dt, double v) {
  Array a = Array::empty(dt, {});
  if (dt.code == 2 && dt.bits == 16) {
    const _Float16 h = static_cast<_Float16>(v);  // GCC rounds double to half directly, to nearest even
    std::memcpy(a.view().data, &h, sizeof h);
  } else if (dt.code == 4 && dt.bits == 16) {  // bfloat16: only numbers it holds exactly come here
    const bfloat16 h = to_bfloat16(static_cast<float>(v));
    std::memcpy(a.view().data, &h, sizeof h);
  } else if (dt.code == 2 && dt.bits == 32) {
    const float f = static_cast<float>(v);
    std::memcpy(a.view().data, &f, sizeof f);
  } else if (dt.code == 2 && dt.bits == 64) {
    std::memcpy(a.view().data, &v, sizeof v);
  } else {
    raise(ErrorKind::Value, "a Python float cannot become an array of this dtype here");
  }
  return a;
}
inline Array weak_scalar(opgen_dtype dt, int64_t v, bool wraps = false) {
  if (dt.code == 2 || dt.code == 4) return weak_scalar(dt, static_cast<double>(v));  // through a double, as NumPy
  Array a = Array::empty(dt, {});
  const bool is_signed = dt.code == 0;
  const int bits = dt.bits;
  const bool fits = is_signed ? (bits == 64 || (v >= -(INT64_C(1) << (bits - 1)) && v < (INT64_C(1) << (bits - 1))))
                              : (v >= 0 && (bits == 64 || v < (INT64_C(1) << bits)));
  if (!fits && !wraps)
    raise(ErrorKind::Overflow, "Python integer " + std::to_string(v) + " out of bounds for " +
                                   (is_signed ? "int" : "uint") + std::to_string(bits));
  const uint64_t u = static_cast<uint64_t>(v);
  std::memcpy(a.view().data, &u, static_cast<size_t>(bits) / 8);  // little-endian: the low bytes
  return a;
}
inline Array weak_scalar(opgen_dtype dt, bool v, bool wraps = false) {
  return weak_scalar(dt, static_cast<int64_t>(v), wraps);
}

// A list of ints as the 1-D int64 array NumPy and torch make of it where it indexes an array (x[[0, 2]]).
inline Array index_array(const std::vector<int64_t>& xs) {
  Array a = Array::empty(opgen_dtype{0, 64, 1}, {static_cast<int64_t>(xs.size())});
  if (!xs.empty()) std::memcpy(a.view().data, xs.data(), xs.size() * sizeof(int64_t));
  return a;
}

// np.array(xs), torch.tensor(xs) of a list of Python numbers (int64_t, double, or bool as uint8_t): a
// 1-d array of the dtype the library gives them (float64 or float32, int64, bool), each value converted once.
template <class T>
inline Array array_from_list(const std::vector<T>& xs, opgen_dtype dt) {
  Array a = Array::empty(dt, {static_cast<int64_t>(xs.size())});
  void* out = a.view().data;
  for (size_t i = 0; i < xs.size(); ++i) {
    if (dt.code == 2 && dt.bits == 64) static_cast<double*>(out)[i] = static_cast<double>(xs[i]);
    else if (dt.code == 2 && dt.bits == 32) static_cast<float*>(out)[i] = static_cast<float>(xs[i]);
    else if (dt.code == 0 && dt.bits == 64) static_cast<int64_t*>(out)[i] = static_cast<int64_t>(xs[i]);
    else if (dt.code == 6) static_cast<uint8_t*>(out)[i] = xs[i] ? 1 : 0;
    else raise(ErrorKind::Internal, "an array of this dtype is not made from a list");
  }
  return a;
}

// ---------------------------------------------------------------- Python builtins

// range(start, stop, step): how many values it yields (Python's ValueError for a zero step), and
// the k-th of them. Unsigned arithmetic: stop - start may not fit in int64, the values always do.
inline int64_t range_len(int64_t start, int64_t stop, int64_t step) {
  if (step == 0) raise(ErrorKind::Value, "range() arg 3 must not be zero");
  if (step > 0 ? start >= stop : start <= stop) return 0;
  const uint64_t span = step > 0 ? static_cast<uint64_t>(stop) - static_cast<uint64_t>(start) - 1
                                 : static_cast<uint64_t>(start) - static_cast<uint64_t>(stop) - 1;
  const uint64_t by = step > 0 ? static_cast<uint64_t>(step) : 0 - static_cast<uint64_t>(step);
  const uint64_t n = span / by + 1;
  // Up to 2^64 - 1 values; more than 2^63 - 1 cannot finish, but a break may still leave such a loop.
  return n > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(n);
}
inline int64_t range_at(int64_t start, int64_t step, int64_t k) {
  return static_cast<int64_t>(static_cast<uint64_t>(start) + static_cast<uint64_t>(k) * static_cast<uint64_t>(step));
}
inline int64_t count_from(int64_t start, size_t k) {  // enumerate's counter: Python's does not overflow
  int64_t r;
  if (__builtin_add_overflow(start, static_cast<int64_t>(k), &r))
    raise(ErrorKind::Overflow, "enumerate()'s count does not fit in int64");
  return r;
}

// A str's code points, each a str, as Python iterates it (the input is valid UTF-8).
inline std::vector<std::string> code_points(const std::string& s) {
  std::vector<std::string> r;
  for (size_t i = 0; i < s.size();) {
    size_t n = 1;
    while (i + n < s.size() && (static_cast<unsigned char>(s[i + n]) & 0xC0) == 0x80) ++n;
    r.push_back(s.substr(i, n));
    i += n;
  }
  return r;
}

// s[i]: the i-th code point (negative from the end), IndexError past either end.
inline std::string str_item(const std::string& s, int64_t i) {
  const std::vector<std::string> points = code_points(s);
  const int64_t n = static_cast<int64_t>(points.size());
  if (i < -n || i >= n) raise(ErrorKind::Index, "string index out of range");
  return points[static_cast<size_t>(i < 0 ? i + n : i)];
}

// xs[a:b:c] of a list, s[a:b:c] of a str (by code points), as Python slices them.
template <class T> std::vector<T> slice_list(const std::vector<T>& xs, const IndexPart& p) {
  int64_t start, step, count;
  slice_range(p, static_cast<int64_t>(xs.size()), start, step, count);
  std::vector<T> r;
  r.reserve(static_cast<size_t>(count));
  for (int64_t k = 0; k < count; ++k) r.push_back(xs[static_cast<size_t>(start + k * step)]);
  return r;
}

inline std::string slice_str(const std::string& s, const IndexPart& p) {
  std::string r;
  for (const std::string& c : slice_list(code_points(s), p)) r += c;
  return r;
}

// Truthiness, as Python's bool(x) and `if x:` see it (nan is true).
// ---------------------------------------------------------------- lists and dicts changed in place

// xs[i] = v, with Python's negative indices and its IndexError.
template <class T, class V>
void set_item(std::vector<T>& xs, int64_t i, V&& v) {
  const int64_t n = static_cast<int64_t>(xs.size());
  if (i < -n || i >= n) raise(ErrorKind::Index, "list assignment index out of range");
  xs[static_cast<size_t>(i < 0 ? i + n : i)] = static_cast<T>(std::forward<V>(v));
}

template <class T>
void extend(std::vector<T>& xs, const std::vector<T>& ys) {
  if (&xs == &ys) {  // xs.extend(xs) doubles it, as Python's does
    const std::vector<T> copy = ys;
    xs.insert(xs.end(), copy.begin(), copy.end());
  } else {
    xs.insert(xs.end(), ys.begin(), ys.end());
  }
}

template <class T>
std::vector<T> concat(const std::vector<T>& a, const std::vector<T>& b) {
  std::vector<T> r;
  r.reserve(a.size() + b.size());
  r.insert(r.end(), a.begin(), a.end());
  r.insert(r.end(), b.begin(), b.end());
  return r;
}

// [0] * n: n <= 0 gives an empty list, as in Python.
template <class T>
std::vector<T> repeat(const std::vector<T>& xs, int64_t n) {
  std::vector<T> r;
  if (n <= 0 || xs.empty()) return r;
  if (static_cast<uint64_t>(n) > r.max_size() / xs.size()) throw std::bad_alloc();  // Python's MemoryError
  r.reserve(xs.size() * static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) r.insert(r.end(), xs.begin(), xs.end());
  return r;
}

// d.get(k, default): the default already has the result's type (the value widens to it).
template <class T, class D>
D dict_get(const Dict<T>& d, const std::string& key, const D& fallback) {
  return d.contains(key) ? static_cast<D>(d.at(key)) : fallback;
}

inline bool truthy(bool v) { return v; }
inline bool truthy(int64_t v) { return v != 0; }
inline bool truthy(double v) { return v != 0.0; }
inline bool truthy(uint8_t v) { return v != 0; }  // a list[bool] element
inline bool truthy(const std::string& v) { return !v.empty(); }
template <class T> bool truthy(const std::vector<T>& v) { return !v.empty(); }
template <class T> bool truthy(const Dict<T>& v) { return v.size() != 0; }

inline bool str_contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}
template <class T, class V> bool list_contains(const std::vector<T>& xs, const V& v) {
  for (const auto& x : xs)
    if (x == v) return true;
  return false;
}

inline int64_t py_abs(int64_t v) {
  if (v == INT64_MIN) raise(ErrorKind::Overflow, "abs() of the smallest int64 does not fit in int64");
  return v < 0 ? -v : v;
}
inline double py_abs(double v) { return std::fabs(v); }

// int(x) of a float: truncation toward zero, with Python's errors for nan and infinities.
inline int64_t int_of_float(double v) {
  if (std::isnan(v)) raise(ErrorKind::Value, "cannot convert float NaN to integer");
  if (std::isinf(v)) raise(ErrorKind::Overflow, "cannot convert float infinity to integer");
  const double t = std::trunc(v);
  if (!(t >= -9223372036854775808.0 && t < 9223372036854775808.0))
    raise(ErrorKind::Overflow, "int() of this float does not fit in int64");
  return static_cast<int64_t>(t);
}
// round(x) of a float: to the nearest int, ties to even.
inline int64_t round_half_even(double v) {
  if (std::isnan(v)) raise(ErrorKind::Value, "cannot convert float NaN to integer");
  if (std::isinf(v)) raise(ErrorKind::Overflow, "cannot convert float infinity to integer");
  return int_of_float(std::nearbyint(v));  // the default rounding mode: to nearest, ties to even
}

// min(a, b) / max(a, b) as Python compares: the first argument stays unless the next is strictly smaller
// (greater); so min(nan, 1.0) is nan and min(1.0, nan) is 1.0, and ties keep the first.
template <class T> T py_min2(const T& best, const T& v) { return v < best ? v : best; }
template <class T> T py_max2(const T& best, const T& v) { return v > best ? v : best; }
template <class T> T py_min(const std::vector<T>& xs) {
  if (xs.empty()) raise(ErrorKind::Value, "min() arg is an empty sequence");
  T best = xs[0];
  for (size_t i = 1; i < xs.size(); ++i) best = py_min2(best, xs[i]);
  return best;
}
template <class T> T py_max(const std::vector<T>& xs) {
  if (xs.empty()) raise(ErrorKind::Value, "max() arg is an empty sequence");
  T best = xs[0];
  for (size_t i = 1; i < xs.size(); ++i) best = py_max2(best, xs[i]);
  return best;
}

// sum(xs, start): ints add exactly (OverflowError outside int64), floats one after another from
// the start (Python up to 3.11; the compiler refuses float sums under 3.12's compensated sum).
inline int64_t add_checked(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) raise(ErrorKind::Overflow, "int64 overflow in sum()");
  return r;
}
template <class T> int64_t sum_ints(const std::vector<T>& xs, int64_t start) {
  for (const auto& x : xs) start = add_checked(start, static_cast<int64_t>(x));
  return start;
}
template <class T> double sum_floats(const std::vector<T>& xs, double start) {
  for (const auto& x : xs) start += static_cast<double>(x);
  return start;
}

template <class T> bool py_any(const std::vector<T>& xs) {
  for (const auto& x : xs)
    if (truthy(x)) return true;
  return false;
}
template <class T> bool py_all(const std::vector<T>& xs) {
  for (const auto& x : xs)
    if (!truthy(x)) return false;
  return true;
}
// sorted(xs, reverse=...): stable, as Python's sort; reverse keeps equal elements in their order.
// Python orders floats with nan by its own merge order, which is not reproduced: nan is refused.
template <class T> std::vector<T> sorted(std::vector<T> xs, bool reverse) {
  if constexpr (std::is_floating_point_v<T>) {
    for (const auto& x : xs)
      if (std::isnan(x)) raise(UnsupportedValue, "opgen compile: sorted() of floats that include nan is not supported");
  }
  if (reverse) std::stable_sort(xs.begin(), xs.end(), [](const T& a, const T& b) { return b < a; });
  else std::stable_sort(xs.begin(), xs.end());
  return xs;
}

// sorted(xs, key=f, reverse=...) with keys[i] = f(xs[i]): the items in the stable order of their keys (reverse
// keeps equal keys' items in their order, as Python's does). nan keys are refused, as sorted()'s nan is.
template <class T, class K>
std::vector<T> sorted_by(const std::vector<T>& xs, const std::vector<K>& keys, bool reverse) {
  if constexpr (std::is_floating_point_v<K>) {
    for (const auto& k : keys)
      if (std::isnan(k)) raise(UnsupportedValue, "opgen compile: sorted() by float keys that include nan is not supported");
  }
  std::vector<size_t> order(xs.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  if (reverse) std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return keys[b] < keys[a]; });
  else std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return keys[a] < keys[b]; });
  std::vector<T> out;
  out.reserve(xs.size());
  for (size_t i : order) out.push_back(xs[i]);
  return out;
}
// min/max(xs, key=f): the first item whose key no later key is below (min) or above (max): Python's own
// comparisons in its order (a later key replaces the best only when strictly smaller/larger), nan included.
template <class T, class K> T py_min_by(const std::vector<T>& xs, const std::vector<K>& keys) {
  if (xs.empty()) raise(ErrorKind::Value, "min() arg is an empty sequence");
  size_t best = 0;
  for (size_t i = 1; i < xs.size(); ++i)
    if (keys[i] < keys[best]) best = i;
  return xs[best];
}
template <class T, class K> T py_max_by(const std::vector<T>& xs, const std::vector<K>& keys) {
  if (xs.empty()) raise(ErrorKind::Value, "max() arg is an empty sequence");
  size_t best = 0;
  for (size_t i = 1; i < xs.size(); ++i)
    if (keys[i] > keys[best]) best = i;
  return xs[best];
}

// print(...): its text written to standard output (file=sys.stderr: standard error) and flushed, so that it stands where the call made it
// among what the process writes (Python's own sys.stdout has a buffer of its own: flush it to interleave).
inline void print_text(const std::string& text, std::FILE* stream) {
  std::fwrite(text.data(), 1, text.size(), stream);
  std::fflush(stream);
}

// A finally clause on the ways out of a try that are not errors (return, break, continue): run when the
// scope is left unless dismissed first (the error and fall-through paths run the clause themselves). Not
// during an unwinding: every error is caught before the scope is left, and the guard dismissed there, so
// an error the clause raises here leaves through an ordinary destructor.
class OnExit {
 public:
  template <class F> explicit OnExit(F&& f) : run_(std::forward<F>(f)) {}
  OnExit(const OnExit&) = delete;
  OnExit& operator=(const OnExit&) = delete;
  ~OnExit() noexcept(false) {
    if (armed_) run_();
  }
  void dismiss() { armed_ = false; }

 private:
  std::function<void()> run_;
  bool armed_ = true;
};

// a, b = xs: the list must have exactly as many items as names.
template <class T> const std::vector<T>& unpack(const std::vector<T>& xs, size_t n) {
  if (xs.size() > n) raise(ErrorKind::Value, "too many values to unpack (expected " + std::to_string(n) + ")");
  if (xs.size() < n)
    raise(ErrorKind::Value, "not enough values to unpack (expected " + std::to_string(n) + ", got " +
                                std::to_string(xs.size()) + ")");
  return xs;
}

// One element of any dtype at p, as the Python number T holds (float64, int64 or bool).
template <class T>
inline T element_as(const void* p, opgen_dtype dt, const std::string& name) {
  auto load = [p](auto v) { std::memcpy(&v, p, sizeof v); return v; };
  if (dt.code == 2 && dt.bits == 64) return static_cast<T>(load(double{}));
  if (dt.code == 2 && dt.bits == 32) return static_cast<T>(load(float{}));
  if (dt.code == 2 && dt.bits == 16) return static_cast<T>(static_cast<double>(load(_Float16{})));
  if (dt.code == 4 && dt.bits == 16) return static_cast<T>(to_float(load(bfloat16{})));
  if (dt.code == 0 && dt.bits == 64) return static_cast<T>(load(int64_t{}));
  if (dt.code == 0 && dt.bits == 32) return static_cast<T>(load(int32_t{}));
  if (dt.code == 0 && dt.bits == 16) return static_cast<T>(load(int16_t{}));
  if (dt.code == 0 && dt.bits == 8) return static_cast<T>(load(int8_t{}));
  if (dt.code == 1 && dt.bits == 8) return static_cast<T>(load(uint8_t{}));
  if (dt.code == 6 && dt.bits == 8) return static_cast<T>(load(uint8_t{}) != 0);
  raise(ErrorKind::Internal, name + "() of an array of this dtype is not supported");
}

// float(a), int(a), bool(a), a.item() of an array: its one element as the Python number T (double,
// int64_t or bool; the compiler picks T from the dtype's kind). NumPy 2 checks first: float() and int()
// (how 0) take only a 0-d array (TypeError), bool() (how 1) and item() (how 2) an array of one element
// of any rank (ValueError, bool()'s words differing for an empty array). torch's (how 3 float()/int(), 4
// bool(), 5 item()) take one element of any rank, else ValueError (3) or RuntimeError (4, 5).
template <class T>
inline T array_scalar(const Array& a, int how, const std::string& name) {
  const int64_t n = a.numel();
  // torch's: float()/int() ValueError, bool() and item() RuntimeError, for other than one element of any rank
  if (how == 3 && n != 1) raise(ErrorKind::Value, "only one element tensors can be converted to Python scalars");
  if (how == 4 && n != 1)
    raise(ErrorKind::Internal, n ? "Boolean value of Tensor with more than one value is ambiguous"
                                 : "Boolean value of Tensor with no values is ambiguous");
  if (how == 5 && n != 1)
    raise(ErrorKind::Internal, "a Tensor with " + std::to_string(n) + " elements cannot be converted to Scalar");
  if (how == 0 && a.ndim() != 0) raise(TypeError, "only 0-dimensional arrays can be converted to Python scalars");
  if (how == 1 && n == 0)
    raise(ErrorKind::Value, "The truth value of an empty array is ambiguous. Use `array.size > 0` to check that "
                            "an array is not empty.");
  if (how == 1 && n != 1)
    raise(ErrorKind::Value, "The truth value of an array with more than one element is ambiguous. Use a.any() "
                            "or a.all()");
  if (n != 1) raise(ErrorKind::Value, "can only convert an array of size 1 to a Python scalar");
  // every index of a one-element array is 0: the element is at data
  return element_as<T>(a.view().data, a.dtype(), name);
}

// x.tolist() of a 1-d array or tensor: its elements as Python numbers. A 0-d array's tolist() is a number and
// an n-d one's nested lists, which a compiled list[T] does not hold: TypeError naming the rank.
template <class T>
inline std::vector<T> array_to_list(const Array& a) {
  if (a.ndim() != 1)
    raise(UnsupportedType, "tolist() of a " + std::to_string(a.ndim()) + "-d array gives " +
                         (a.ndim() ? "nested lists" : "a number") + ", which a compiled list does not hold (only a "
                         "1-d array's tolist() compiles): reshape(-1) first, or index the row");
  const opgen_tensor v = a.view();
  const int64_t n = a.shape()[0], stride = a.strides()[0];
  const size_t item = (v.dtype.bits + 7) / 8;
  std::vector<T> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    out[static_cast<size_t>(i)] = element_as<T>(static_cast<const char*>(v.data) + i * stride * static_cast<int64_t>(item),
                                                v.dtype, "tolist");
  return out;
}

// len(x), x.size and torch's x.size(d) of an array.
inline int64_t array_len(const Array& a) {
  if (a.ndim() == 0) raise(TypeError, "len() of unsized object");
  return a.shape()[0];
}
// How many rows `for row in a` visits: NumPy and torch raise TypeError for a 0-d array, in their words.
inline int64_t rows_of(const Array& a, bool torch) {
  if (a.ndim() == 0) raise(TypeError, torch ? "iteration over a 0-d tensor" : "iteration over a 0-d array");
  return a.shape()[0];
}
inline int64_t numel(const Array& a) {
  int64_t n = 1;
  for (int64_t d : a.shape()) n *= d;
  return n;
}
inline int64_t dim_size(const Array& a, int64_t d) {
  const int64_t n = a.ndim();
  if (d < -std::max<int64_t>(n, 1) || d >= std::max<int64_t>(n, 1))
    raise(ErrorKind::Index, "Dimension out of range (expected to be in range of [" + std::to_string(-std::max<int64_t>(n, 1)) +
                                ", " + std::to_string(std::max<int64_t>(n, 1) - 1) + "], but got " + std::to_string(d) + ")");
  if (n == 0) return 1;
  return a.shape()[static_cast<size_t>(d < 0 ? d + n : d)];
}

// ---------------------------------------------------------------- the C-ABI entry point

// A tensor argument from the host, its dtype checked against the annotation.
inline Array borrow(const opgen_tensor* t, uint8_t code, uint8_t bits, const char* name) {
  shim::check_dtype(t, code, bits, name);
  return Array::borrow(t);
}

inline std::string string_in(const char* data, int64_t len) { return std::string(data, static_cast<size_t>(len)); }

template <class T>
std::vector<T> list_in(const T* items, int64_t len) { return std::vector<T>(items, items + len); }

inline std::vector<std::string> strings_in(const opgen_string* items, int64_t len) {
  std::vector<std::string> r;
  r.reserve(static_cast<size_t>(len));
  for (int64_t i = 0; i < len; ++i) r.emplace_back(items[i].data, static_cast<size_t>(items[i].len));
  return r;
}

template <class T>
Dict<T> dict_in(const opgen_string* keys, const T* values, int64_t len) {
  Dict<T> d;
  for (int64_t i = 0; i < len; ++i) d.put(std::string(keys[i].data, static_cast<size_t>(keys[i].len)), values[i]);
  return d;
}

inline Dict<std::string> dict_in(const opgen_string* keys, const opgen_string* values, int64_t len) {
  Dict<std::string> d;
  for (int64_t i = 0; i < len; ++i)
    d.put(std::string(keys[i].data, static_cast<size_t>(keys[i].len)), std::string(values[i].data, static_cast<size_t>(values[i].len)));
  return d;
}

inline void put_string(opgen_string* out, const std::string& s) {
  out->data = shim::copy_bytes(s);
  out->len = static_cast<int64_t>(s.size());
}

template <class T>
void put_list(opgen_list* out, const std::vector<T>& xs) {
  auto* items = static_cast<T*>(std::malloc(xs.empty() ? 1 : xs.size() * sizeof(T)));
  if (items == nullptr) throw std::bad_alloc();
  for (size_t i = 0; i < xs.size(); ++i) items[i] = xs[i];
  out->data = items;
  out->len = static_cast<int64_t>(xs.size());
}

// list[str] as the kernel ABI returns it: ONE block, the opgen_string array then the bytes.
inline void put_strings(opgen_list* out, const std::vector<std::string>& xs) {
  size_t bytes = xs.size() * sizeof(opgen_string);
  for (const auto& x : xs) bytes += x.size();
  char* block = static_cast<char*>(std::malloc(bytes ? bytes : 1));
  if (block == nullptr) throw std::bad_alloc();
  auto* items = reinterpret_cast<opgen_string*>(block);
  char* cursor = block + xs.size() * sizeof(opgen_string);
  for (size_t i = 0; i < xs.size(); ++i) {
    std::memcpy(cursor, xs[i].data(), xs[i].size());
    items[i] = opgen_string{cursor, static_cast<int64_t>(xs[i].size())};
    cursor += xs[i].size();
  }
  out->data = block;
  out->len = static_cast<int64_t>(xs.size());
}

// Runs the function body; any error becomes (status, err) as a shim reports it.
template <class Body>
int32_t guard(opgen_error* err, Body&& body) {
  try {
    body();
    return OPGEN_OK;
  } catch (const Error& e) {
    const int32_t kind = static_cast<int32_t>(e.kind);
    return shim::fail(err, kind >= 100 ? kind - 100 : kind, e.what());  // Unsupported*: its Python kind
  } catch (const std::bad_alloc&) {
    return shim::fail(err, OPGEN_INTERNAL_ERROR, "out of memory");
  } catch (const std::exception& e) {
    return shim::fail(err, OPGEN_INTERNAL_ERROR, e.what());
  } catch (...) {
    return shim::fail(err, OPGEN_INTERNAL_ERROR, "a non-standard exception");
  }
}

}  // namespace opgen::compiled

#endif
