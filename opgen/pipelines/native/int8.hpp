// Linear layers in int8 for the `:int8` pipelines: dynamic per-token int8 activations times
// per-channel int8 weights, int32 accumulation, every step a verified registry kernel
// (K_ROW_SCALE, K_QUANTIZE, K_INT8_MATMUL, K_DEQUANTIZE from opgen_pipeline_kernels.h, which the
// glue includes first). A weight is quantized once, at load, by the same two kernels that
// quantize the activations on every call: scale = max |row| / 127 per output channel.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "pipeline.hpp"

namespace opgen::pipeline {

// A weight (out, in) in int8, one scale per output channel; empty when the layer runs in float32.
struct Int8Weight {
  Buffer<int8_t> q;
  Buffer<float> scale;
  bool empty() const { return q.empty(); }
};

// Per-call buffers, reused from call to call: per-token scales, int8 activations, int32 sums,
// and zeros for a layer without bias (the rescale kernel always adds one).
struct Int8Scratch {
  Buffer<float> xs, zeros;
  Buffer<int8_t> xq;
  Buffer<int32_t> acc;
};

#if defined(K_INT8_MATMUL)
inline Int8Weight quantize_weight(const float* w, int64_t out, int64_t in) {
  Int8Weight q;
  q.scale.resize(static_cast<size_t>(out));
  q.q.resize(static_cast<size_t>(out * in));
  View wv = f32(w, {out, in}), sv = f32(q.scale.data(), {out});
  OPGEN_CALL(K_ROW_SCALE, wv.in(), sv.out());
  View win = f32(w, {out, in}), sin = f32(q.scale.data(), {out}), qv = i8(q.q.data(), {out, in});
  OPGEN_CALL(K_QUANTIZE, win.in(), sin.in(), qv.out());
  return q;
}

// y (n x out) = x (n x in) W^T (+ bias), W given as int8 rows and their scales.
inline void int8_linear(Int8Scratch& s, const float* x, int64_t n, int64_t in, const Int8Weight& w,
                        const float* bias, int64_t out, float* y) {
  s.xs.resize(static_cast<size_t>(n));
  s.xq.resize(static_cast<size_t>(n * in));
  s.acc.resize(static_cast<size_t>(n * out));
  if (!bias) {
    s.zeros.assign(static_cast<size_t>(out), 0.0f);
    bias = s.zeros.data();
  }
  View xv = f32(x, {n, in}), sv = f32(s.xs.data(), {n});
  OPGEN_CALL(K_ROW_SCALE, xv.in(), sv.out());
  View xin = f32(x, {n, in}), sin = f32(s.xs.data(), {n}), qv = i8(s.xq.data(), {n, in});
  OPGEN_CALL(K_QUANTIZE, xin.in(), sin.in(), qv.out());
  View qin = i8(s.xq.data(), {n, in}), wv = i8(w.q.data(), {out, in}), av = i32(s.acc.data(), {n, out});
  OPGEN_CALL(K_INT8_MATMUL, qin.in(), wv.in(), av.out());
  View ain = i32(s.acc.data(), {n, out}), xsv = f32(s.xs.data(), {n}), wsv = f32(w.scale.data(), {out}),
       bv = f32(bias, {out}), yv = f32(y, {n, out});
  OPGEN_CALL(K_DEQUANTIZE, ain.in(), xsv.in(), wsv.in(), bv.in(), yv.out());
}
#else
// A library linked without the int8 kernels (a float32 model): asking for int8 is an error.
inline Int8Weight quantize_weight(const float*, int64_t, int64_t) {
  throw std::runtime_error("this pipeline library was linked without the int8 kernels");
}

inline void int8_linear(Int8Scratch&, const float*, int64_t, int64_t, const Int8Weight&, const float*, int64_t,
                        float*) {
  throw std::runtime_error("this pipeline library was linked without the int8 kernels");
}
#endif

}  // namespace opgen::pipeline
