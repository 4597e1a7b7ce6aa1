// Reading safetensors files natively: the 8-byte header length, the JSON header, and
// tensors as pointers into the memory-mapped file (copied only to convert a dtype or to
// fix an unaligned start). Hand-written pipeline runtime, not an LLM-written kernel.
#pragma once

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "pipeline.hpp"  // kAlign, Buffer

namespace opgen::pipeline {

struct TensorInfo {
  std::string dtype;  // "F32", "BF16", "F16", "I64", ...
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0;  // byte offsets into the data section
};

// The subset of JSON a safetensors header uses: objects, arrays, strings, integers.
class HeaderParser {
 public:
  HeaderParser(const char* p, size_t n, const std::string& file) : p_(p), end_(p + n), file_(file) {}

  std::map<std::string, TensorInfo> parse() {
    std::map<std::string, TensorInfo> out;
    ws();
    expect('{');
    ws();
    if (peek() == '}') return out;
    while (true) {
      ws();
      std::string name = str();
      ws();
      expect(':');
      ws();
      if (name == "__metadata__") {
        skip_value();
      } else {
        out[name] = tensor(name);
      }
      ws();
      if (peek() == ',') { ++p_; continue; }
      expect('}');
      return out;
    }
  }

 private:
  TensorInfo tensor(const std::string& name) {
    TensorInfo t;
    bool have_dtype = false, have_shape = false, have_offsets = false;
    expect('{');
    while (true) {
      ws();
      std::string key = str();
      ws();
      expect(':');
      ws();
      if (key == "dtype") {
        t.dtype = str();
        have_dtype = true;
      } else if (key == "shape") {
        t.shape = ints();
        have_shape = true;
      } else if (key == "data_offsets") {
        auto o = ints();
        if (o.size() != 2 || o[0] < 0 || o[1] < o[0]) fail("bad data_offsets for " + name);
        t.begin = static_cast<uint64_t>(o[0]);
        t.end = static_cast<uint64_t>(o[1]);
        have_offsets = true;
      } else {
        skip_value();
      }
      ws();
      if (peek() == ',') { ++p_; continue; }
      expect('}');
      break;
    }
    if (!have_dtype || !have_shape || !have_offsets) fail("tensor " + name + " lacks dtype, shape or data_offsets");
    return t;
  }
  std::vector<int64_t> ints() {
    std::vector<int64_t> v;
    expect('[');
    ws();
    if (peek() == ']') { ++p_; return v; }
    while (true) {
      ws();
      v.push_back(integer());
      ws();
      if (peek() == ',') { ++p_; continue; }
      expect(']');
      return v;
    }
  }
  int64_t integer() {
    bool neg = peek() == '-';
    if (neg) ++p_;
    if (p_ >= end_ || *p_ < '0' || *p_ > '9') fail("expected an integer");
    int64_t v = 0;
    while (p_ < end_ && *p_ >= '0' && *p_ <= '9') v = v * 10 + (*p_++ - '0');
    return neg ? -v : v;
  }
  std::string str() {
    expect('"');
    std::string s;
    while (p_ < end_ && *p_ != '"') {
      if (*p_ == '\\') {
        ++p_;
        if (p_ >= end_) break;
        char c = *p_++;
        if (c == 'u') {  // \uXXXX: tensor names are ASCII in practice; keep the code point as UTF-8
          if (end_ - p_ < 4) fail("bad \\u escape");
          unsigned cp = std::stoul(std::string(p_, 4), nullptr, 16);
          p_ += 4;
          if (cp < 0x80) {
            s += static_cast<char>(cp);
          } else if (cp < 0x800) {
            s += static_cast<char>(0xC0 | (cp >> 6));
            s += static_cast<char>(0x80 | (cp & 0x3F));
          } else {
            s += static_cast<char>(0xE0 | (cp >> 12));
            s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            s += static_cast<char>(0x80 | (cp & 0x3F));
          }
        } else {
          s += c == 'n' ? '\n' : c == 't' ? '\t' : c == 'r' ? '\r' : c == 'b' ? '\b' : c == 'f' ? '\f' : c;
        }
      } else {
        s += *p_++;
      }
    }
    expect('"');
    return s;
  }
  void skip_value() {
    ws();
    char c = peek();
    if (c == '"') { str(); return; }
    if (c == '{' || c == '[') {
      char close = c == '{' ? '}' : ']';
      ++p_;
      ws();
      if (peek() == close) { ++p_; return; }
      while (true) {
        ws();
        if (c == '{') { str(); ws(); expect(':'); }
        skip_value();
        ws();
        if (peek() == ',') { ++p_; continue; }
        expect(close);
        return;
      }
    }
    while (p_ < end_ && *p_ != ',' && *p_ != '}' && *p_ != ']') ++p_;  // number, true, false, null
  }
  void ws() { while (p_ < end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_; }
  char peek() const { return p_ < end_ ? *p_ : '\0'; }
  void expect(char c) {
    if (peek() != c) fail(std::string("expected '") + c + "'");
    ++p_;
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error(file_ + ": malformed safetensors header: " + what);
  }
  const char* p_;
  const char* end_;
  std::string file_;
};

// One memory-mapped safetensors file. float32 views of its tensors (other float dtypes
// are widened once, into buffers the file object owns).
class SafetensorsFile {
 public:
  explicit SafetensorsFile(const std::string& path) : path_(path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw std::runtime_error("cannot open " + path + ": " + std::strerror(errno));
    struct stat st;
    if (::fstat(fd, &st) != 0) {
      ::close(fd);
      throw std::runtime_error("cannot stat " + path);
    }
    size_ = static_cast<size_t>(st.st_size);
    if (size_ < 8) {
      ::close(fd);
      throw std::runtime_error(path + " is too short to be a safetensors file");
    }
    void* m = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    ::close(fd);
    if (m == MAP_FAILED) throw std::runtime_error("cannot map " + path);
    base_ = static_cast<const char*>(m);
    uint64_t n = 0;
    std::memcpy(&n, base_, 8);  // little-endian, as the format defines (and x86/ARM are)
    if (n > size_ - 8) throw std::runtime_error(path + ": header length exceeds the file");
    tensors_ = HeaderParser(base_ + 8, n, path).parse();
    data_ = base_ + 8 + n;
    data_size_ = size_ - 8 - n;
    for (auto& kv : tensors_)
      if (kv.second.end > data_size_) throw std::runtime_error(path + ": tensor " + kv.first + " lies past the end");
  }
  ~SafetensorsFile() {
    if (base_) ::munmap(const_cast<char*>(base_), size_);
  }
  SafetensorsFile(const SafetensorsFile&) = delete;
  SafetensorsFile& operator=(const SafetensorsFile&) = delete;

