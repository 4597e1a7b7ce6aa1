// numpy.argsort, overload f64: numpy.argsort(a, axis=axis, kind="stable"), as int64 indices.
//
// Each lane along the axis is gathered into a buffer of order-preserving unsigned keys
// (the float's bits, negatives inverted, -0.0 read as 0.0, every nan the largest key),
// paired with its index in the lane, and sorted by a least-significant-digit radix sort
// over bytes: every pass is a stable counting sort, so equal keys keep their input order and the
// whole sort is stable. Passes whose byte is the same in every key are skipped (one histogram
// pass counts all bytes first). Lanes of up to 32 elements use an insertion sort instead (it
// moves an element only past strictly greater keys: stable too). out is contiguous with a's
// shape, (outer, n, inner) row-major: a lane's results are written with stride inner. Any input
// strides (0, negative), 0-size dims; kind is "stable" or "mergesort", anything else throws.
#include "opgen_kernel.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace opgen::kernels {

namespace {

using T = double;                 // the element type
using U = uint64_t;                 // its key
constexpr bool kArgsort = true;
// What travels with a key: the lane index (argsort), the element itself (a float sort: -0.0 and
// nan bits are kept exactly), or nothing (an integer sort: the key is the value, inverted below).
constexpr bool kPayload = kArgsort || std::is_floating_point_v<T>;
using P = std::conditional_t<kArgsort, int64_t, T>;
using R = std::conditional_t<kArgsort, int64_t, T>;
constexpr U kTop = static_cast<U>(U(1) << (8 * sizeof(U) - 1));

inline U key_of(T x) {
  if constexpr (std::is_floating_point_v<T>) {
    if (x != x) return static_cast<U>(~U(0));  // every nan after +inf, all equal (stability keeps their order)
    if (x == 0) x = 0;                         // -0.0 == 0.0
    U b;
    std::memcpy(&b, &x, sizeof b);
    return (b & kTop) ? static_cast<U>(~b) : static_cast<U>(b | kTop);
  } else {
    return static_cast<U>(static_cast<U>(x) ^ kTop);
  }
}

inline T value_of(U k) {  // integers only: key_of's inverse
  return static_cast<T>(static_cast<U>(k ^ kTop));
}

// Sorts (k, p) of length n stably by k, using (k2, p2) as scratch; returns whether the result
// ended up in the scratch buffers.
bool sort_lane(U* k, P* p, U* k2, P* p2, int64_t n) {
  if (n <= 32) {
    for (int64_t i = 1; i < n; ++i) {
      const U kk = k[i];
      P pp{};
      if constexpr (kPayload) pp = p[i];
      int64_t j = i;
      while (j > 0 && k[j - 1] > kk) {
        k[j] = k[j - 1];
        if constexpr (kPayload) p[j] = p[j - 1];
        --j;
      }
      k[j] = kk;
      if constexpr (kPayload) p[j] = pp;
    }
    return false;
  }
  constexpr int kBytes = static_cast<int>(sizeof(U));
  size_t cnt[kBytes][256];
  std::memset(cnt, 0, sizeof cnt);
  for (int64_t i = 0; i < n; ++i) {
    const U v = k[i];
    for (int b = 0; b < kBytes; ++b) ++cnt[b][(v >> (8 * b)) & 0xFF];
  }
  bool swapped = false;
  for (int b = 0; b < kBytes; ++b) {
    size_t* c = cnt[b];
    if (c[(k[0] >> (8 * b)) & 0xFF] == static_cast<size_t>(n)) continue;  // one digit everywhere
    size_t sum = 0;
    for (int d = 0; d < 256; ++d) {
      const size_t t = c[d];
      c[d] = sum;
      sum += t;
    }
    for (int64_t i = 0; i < n; ++i) {
      const U v = k[i];
      const size_t at = c[(v >> (8 * b)) & 0xFF]++;
      k2[at] = v;
      if constexpr (kPayload) p2[at] = p[i];
    }
    std::swap(k, k2);
    if constexpr (kPayload) std::swap(p, p2);
    swapped = !swapped;
  }
  return swapped;
}

}  // namespace

void numpy_argsort__f64(const opgen::Tensor& a, int64_t axis, const std::string& kind, opgen::Tensor& out) {
  if (kind != "stable" && kind != "mergesort")
    throw opgen::Error(opgen::ErrorKind::Value,
                       "sort kind must be 'stable' or 'mergesort' (this op is the stable sort), got '" + kind + "'");
  const int nd = a.ndim();
  if (axis < -nd || axis >= nd) throw opgen::Error(opgen::ErrorKind::Value, "axis out of range");
  if (axis < 0) axis += nd;
  const int ax = static_cast<int>(axis);
  if (out.numel() == 0) return;
  R* dst = out.data<R>();
  const T* src = a.data<T>();
  const int64_t n = a.size(ax), sK = a.stride(ax);

  // The input offsets of the inner elements (the dims after the axis), in row-major order.
  int64_t inner = 1;
  for (int d = ax + 1; d < nd; ++d) inner *= a.size(d);
  std::vector<int64_t> inoff(static_cast<size_t>(inner), 0);
  {
    int64_t idx[OPGEN_MAX_DIMS] = {};
    int64_t off = 0;
    for (int64_t j = 0; j < inner; ++j) {
      inoff[static_cast<size_t>(j)] = off;
      for (int d = nd - 1; d > ax; --d) {
        if (++idx[d] < a.size(d)) {
          off += a.stride(d);
          break;
        }
        off -= a.stride(d) * (a.size(d) - 1);
        idx[d] = 0;
      }
    }
  }
  int64_t outer = 1;
  for (int d = 0; d < ax; ++d) outer *= a.size(d);

  const size_t sz = static_cast<size_t>(n);
  std::vector<U> k1(sz), k2(sz);
  std::vector<P> p1(kPayload ? sz : 0), p2(kPayload ? sz : 0);
  int64_t idx[OPGEN_MAX_DIMS] = {};
  int64_t off = 0;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < inner; ++j) {
      const T* lane = src + off + inoff[static_cast<size_t>(j)];
      U* kk = k1.data();
      P* pp = p1.data();
      for (int64_t i = 0; i < n; ++i) {
        const T x = lane[i * sK];
        kk[i] = key_of(x);
        if constexpr (kArgsort) pp[i] = i;
        else if constexpr (kPayload) pp[i] = x;
      }
      const bool in2 = sort_lane(k1.data(), p1.data(), k2.data(), p2.data(), n);
      const U* rk = in2 ? k2.data() : k1.data();
      const P* rp = in2 ? p2.data() : p1.data();
      R* ob = dst + o * n * inner + j;
      for (int64_t i = 0; i < n; ++i) {
        if constexpr (kPayload) ob[i * inner] = rp[i];
        else ob[i * inner] = value_of(rk[i]);
      }
    }
    for (int d = ax - 1; d >= 0; --d) {
      if (++idx[d] < a.size(d)) {
        off += a.stride(d);
        break;
      }
      off -= a.stride(d) * (a.size(d) - 1);
      idx[d] = 0;
    }
  }
}

}  // namespace opgen::kernels
