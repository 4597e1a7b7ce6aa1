// all-MiniLM-L6-v2 (and BERT encoders like it) as a native embedding pipeline:
// WordPiece tokenization, the BERT encoder, mean pooling under the attention mask and
// L2 normalisation, every step a verified registry kernel (opgen_pipeline_kernels.h).
// This file only moves data: it lays out strided views, owns the activations,
// reorders attention heads and, once at load, has the transpose kernel lay each float32
// weight out as W^T (the layout the linear kernel streams at batch 1). Weights come from the model's safetensors file.
//
// With int8 set in the config (the `:int8` models), every linear layer of the encoder runs
// quantized (int8.hpp), still through registry kernels only.
#include <algorithm>
#include <cmath>
#include <memory>

#include "opgen_pipeline_kernels.h"
#include "int8.hpp"
#include "pipeline.hpp"
#include "safetensors.hpp"

namespace opgen::pipeline {

namespace {

// Config values, in the order the host passes them (see opgen/pipelines/models.py).
struct BertConfig {
  int64_t layers, hidden, heads, intermediate, max_length, vocab, positions, max_batch;
  double eps;
  bool int8;  // linear layers quantized (dynamic per-token int8 x per-channel int8 weights)
};

// One dense layer: y = x W^T + b, W (out, in); with int8, W's int8 rows and their scales.
// In float32, wt holds W^T (in, out) contiguous, laid out once at load: the linear kernel reads
// its column panels in place for a few rows (batch 1), where it would otherwise copy W into
// panels or take horizontal sums on every call (see transposed()).
struct Linear {
  const float *w, *b;
  int64_t out, in;
  Int8Weight q;
  const float* wt = nullptr;
};

struct Layer {
  // qkv: the query, key and value projections as one layer of 3 x hidden outputs (their weights
  // stacked at load), so one kernel call (one OpenMP region; with int8, one quantization of the
  // input) computes all three: token row r of its output holds q | k | v side by side.
  Linear qkv, o, i, d;
  const float *ln1w, *ln1b, *ln2w, *ln2b;
};

struct Bert {
  BertConfig c;
  std::unique_ptr<SafetensorsFile> st;
  // The vocabulary as opgen.text.wordpiece_vocab_table laid it out, once at load: a call then
  // finds pieces through it instead of hashing all 30522 of them first (about 0.9 ms a call).
  std::vector<int64_t> vocab_table;
  const float *word, *pos, *type, *ln_w, *ln_b;
  std::vector<Layer> layers;
  std::vector<Buffer<float>> stacked;  // the stacked qkv biases
  std::vector<Buffer<float>> transposed;  // W^T of every float32 layer (Linear::wt)
  // Activations, reused from batch to batch.
  Buffer<float> h, t, q, k, qkv, ctx, merged, inter, act, pooled;
  std::vector<int64_t> ones;  // an all-ones attention mask: packed sequences have no padding
  Int8Scratch int8;
  StageClock stages;
};

std::string prefix_of(const SafetensorsFile& st) {
  // sentence-transformers checkpoints name tensors "embeddings....", HF BertModel ones may
  // carry a "bert." prefix.
  return st.has("embeddings.word_embeddings.weight") ? "" : "bert.";
}

// L.wt = W^T (in x out, contiguous), copied by the registry's transpose kernel, once.
void transposed(Bert& m, Linear& L) {
  Buffer<float> wt(static_cast<size_t>(L.in * L.out));
  View wv = f32(L.w, {L.out, L.in}), tv = f32(wt.data(), {L.in, L.out});
  const int64_t axes[2] = {1, 0};
  OPGEN_CALL(K_TRANSPOSE, wv.in(), axes, int64_t{2}, tv.out());
  m.transposed.push_back(std::move(wt));  // a moved vector keeps its buffer: the pointer stays valid
  L.wt = m.transposed.back().data();
}

// The weight and bias of a dense layer `name`, quantized per output channel when the config asks.
Linear dense(Bert& m, const std::string& name, int64_t out, int64_t in) {
  Linear L{m.st->f32(name + ".weight", {out, in}), m.st->f32(name + ".bias", {out}), out, in, {}};
  if (m.c.int8) L.q = quantize_weight(L.w, out, in);
  else transposed(m, L);
  L.w = nullptr;  // the int8 rows and scales, or W^T, replace the file's rows
  m.st->done_with(name + ".weight");
  return L;
}

// Dense layers `names` (each out x in) as one layer whose output rows are theirs side by side:
// the weights stacked row-wise ((names * out) x in), the biases end to end. Each output is
// still one dot product of a weight row with the input, so the values are those of the
// separate layers; with int8 the per-channel scales are per row too, hence the same.
Linear stacked(Bert& m, const std::vector<std::string>& names, int64_t out, int64_t in) {
  const int64_t parts = static_cast<int64_t>(names.size());
  Buffer<float> w(static_cast<size_t>(parts * out * in)), b(static_cast<size_t>(parts * out));
  for (int64_t p = 0; p < parts; ++p) {
    const float* wp = m.st->f32(names[p] + ".weight", {out, in});
    const float* bp = m.st->f32(names[p] + ".bias", {out});
    std::copy(wp, wp + out * in, w.begin() + p * out * in);
    std::copy(bp, bp + out, b.begin() + p * out);
    m.st->done_with(names[p] + ".weight");  // copied
  }
  Linear L{w.data(), nullptr, parts * out, in, {}};
  if (m.c.int8) L.q = quantize_weight(w.data(), L.out, in);
  else transposed(m, L);
  L.w = nullptr;  // the int8 rows and scales, or W^T, replace the stacked rows
  m.stacked.push_back(std::move(b));  // a moved vector keeps its buffer: the pointer stays valid
  L.b = m.stacked.back().data();
  return L;
}

void load(Bert& m, const std::string& dir) {
  m.st = std::make_unique<SafetensorsFile>(dir + "/model.safetensors");
  SafetensorsFile& st = *m.st;
  const auto& c = m.c;
  const std::string p = prefix_of(st);
  const int64_t H = c.hidden, I = c.intermediate;
  m.word = st.f32(p + "embeddings.word_embeddings.weight", {c.vocab, H});
  m.pos = st.f32(p + "embeddings.position_embeddings.weight", {c.positions, H});
  m.type = st.f32(p + "embeddings.token_type_embeddings.weight", {st.info(p + "embeddings.token_type_embeddings.weight").shape.at(0), H});
  m.ln_w = st.f32(p + "embeddings.LayerNorm.weight", {H});
  m.ln_b = st.f32(p + "embeddings.LayerNorm.bias", {H});
  for (int64_t l = 0; l < c.layers; ++l) {
    const std::string b = p + "encoder.layer." + std::to_string(l) + ".";
    Layer L;
    L.qkv = stacked(m, {b + "attention.self.query", b + "attention.self.key", b + "attention.self.value"}, H, H);
    L.o = dense(m, b + "attention.output.dense", H, H);
    L.ln1w = st.f32(b + "attention.output.LayerNorm.weight", {H});
    L.ln1b = st.f32(b + "attention.output.LayerNorm.bias", {H});
    L.i = dense(m, b + "intermediate.dense", I, H);
    L.d = dense(m, b + "output.dense", H, I);
    L.ln2w = st.f32(b + "output.LayerNorm.weight", {H});
    L.ln2b = st.f32(b + "output.LayerNorm.bias", {H});
    m.layers.push_back(L);
  }
  const std::vector<std::string> vocab = read_lines(dir + "/vocab.txt");
  if (static_cast<int64_t>(vocab.size()) != c.vocab)
    throw std::runtime_error(dir + "/vocab.txt has " + std::to_string(vocab.size()) + " pieces; the config says " +
                             std::to_string(c.vocab));
  std::vector<opgen_string> pieces;
  for (auto& s : vocab) pieces.push_back(opgen_string{const_cast<char*>(s.data()), static_cast<int64_t>(s.size())});
  opgen_list table{};
  OPGEN_CALL(K_WORDPIECE_TABLE, pieces.data(), static_cast<int64_t>(pieces.size()), &table);
  m.vocab_table = opgen::pipeline::take_int64_list(table);
}

// h <- LayerNorm(x + y) over the last dim, for n rows of H.
void add_norm(Bert& m, float* x, const float* y, const float* w, const float* b, int64_t n) {
  const int64_t H = m.c.hidden;
  m.t.resize(static_cast<size_t>(n * H));
  View xv = f32(x, {n, H}), yv = f32(y, {n, H}), tv = f32(m.t.data(), {n, H});
  OPGEN_CALL(K_ADD, xv.in(), yv.in(), tv.out());
  View tin = f32(m.t.data(), {n, H}), wv = f32(w, {H}), bv = f32(b, {H}), hv = f32(x, {n, H});
  OPGEN_CALL(K_LAYER_NORM, tin.in(), wv.in(), bv.in(), m.c.eps, hv.out());
}

// y (n x L.out) = x (n x L.in) W^T + b, in float32 or, for a quantized layer, through int8.
void linear(Bert& m, const float* x, int64_t n, const Linear& L, float* y) {
  if (!L.q.empty()) return int8_linear(m.int8, x, n, L.in, L.q, L.b, L.out, y);
  // W as the kernel takes it, (out, in), seen through W^T: strides (1, out).
  View xv = f32(x, {n, L.in}), wv = f32(L.wt, {L.out, L.in}, {1, L.out}), bv = f32(L.b, {L.out}),
       yv = f32(y, {n, L.out});
  OPGEN_CALL(K_LINEAR_BIAS, xv.in(), wv.in(), bv.in(), yv.out());
}

// Embeddings of B sequences packed end to end (no padding): ids holds their tokens,
// seq[b] = (offset, length) of sequence b. Token-wise steps (linear, LayerNorm, GELU) run
// once over all N tokens; attention and pooling run per sequence on views of the packed
// buffers, so no work is spent on padding. out gets B x H, L2-normalised.
void forward(Bert& m, const int64_t* ids, const int64_t* pos, const std::vector<std::pair<int64_t, int64_t>>& seq,
             float* out) {
  const auto& c = m.c;
  const int64_t B = static_cast<int64_t>(seq.size());
  const int64_t H = c.hidden, NH = c.heads, HD = H / NH, I = c.intermediate;
  const int64_t N = seq.back().first + seq.back().second;
  for (auto* buf : {&m.h, &m.q, &m.k, &m.ctx, &m.merged, &m.t}) buf->resize(N * H);
  m.qkv.resize(N * 3 * H);
  m.inter.resize(N * I);
  m.act.resize(N * I);
  m.ones.assign(static_cast<size_t>(c.max_length), 1);
  auto encoder = std::make_unique<Timed>(m.stages.encoder);
  // Embeddings: word + position + token type 0, then LayerNorm.
  {
    View iv = i64(ids, {N}), wv = f32(m.word, {c.vocab, H}), hv = f32(m.h.data(), {N, H});
    OPGEN_CALL(K_EMBEDDING, iv.in(), wv.in(), hv.out());
    View pv = i64(pos, {N}), pw = f32(m.pos, {c.positions, H}), qv = f32(m.q.data(), {N, H});
    OPGEN_CALL(K_EMBEDDING, pv.in(), pw.in(), qv.out());
    View hin = f32(m.h.data(), {N, H}), pin = f32(m.q.data(), {N, H}), kv = f32(m.k.data(), {N, H});
    OPGEN_CALL(K_ADD, hin.in(), pin.in(), kv.out());
    View kin = f32(m.k.data(), {N, H}), tv = f32(m.type, {H}), tn = f32(m.t.data(), {N, H});
    OPGEN_CALL(K_ADD, kin.in(), tv.in(), tn.out());  // token type 0 broadcast everywhere
    View tin = f32(m.t.data(), {N, H}), lw = f32(m.ln_w, {H}), lb = f32(m.ln_b, {H}), hn = f32(m.h.data(), {N, H});
    OPGEN_CALL(K_LAYER_NORM, tin.in(), lw.in(), lb.in(), c.eps, hn.out());
  }
  const double scale = 1.0 / std::sqrt(static_cast<double>(HD));
  for (const Layer& L : m.layers) {
    linear(m, m.h.data(), N, L.qkv, m.qkv.data());
    for (const auto& [o, S] : seq) {
      // Sequence rows o..o+S of q (then k, v) in the (N, 3 * NH*HD) rows, seen as (1, NH, S, HD):
      // strided views, no copy.
      const float* rows = m.qkv.data() + o * 3 * H;
      View qv = f32(rows, {1, NH, S, HD}, {S * 3 * H, HD, 3 * H, 1});
      View kv = f32(rows + H, {1, NH, S, HD}, {S * 3 * H, HD, 3 * H, 1});
      View vv = f32(rows + 2 * H, {1, NH, S, HD}, {S * 3 * H, HD, 3 * H, 1});
      View mv = i64(m.ones.data(), {1, S});
      View cv = f32(m.ctx.data() + o * H, {1, NH, S, HD});
      OPGEN_CALL(K_SDPA, qv.in(), kv.in(), vv.in(), mv.in(), int64_t{0}, scale, cv.out());
      merge_heads(m.ctx.data() + o * H, NH, S, HD, m.merged.data() + o * H, H);
    }
    linear(m, m.merged.data(), N, L.o, m.q.data());
    add_norm(m, m.h.data(), m.q.data(), L.ln1w, L.ln1b, N);
    linear(m, m.h.data(), N, L.i, m.inter.data());
    {
      View iv = f32(m.inter.data(), {N, I}), av = f32(m.act.data(), {N, I});
      OPGEN_CALL(K_GELU, iv.in(), "none", int64_t{4}, av.out());
    }
    linear(m, m.act.data(), N, L.d, m.q.data());
    add_norm(m, m.h.data(), m.q.data(), L.ln2w, L.ln2b, N);
  }
  encoder.reset();
  Timed pooling(m.stages.pooling);
  m.pooled.resize(B * H);
  for (int64_t b = 0; b < B; ++b) {
    const auto [o, S] = seq[b];
    View hv = f32(m.h.data() + o * H, {1, S, H}), mv = i64(m.ones.data(), {1, S}), pv = f32(m.pooled.data() + b * H, {1, H});
    OPGEN_CALL(K_MEAN_POOL, hv.in(), mv.in(), pv.out());
  }
  View pin = f32(m.pooled.data(), {B, H}), ov = f32(out, {B, H});
  OPGEN_CALL(K_NORMALIZE, pin.in(), 2.0, int64_t{1}, 1e-12, ov.out());
}

}  // namespace

void truncate(const float* x, int64_t B, int64_t dim, int64_t dims, float* out) {
  truncate_with(K_NORMALIZE, x, B, dim, dims, out);
}

}  // namespace opgen::pipeline

