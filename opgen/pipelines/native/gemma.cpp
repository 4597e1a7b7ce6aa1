// EmbeddingGemma (Gemma 3 with bidirectional attention) as a native embedding pipeline:
// BPE tokenization with byte fallback, the Gemma 3 encoder (sliding-window and full
// attention layers, grouped-query heads, RMSNorm with (1 + weight), rotary embeddings with
// a local and a global theta, gated GELU-tanh MLP), mean pooling, the sentence-transformers
// Dense projections, L2 normalisation and Matryoshka truncation. Every arithmetic step is a
// verified registry kernel (opgen_pipeline_kernels.h); this file lays out views, owns the
// activations and reorders heads. Weights come from the model directory's safetensors files.
// With int8 set (the config's last value, the `:int8` models), the encoder's projections
// (attention q/k/v/o, MLP gate/up/down) run quantized (int8.hpp); the Dense heads stay float32.
#include <algorithm>
#include <cmath>
#include <memory>

#include "opgen_pipeline_kernels.h"
#include "int8.hpp"
#include "pipeline.hpp"
#include "safetensors.hpp"

namespace opgen::pipeline {
namespace {

// Config values, in the order the host passes them (see opgen/pipelines/models.py):
//  0 layers, 1 hidden, 2 intermediate, 3 heads, 4 kv_heads, 5 head_dim, 6 vocab,
//  7 sliding window (exclusive bound: key j visible from i iff |i - j| < window), 8 rope_theta, 9 rope_local_theta, 10 query_pre_attn_scalar, 11 eps,
//  12 max_length, 13 max_batch, 14 add_bos, 15 add_eos, 16 n_dense,
//  then per Dense module: module index, in, out, has_bias; then per layer: 1 if sliding;
//  then, optionally, 1 for int8.
struct GemmaConfig {
  int64_t layers, hidden, intermediate, heads, kv_heads, head_dim, vocab, window;
  double theta, local_theta, qscalar, eps;
  int64_t max_length, max_batch;
  bool add_bos, add_eos;
  bool int8;
};

struct Dense {
  int64_t in, out;
  std::unique_ptr<SafetensorsFile> st;
  const float* w;
  const float* b;  // null without bias
};

struct Layer {
  bool sliding;
  const float *in_norm, *wq, *wk, *wv, *wo, *q_norm, *k_norm, *post_attn_norm, *pre_ffn_norm, *post_ffn_norm;
  const float *gate, *up, *down;
  Int8Weight qq, qk, qv, qo, qgate, qup, qdown;  // empty in float32
};

struct Gemma {
  GemmaConfig c;
  std::unique_ptr<SafetensorsFile> st;
  std::string prefix;
  const float *embed, *final_norm;
  std::vector<Layer> layers;
  std::vector<Dense> dense;
  // The tokenizer (set by opgen_pipeline_set_tokenizer) as opgen.text.bpe_tokenizer_table laid it out,
  // once: every call reads it instead of hashing Gemma 3's 262144 pieces, its merges and its added
  // tokens again (tens of milliseconds a call).
  std::vector<int64_t> tokenizer;
  float embed_scale;
  // Activations, reused from batch to batch.
  Buffer<float> h, x, q, k, v, qn, kn, qr, kr, ctx, merged, attn, gate, up, act, pooled, d0, d1;
  std::vector<int64_t> ones;  // an all-ones attention mask: packed sequences have no padding
  Int8Scratch int8;
  StageClock stages;
};

const float* weight(Gemma& m, const std::string& name, std::vector<int64_t> shape) {
  return m.st->f32(m.prefix + name, shape);
}

void load(Gemma& m, const std::string& dir, const double* cfg, int64_t n_cfg) {
  auto& c = m.c;
  const int64_t n_dense = static_cast<int64_t>(cfg[16]);
  const int64_t n_base = 17 + 4 * n_dense + static_cast<int64_t>(cfg[0]);
  if (n_cfg != n_base && n_cfg != n_base + 1)
    throw std::runtime_error("a Gemma pipeline's config has the wrong number of values");
  c = {static_cast<int64_t>(cfg[0]), static_cast<int64_t>(cfg[1]), static_cast<int64_t>(cfg[2]),
       static_cast<int64_t>(cfg[3]), static_cast<int64_t>(cfg[4]), static_cast<int64_t>(cfg[5]),
       static_cast<int64_t>(cfg[6]), static_cast<int64_t>(cfg[7]), cfg[8], cfg[9], cfg[10], cfg[11],
       static_cast<int64_t>(cfg[12]), static_cast<int64_t>(cfg[13]), cfg[14] != 0, cfg[15] != 0,
       n_cfg == n_base + 1 && cfg[n_base] != 0};
  if (c.heads % c.kv_heads != 0) throw std::runtime_error("query heads are not a multiple of key/value heads");
  m.st = std::make_unique<SafetensorsFile>(dir + "/model.safetensors");
  m.prefix = m.st->has("embed_tokens.weight") ? "" : "model.";
  const int64_t H = c.hidden, I = c.intermediate, D = c.head_dim, QD = c.heads * D, KD = c.kv_heads * D;
  m.embed = weight(m, "embed_tokens.weight", {c.vocab, H});
  m.final_norm = weight(m, "norm.weight", {H});
  // Gemma3TextScaledWordEmbedding multiplies by sqrt(hidden) rounded to the weights' dtype.
  m.embed_scale = static_cast<float>(std::sqrt(static_cast<double>(H)));
  for (int64_t l = 0; l < c.layers; ++l) {
    const std::string b = "layers." + std::to_string(l) + ".";
    Layer L;
    L.sliding = cfg[17 + 4 * n_dense + l] != 0;
    L.in_norm = weight(m, b + "input_layernorm.weight", {H});
    L.wq = weight(m, b + "self_attn.q_proj.weight", {QD, H});
    L.wk = weight(m, b + "self_attn.k_proj.weight", {KD, H});
    L.wv = weight(m, b + "self_attn.v_proj.weight", {KD, H});
    L.wo = weight(m, b + "self_attn.o_proj.weight", {H, QD});
    L.q_norm = weight(m, b + "self_attn.q_norm.weight", {D});
    L.k_norm = weight(m, b + "self_attn.k_norm.weight", {D});
    L.post_attn_norm = weight(m, b + "post_attention_layernorm.weight", {H});
    L.pre_ffn_norm = weight(m, b + "pre_feedforward_layernorm.weight", {H});
    L.post_ffn_norm = weight(m, b + "post_feedforward_layernorm.weight", {H});
    L.gate = weight(m, b + "mlp.gate_proj.weight", {I, H});
    L.up = weight(m, b + "mlp.up_proj.weight", {I, H});
    L.down = weight(m, b + "mlp.down_proj.weight", {H, I});
    if (c.int8) {
      L.qq = quantize_weight(L.wq, QD, H);
      L.qk = quantize_weight(L.wk, KD, H);
      L.qv = quantize_weight(L.wv, KD, H);
      L.qo = quantize_weight(L.wo, H, QD);
      L.qgate = quantize_weight(L.gate, I, H);
      L.qup = quantize_weight(L.up, I, H);
      L.qdown = quantize_weight(L.down, H, I);
    }
    m.layers.push_back(L);
  }
  for (int64_t i = 0; i < n_dense; ++i) {
    const double* d = cfg + 17 + 4 * i;
    Dense dn;
    dn.in = static_cast<int64_t>(d[1]);
    dn.out = static_cast<int64_t>(d[2]);
    dn.st = std::make_unique<SafetensorsFile>(dir + "/" + std::to_string(static_cast<int64_t>(d[0])) +
                                              "_Dense/model.safetensors");
    dn.w = dn.st->f32("linear.weight", {dn.out, dn.in});
    dn.b = d[3] != 0 ? dn.st->f32("linear.bias", {dn.out}) : nullptr;
    m.dense.push_back(std::move(dn));
  }
}

void linear(const float* x, int64_t n, int64_t in, const float* w, const float* b, int64_t outd, float* y) {
  View xv = f32(x, {n, in}), wv = f32(w, {outd, in}), yv = f32(y, {n, outd});
  if (b) {
    View bv = f32(b, {outd});
    OPGEN_CALL(K_LINEAR_BIAS, xv.in(), wv.in(), bv.in(), yv.out());
  } else {
    OPGEN_CALL(K_LINEAR, xv.in(), wv.in(), yv.out());
  }
}

// An encoder projection (no bias): through int8 when the layer was quantized at load.
void project(Gemma& m, const float* x, int64_t n, int64_t in, const float* w, const Int8Weight& q, int64_t outd,
             float* y) {
  if (!q.empty()) return int8_linear(m.int8, x, n, in, q, nullptr, outd, y);
  linear(x, n, in, w, nullptr, outd, y);
}

void rms_norm(const float* x, int64_t rows, int64_t d, const float* w, double eps, float* y) {
  View xv = f32(x, {rows, d}), wv = f32(w, {d}), yv = f32(y, {rows, d});
  OPGEN_CALL(K_RMS_NORM, xv.in(), wv.in(), eps, yv.out());
}

void add(const float* a, const float* b, int64_t n, float* y) {
  View av = f32(a, {n}), bv = f32(b, {n}), yv = f32(y, {n});
  OPGEN_CALL(K_ADD, av.in(), bv.in(), yv.out());
}

// Embeddings of B sequences packed end to end without padding (seq[b] = (offset, length)
// into ids and pos): token-wise kernels run once over all N tokens, rotary embeddings,
// attention and pooling per sequence on views. out gets B x (the last Dense's size), normalised.
void forward(Gemma& m, const int64_t* ids, const int64_t* pos, const std::vector<std::pair<int64_t, int64_t>>& seq,
             float* out) {
  const auto& c = m.c;
  const int64_t B = static_cast<int64_t>(seq.size());
  const int64_t H = c.hidden, I = c.intermediate, D = c.head_dim, NQ = c.heads, NK = c.kv_heads;
  const int64_t N = seq.back().first + seq.back().second;
  const int64_t QD = NQ * D, KD = NK * D;
  for (auto* buf : {&m.h, &m.x, &m.attn}) buf->resize(N * H);
  for (auto* buf : {&m.q, &m.qn, &m.qr, &m.ctx, &m.merged}) buf->resize(N * QD);
  for (auto* buf : {&m.k, &m.v, &m.kn, &m.kr}) buf->resize(N * KD);
  for (auto* buf : {&m.gate, &m.up, &m.act}) buf->resize(N * I);
  m.ones.assign(static_cast<size_t>(c.max_length), 1);
  auto encoder = std::make_unique<Timed>(m.stages.encoder);
  {
    View iv = i64(ids, {N}), ev = f32(m.embed, {c.vocab, H}), xv = f32(m.x.data(), {N, H});
    OPGEN_CALL(K_EMBEDDING, iv.in(), ev.in(), xv.out());
    View xin = f32(m.x.data(), {N, H}), sv = f32(&m.embed_scale, {}), hv = f32(m.h.data(), {N, H});
    OPGEN_CALL(K_MUL, xin.in(), sv.in(), hv.out());
  }
  const double scale = 1.0 / std::sqrt(c.qscalar);
  for (const Layer& L : m.layers) {
    rms_norm(m.h.data(), N, H, L.in_norm, c.eps, m.x.data());
    project(m, m.x.data(), N, H, L.wq, L.qq, QD, m.q.data());
    project(m, m.x.data(), N, H, L.wk, L.qk, KD, m.k.data());
    project(m, m.x.data(), N, H, L.wv, L.qv, KD, m.v.data());
    rms_norm(m.q.data(), N * NQ, D, L.q_norm, c.eps, m.qn.data());
    rms_norm(m.k.data(), N * NK, D, L.k_norm, c.eps, m.kn.data());
    const double theta = L.sliding ? c.local_theta : c.theta;
    for (const auto& [o, S] : seq) {
      // Rows o..o+S of (N, heads*D) seen as (1, heads, S, D); rotated into contiguous
      // (heads, S, D) blocks at the same offsets, then attention over this sequence alone.
      View qv = f32(m.qn.data() + o * QD, {1, NQ, S, D}, {S * QD, D, QD, 1});
      View qo = f32(m.qr.data() + o * QD, {1, NQ, S, D});
      View pq = i64(pos + o, {S});
      OPGEN_CALL(K_ROPE, qv.in(), pq.in(), theta, qo.out());
      View kv = f32(m.kn.data() + o * KD, {1, NK, S, D}, {S * KD, D, KD, 1});
      View ko = f32(m.kr.data() + o * KD, {1, NK, S, D});
      View pk = i64(pos + o, {S});
      OPGEN_CALL(K_ROPE, kv.in(), pk.in(), theta, ko.out());
      View qa = f32(m.qr.data() + o * QD, {1, NQ, S, D}), ka = f32(m.kr.data() + o * KD, {1, NK, S, D});
      View va = f32(m.v.data() + o * KD, {1, NK, S, D}, {S * KD, D, KD, 1});
      View mv = i64(m.ones.data(), {1, S}), cv = f32(m.ctx.data() + o * QD, {1, NQ, S, D});
      OPGEN_CALL(K_SDPA, qa.in(), ka.in(), va.in(), mv.in(), L.sliding ? c.window : int64_t{0}, scale, cv.out());
      merge_heads(m.ctx.data() + o * QD, NQ, S, D, m.merged.data() + o * QD, QD);
    }
    project(m, m.merged.data(), N, QD, L.wo, L.qo, H, m.attn.data());
    rms_norm(m.attn.data(), N, H, L.post_attn_norm, c.eps, m.x.data());
    add(m.h.data(), m.x.data(), N * H, m.attn.data());  // residual
    std::swap(m.h, m.attn);
    rms_norm(m.h.data(), N, H, L.pre_ffn_norm, c.eps, m.x.data());
    project(m, m.x.data(), N, H, L.gate, L.qgate, I, m.gate.data());
    project(m, m.x.data(), N, H, L.up, L.qup, I, m.up.data());
    {
      View gv = f32(m.gate.data(), {N, I}), av = f32(m.act.data(), {N, I});
      OPGEN_CALL(K_GELU, gv.in(), "tanh", int64_t{4}, av.out());
      View ain = f32(m.act.data(), {N, I}), uv = f32(m.up.data(), {N, I}), gout = f32(m.gate.data(), {N, I});
      OPGEN_CALL(K_MUL, ain.in(), uv.in(), gout.out());
    }
    project(m, m.gate.data(), N, I, L.down, L.qdown, H, m.attn.data());
    rms_norm(m.attn.data(), N, H, L.post_ffn_norm, c.eps, m.x.data());
    add(m.h.data(), m.x.data(), N * H, m.attn.data());
    std::swap(m.h, m.attn);
  }
  rms_norm(m.h.data(), N, H, m.final_norm, c.eps, m.x.data());
  encoder.reset();
  Timed pooling(m.stages.pooling);
  m.pooled.resize(B * H);
  for (int64_t b = 0; b < B; ++b) {
    const auto [o, S] = seq[b];
    View hv = f32(m.x.data() + o * H, {1, S, H}), mv = i64(m.ones.data(), {1, S}), pv = f32(m.pooled.data() + b * H, {1, H});
    OPGEN_CALL(K_MEAN_POOL, hv.in(), mv.in(), pv.out());
  }
  const float* cur = m.pooled.data();
  int64_t width = H;
  Buffer<float>* bufs[2] = {&m.d0, &m.d1};
  for (size_t i = 0; i < m.dense.size(); ++i) {
    const Dense& d = m.dense[i];
    if (d.in != width) throw std::runtime_error("Dense layer input size does not match the previous output");
    bufs[i % 2]->resize(B * d.out);
    linear(cur, B, d.in, d.w, d.b, d.out, bufs[i % 2]->data());
    cur = bufs[i % 2]->data();
    width = d.out;
  }
  View cin = f32(cur, {B, width}), ov = f32(out, {B, width});
  OPGEN_CALL(K_NORMALIZE, cin.in(), 2.0, int64_t{1}, 1e-12, ov.out());
}

int64_t out_dim(const Gemma& m) { return m.dense.empty() ? m.c.hidden : m.dense.back().out; }

}  // namespace

void truncate(const float* x, int64_t B, int64_t dim, int64_t dims, float* out) {
  truncate_with(K_NORMALIZE, x, B, dim, dims, out);
}

}  // namespace opgen::pipeline