  bool has(const std::string& name) const { return tensors_.count(name) != 0; }

  const TensorInfo& info(const std::string& name) const {
    auto it = tensors_.find(name);
    if (it == tensors_.end()) throw std::runtime_error(path_ + " has no tensor " + name);
    return it->second;
  }

  // float32 data of `name`, checked against the expected shape.
  const float* f32(const std::string& name, const std::vector<int64_t>& shape) {
    const TensorInfo& t = info(name);
    if (t.shape != shape) {
      std::string got, want;
      for (auto d : t.shape) got += std::to_string(d) + ",";
      for (auto d : shape) want += std::to_string(d) + ",";
      throw std::runtime_error(path_ + ": tensor " + name + " has shape (" + got + ") but the model needs (" + want + ")");
    }
    size_t n = 1;
    for (auto d : shape) n *= static_cast<size_t>(d);
    const char* src = data_ + t.begin;
    if (t.dtype == "F32") {
      if (t.end - t.begin != n * 4) throw std::runtime_error(path_ + ": tensor " + name + " has the wrong byte size");
      if (reinterpret_cast<uintptr_t>(src) % kAlign == 0) return reinterpret_cast<const float*>(src);
      // Copied to an aligned buffer (see kAlign); the mapped pages it was read from are
      // released, so the copy does not double the resident weights.
      owned_.emplace_back(n);
      std::memcpy(owned_.back().data(), src, n * 4);
      release(src, n * 4);
      return owned_.back().data();
    }
    if (t.dtype == "BF16" || t.dtype == "F16") {
      if (t.end - t.begin != n * 2) throw std::runtime_error(path_ + ": tensor " + name + " has the wrong byte size");
      owned_.emplace_back(n);
      float* dst = owned_.back().data();
      for (size_t i = 0; i < n; ++i) {
        uint16_t h;
        std::memcpy(&h, src + 2 * i, 2);
        dst[i] = t.dtype == "BF16" ? bf16(h) : f16(h);
      }
      release(src, n * 2);
      return dst;
    }
    throw std::runtime_error(path_ + ": tensor " + name + " has dtype " + t.dtype + "; expected F32, BF16 or F16");
  }

  // The caller has read tensor `name` for the last time (it keeps a copy in another layout: W^T,
  // int8 rows): the mapped pages it lay in are released, so the copy does not add to the
  // resident weights. A pointer f32 returned for it must not be read afterwards.
  void done_with(const std::string& name) {
    const TensorInfo& t = info(name);
    release(data_ + t.begin, t.end - t.begin);
  }

 private:
  // Drops the whole pages of [p, p + bytes) from this process (a private read-only mapping of
  // the file: they would read back from it if touched again; nothing touches them).
  static void release(const char* p, size_t bytes) {
    const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
    const uintptr_t lo = (reinterpret_cast<uintptr_t>(p) + page - 1) / page * page;
    const uintptr_t hi = (reinterpret_cast<uintptr_t>(p) + bytes) / page * page;
    if (hi > lo) ::madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_DONTNEED);
  }

  static float bf16(uint16_t h) {
    uint32_t u = static_cast<uint32_t>(h) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
  static float f16(uint16_t h) {
    const uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1F, man = h & 0x3FF;
    uint32_t u;
    if (exp == 0) {
      if (man == 0) {
        u = sign;
      } else {  // subnormal: normalise
        int e = -1;
        uint32_t m = man;
        do { ++e; m <<= 1; } while ((m & 0x400) == 0);
        u = sign | ((127 - 15 - e) << 23) | ((m & 0x3FF) << 13);
      }
    } else if (exp == 31) {
      u = sign | 0x7F800000u | (man << 13);
    } else {
      u = sign | ((exp - 15 + 127) << 23) | (man << 13);
    }
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }

  std::string path_;
  const char* base_ = nullptr;
  size_t size_ = 0;
  const char* data_ = nullptr;
  size_t data_size_ = 0;
  std::map<std::string, TensorInfo> tensors_;
  std::vector<Buffer<float>> owned_;
};

}  // namespace opgen::pipeline