using opgen::pipeline::Bert;

extern "C" {

// config: layers, hidden, heads, intermediate, max_length, vocab, positions, max_batch, eps[, int8].
__attribute__((visibility("default"))) int32_t opgen_pipeline_open(const char* model_dir, const double* config,
                                                                   int64_t n_config, void** handle, opgen_error* err) {
  try {
    if (n_config != 9 && n_config != 10)
      return opgen::pipeline::fail(err, OPGEN_VALUE_ERROR, "a BERT pipeline takes 9 config values (10 with int8)");
    auto m = std::make_unique<Bert>();
    const double* c = config;
    m->c = {static_cast<int64_t>(c[0]), static_cast<int64_t>(c[1]), static_cast<int64_t>(c[2]),
            static_cast<int64_t>(c[3]), static_cast<int64_t>(c[4]), static_cast<int64_t>(c[5]),
            static_cast<int64_t>(c[6]), static_cast<int64_t>(c[7]), c[8], n_config == 10 && c[9] != 0};
    if (m->c.hidden % m->c.heads != 0)
      return opgen::pipeline::fail(err, OPGEN_VALUE_ERROR, "hidden size is not a multiple of the head count");
    load(*m, model_dir);
    *handle = m.release();
    return 0;
  } catch (const std::exception& e) {
    return opgen::pipeline::fail(err, OPGEN_VALUE_ERROR, e.what());
  }
}

__attribute__((visibility("default"))) int64_t opgen_pipeline_dim(void* handle) {
  return static_cast<Bert*>(handle)->c.hidden;
}

// Embeds n texts into out (n x dims, row-major, L2-normalised): the first `dims` of the
// dim components, re-normalised when dims < dim (Matryoshka truncation). tokens[i] gets
// text i's token count ([CLS] and [SEP] included). Texts are tokenized together, then run
// max_batch at a time, packed without padding (see embed_packed).
__attribute__((visibility("default"))) int32_t opgen_pipeline_embed(void* handle, const opgen_string* texts, int64_t n,
                                                                    int64_t dims, float* out, int64_t* tokens,
                                                                    opgen_error* err) {
  try {
    Bert& m = *static_cast<Bert*>(handle);
    if (dims < 1 || dims > m.c.hidden) return opgen::pipeline::fail(err, OPGEN_VALUE_ERROR, "dims out of range");
    if (n == 0) return 0;
    opgen_list enc{};
    {
      opgen::pipeline::Timed clock(m.stages.tokenize);
      opgen::pipeline::View table = opgen::pipeline::i64(m.vocab_table.data(), {static_cast<int64_t>(m.vocab_table.size())});
      OPGEN_CALL(K_WORDPIECE, table.in(), texts, n, m.c.max_length, &enc);
    }
    opgen::pipeline::embed_tokenized(
        enc, n, tokens, m.c.max_batch, dims, m.c.hidden, out,
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
  const auto& s = static_cast<Bert*>(handle)->stages;
  out[0] = s.tokenize;
  out[1] = s.encoder;
  out[2] = s.pooling;
}
#endif

__attribute__((visibility("default"))) void opgen_pipeline_close(void* handle) { delete static_cast<Bert*>(handle); }
}
