// Shared pieces of the native embedding pipelines: strided views handed to registry
// kernels through their C ABI, error checking, and the C entry points every pipeline
// library exports. Hand-written pipeline runtime; the arithmetic is all in the
// registry kernels (declared in the generated opgen_pipeline_kernels.h).
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <new>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "opgen_abi.h"

// Releases what a kernel returned (string and list results): the one definition the
// library's kernels share (opgen_kernel.hpp defines it weak in each of them).
extern "C" void opgen_free(void* p);

namespace opgen::pipeline {

// Every buffer the glue hands a kernel starts on a 64-byte boundary: with rows of whole cache
// lines (MiniLM's 384 and 1536 floats), no vector load of a kernel straddles two lines. A
// 64-byte AVX-512 load that does costs a second access; on Zen 4 it made the batch-1 linear
// layers 1.5x slower (measured: 40 against 62 GFLOP/s at 20 x 384 x 1536, one thread).
constexpr size_t kAlign = 64;

template <typename T>
struct AlignedAllocator {
  using value_type = T;
  AlignedAllocator() = default;
  template <typename U>
  AlignedAllocator(const AlignedAllocator<U>&) noexcept {}
  T* allocate(size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t(kAlign))); }
  void deallocate(T* p, size_t) noexcept { ::operator delete(p, std::align_val_t(kAlign)); }
  template <typename U>
  bool operator==(const AlignedAllocator<U>&) const noexcept { return true; }
  template <typename U>
  bool operator!=(const AlignedAllocator<U>&) const noexcept { return false; }
};

// A growable array whose data starts on a kAlign boundary (activations, scratch, owned weights).
template <typename T>
using Buffer = std::vector<T, AlignedAllocator<T>>;

// A view of caller-owned memory as an opgen_tensor (shape and strides in elements).
// The opgen_tensor it hands out points into this object, so keep the View alive for the call.
class View {
 public:
  View(const void* data, uint8_t code, uint8_t bits, std::initializer_list<int64_t> shape,
       std::initializer_list<int64_t> strides = {})
      : ndim_(static_cast<int32_t>(shape.size())) {
    if (shape.size() > OPGEN_MAX_DIMS || (strides.size() && strides.size() != shape.size()))
      throw std::logic_error("bad view rank");
    int i = 0;
    for (auto s : shape) shape_[i++] = s;
    if (strides.size()) {
      i = 0;
      for (auto s : strides) strides_[i++] = s;
    } else {  // row-major
      int64_t s = 1;
      for (int d = ndim_ - 1; d >= 0; --d) {
        strides_[d] = s;
        s *= shape_[d];
      }
    }
    t_.data = const_cast<void*>(data);
    t_.device = {1, 0};  // kDLCPU
    t_.ndim = ndim_;
    t_.dtype = {code, bits, 1};
    t_.byte_offset = 0;
  }
  const opgen_tensor* in() { return fix(); }
  opgen_tensor* out() { return fix(); }

 private:
  opgen_tensor* fix() {
    t_.shape = shape_;
    t_.strides = strides_;
    return &t_;
  }
  int32_t ndim_;
  int64_t shape_[OPGEN_MAX_DIMS] = {};
  int64_t strides_[OPGEN_MAX_DIMS] = {};
  opgen_tensor t_{};
};

constexpr uint8_t kFloat = 2, kInt = 0;  // DLPack type codes

inline View f32(const float* p, std::initializer_list<int64_t> shape, std::initializer_list<int64_t> strides = {}) {
  return View(p, kFloat, 32, shape, strides);
}
inline View i64(const int64_t* p, std::initializer_list<int64_t> shape, std::initializer_list<int64_t> strides = {}) {
  return View(p, kInt, 64, shape, strides);
}
inline View i32(const int32_t* p, std::initializer_list<int64_t> shape, std::initializer_list<int64_t> strides = {}) {
  return View(p, kInt, 32, shape, strides);
}
inline View i8(const int8_t* p, std::initializer_list<int64_t> shape, std::initializer_list<int64_t> strides = {}) {
  return View(p, kInt, 8, shape, strides);
}

// Turns a kernel's status into an exception that names the op.
inline void check(int32_t status, const opgen_error& err, const char* op) {
  if (status != 0) {
    throw std::runtime_error(std::string(op) + " failed (status " + std::to_string(status) + "): " + err.message);
  }
}