using opgen::pipeline::Gemma;

extern "C" {

__attribute__((visibility("default"))) int32_t opgen_pipeline_open(const char* model_dir, const double* config,
                                                                   int64_t n_config, void** handle, opgen_error* err) {
  try {
    if (n_config < 17) return opgen::pipeline::fail(err, OPGEN_VALUE_ERROR, "a Gemma pipeline takes at least 17 config values");
    auto m = std::make_unique<Gemma>();
    opgen::pipeline::load(*m, model_dir, config, n_config);
    *handle = m.release();
    return 0;
  } catch (const std::exception& e) {
    return opgen::pipeline::fail(err, OPGEN_VALUE_ERROR, e.what());
  }
}

// The BPE tokenizer (read from tokenizer.json by the host), laid out once by opgen.text.bpe_tokenizer_table.
__attribute__((visibility("default"))) int32_t opgen_pipeline_set_tokenizer(void* handle, const opgen_string* vocab,
                                                                            int64_t n_vocab, const int64_t* merges,
                                                                            int64_t n_merges, const int64_t* added,
                                                                            int64_t n_added, opgen_error* err) {
  try {
    Gemma& m = *static_cast<Gemma*>(handle);
    opgen_list table{};
    OPGEN_CALL(K_BPE_TABLE, vocab, n_vocab, merges, n_merges, added, n_added, &table);
    m.tokenizer = opgen::pipeline::take_int64_list(table);
    return 0;
  } catch (const std::exception& e) {
    return opgen::pipeline::fail(err, OPGEN_VALUE_ERROR, e.what());
  }
}

__attribute__((visibility("default"))) int64_t opgen_pipeline_dim(void* handle) {
  return opgen::pipeline::out_dim(*static_cast<Gemma*>(handle));
}

// As in bert.cpp: n texts into out (n x dims), token counts per text, packed batches.
__attribute__((visibility("default"))) int32_t opgen_pipeline_embed(void* handle, const opgen_string* texts, int64_t n,
                                                                    int64_t dims, float* out, int64_t* tokens,
                                                                    opgen_error* err) {
  try {
    Gemma& m = *static_cast<Gemma*>(handle);
    const int64_t H = opgen::pipeline::out_dim(m);
    if (dims < 1 || dims > H) return opgen::pipeline::fail(err, OPGEN_VALUE_ERROR, "dims out of range");
    if (m.tokenizer.empty()) return opgen::pipeline::fail(err, OPGEN_VALUE_ERROR, "no tokenizer was set");
    if (n == 0) return 0;
    opgen_list enc{};
    {
      opgen::pipeline::Timed clock(m.stages.tokenize);
      opgen::pipeline::View table = opgen::pipeline::i64(m.tokenizer.data(), {static_cast<int64_t>(m.tokenizer.size())});
      OPGEN_CALL(K_BPE, table.in(), texts, n, static_cast<uint8_t>(m.c.add_bos), static_cast<uint8_t>(m.c.add_eos),
                 m.c.max_length, &enc);
    }
    opgen::pipeline::embed_tokenized(
        enc, n, tokens, m.c.max_batch, dims, H, out,
        [&](const int64_t* ids, const int64_t* pos, const std::vector<std::pair<int64_t, int64_t>>& seq, float* o) {
          opgen::pipeline::forward(m, ids, pos, seq, o);
        },
        opgen::pipeline::truncate);
    return 0;
  } catch (const std::exception& e) {
    return opgen::pipeline::fail(err, OPGEN_INTERNAL_ERROR, e.what());
  }
}

#ifndef OPGEN_PIPELINE_EMBEDDED  // a compiled function's library exports only its own entry point
// Seconds per stage since the pipeline opened: tokenize, encoder, pooling (see StageClock).
__attribute__((visibility("default"))) void opgen_pipeline_stage_seconds(void* handle, double* out) {
  const auto& s = static_cast<Gemma*>(handle)->stages;
  out[0] = s.tokenize;
  out[1] = s.encoder;
  out[2] = s.pooling;
}
#endif

__attribute__((visibility("default"))) void opgen_pipeline_close(void* handle) { delete static_cast<Gemma*>(handle); }
}