#define OPGEN_CALL(op, ...)                    \
  do {                                         \
    opgen_error opgen_err_{};                  \
    ::opgen::pipeline::check(op(__VA_ARGS__, &opgen_err_), opgen_err_, #op); \
  } while (0)

// Seconds spent in each stage since the pipeline opened (tokenize, encoder, pooling: the last
// is mean pooling, any Dense head and the L2 normalisation), for `opgen bench embeddings`'
// per-stage breakdown. Two clock reads per stage per batch: nothing against a forward pass.
struct StageClock {
  double tokenize = 0, encoder = 0, pooling = 0;
};

// Adds the scope's wall time to `into` on the way out (also when a kernel throws).
class Timed {
 public:
  explicit Timed(double& into) : into_(into), start_(std::chrono::steady_clock::now()) {}
  ~Timed() { into_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(); }
  Timed(const Timed&) = delete;
  Timed& operator=(const Timed&) = delete;

 private:
  double& into_;
  std::chrono::steady_clock::time_point start_;
};

// Strings of a text file, one per line (a vocabulary).
inline std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot read " + path);
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(f, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(line);
  }
  return lines;
}

// The first `dims` of each of B rows of width `dim`, L2-normalised again (Matryoshka).
// Needs K_NORMALIZE from the generated kernel header, so it is a macro-free template.
template <typename Normalize>
void truncate_with(Normalize normalize, const float* x, int64_t B, int64_t dim, int64_t dims, float* out) {
  View in = f32(x, {B, dims}, {dim, 1}), o = f32(out, {B, dims});
  opgen_error err{};
  check(normalize(in.in(), 2.0, int64_t{1}, 1e-12, o.out(), &err), err, "normalize (Matryoshka truncation)");
}

// An int64 list a kernel returned (a tokenizer's prepared table), copied out and released.
inline std::vector<int64_t> take_int64_list(opgen_list list) {
  std::unique_ptr<void, void (*)(void*)> owned(list.data, opgen_free);
  const int64_t* values = static_cast<const int64_t*>(list.data);
  return std::vector<int64_t>(values, values + list.len);
}

// Heads back side by side: ctx holds (heads, S, D) contiguous; row s of rows (width
// apart) gets head h's vector at column h*D.
inline void merge_heads(const float* ctx, int64_t heads, int64_t S, int64_t D, float* rows, int64_t width) {
  for (int64_t h = 0; h < heads; ++h)
    for (int64_t s = 0; s < S; ++s) std::memcpy(rows + s * width + h * D, ctx + (h * S + s) * D, D * sizeof(float));
}

// Embeds n texts from a tokenizer op's result (enc: n rows of ids padded on the right, then
// n rows of attention masks; released here) through `forward` in chunks of at most max_batch
// texts, packed end to end without padding, and writes the first `dims` of each embedding
// (re-normalised by `truncate` when dims < dim) to out in input order. tokens[i] gets text
// i's token count. forward(ids, positions, [(offset, length)], out B x dim).
template <typename Forward, typename Truncate>
void embed_tokenized(opgen_list enc, int64_t n, int64_t* tokens, int64_t max_batch, int64_t dims, int64_t dim,
                     float* out, Forward forward, Truncate truncate) {
  std::unique_ptr<void, void (*)(void*)> owned(enc.data, opgen_free);
  const int64_t L = enc.len / (2 * n);
  const int64_t* rows = static_cast<const int64_t*>(enc.data);
  const int64_t* mask = rows + n * L;
  std::vector<int64_t> ids, pos;
  std::vector<std::pair<int64_t, int64_t>> seq;
  Buffer<float> got, cut;
  for (int64_t i = 0; i < n; ++i) tokens[i] = std::accumulate(mask + i * L, mask + (i + 1) * L, int64_t{0});
  const int64_t maxb = max_batch > 0 ? max_batch : 1;
  for (int64_t s0 = 0; s0 < n; s0 += maxb) {
    const int64_t B = n - s0 < maxb ? n - s0 : maxb;
    ids.clear();
    pos.clear();
    seq.clear();
    for (int64_t i = s0; i < s0 + B; ++i) {
      if (tokens[i] == 0) throw std::runtime_error("text " + std::to_string(i) + " has no tokens");
      seq.emplace_back(static_cast<int64_t>(ids.size()), tokens[i]);
      ids.insert(ids.end(), rows + i * L, rows + i * L + tokens[i]);
      for (int64_t p = 0; p < tokens[i]; ++p) pos.push_back(p);
    }
    got.resize(static_cast<size_t>(B * dim));
    forward(ids.data(), pos.data(), seq, got.data());
    const float* src = got.data();
    if (dims < dim) {
      cut.resize(static_cast<size_t>(B * dims));
      truncate(got.data(), B, dim, dims, cut.data());
      src = cut.data();
    }
    std::memcpy(out + s0 * dims, src, static_cast<size_t>(B * dims) * sizeof(float));
  }
}

// Reports an exception through the C ABI (kind 4: internal; 3 for bad input).
inline int32_t fail(opgen_error* err, int32_t kind, const char* what) {
  if (err) {
    err->kind = kind;
    std::strncpy(err->message, what, sizeof err->message - 1);
    err->message[sizeof err->message - 1] = '\0';
  }
  return kind;
}

}  // namespace opgen::pipeline
