"""Write the half-precision answers (float16, bfloat16) of ops whose float32 kernel is shipped.

Half precision in opgen is a storage format with float32 arithmetic (issue 14 point 6, as
PyTorch's CPU kernels do it): a float16 or bfloat16 overload's kernel widens its inputs to float32
(exactly), runs the op's float32 algorithm, and rounds the result once to the half dtype. So the
half answer of an op is its float32 answer, unchanged but made private (``static``, renamed
``float32_kernel``: a compiled library links the float32 and the half kernel side by side), and a
wrapper with the half entry point around it. Broadcast (stride-0) dims stay broadcast in the
float32 copies, so a weight presented with loop dims costs its own size, not the loop's.

This script writes those answers into answers/cpp/; they are admitted like any other answer
(``scripts/record_answers.py --target cpp OP__OVERLOAD``), so the gate checks the composition.

    python scripts/half_kernels.py            # (re)write every half answer listed below
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ANSWERS = ROOT / "answers" / "cpp"

# op -> the float32 overload whose answer's algorithm the half kernels run; the half overloads are
# named after it (f32 -> f16, bf16; f32_bias -> f16_bias, bf16_bias)
HALF_OPS = {
    "torch.nn.functional.softmax": "f32",
    "torch.nn.functional.layer_norm": "f32",
    "opgen.nn.gemma_rms_norm": "f32",
    "torch.nn.functional.linear": "f32_bias",
    "operator.matmul": "f32",
    "opgen.nn.attention": "f32",
}
HALVES = {"f16": ("_Float16", "float16"), "bf16": ("opgen::bfloat16", "bfloat16")}

WIDENING = """
// ---- half storage, float32 arithmetic ------------------------------------------------------
// The float32 kernel above runs on float32 copies of the inputs (every {dtype} value is a float32,
// so widening is exact) and its float32 result is rounded once into `out` (to nearest, ties to
// even). Dims of stride 0 (broadcast) stay stride 0 in the copies.
namespace {{

using Half = {ctype};

inline float widen(_Float16 h) {{ return static_cast<float>(h); }}
inline float widen(opgen::bfloat16 h) {{ return opgen::to_float(h); }}
inline void narrow(float f, _Float16& h) {{ h = static_cast<_Float16>(f); }}
inline void narrow(float f, opgen::bfloat16& h) {{ h = opgen::to_bfloat16(f); }}

// Unit-stride rows converted sixteen values at a time where the build has AVX-512 (GCC 12 leaves
// _Float16 conversion loops scalar without AVX512-FP16). Each lane computes exactly what the
// scalar conversion above computes: vcvtph2ps/vcvtps2ph are the instructions GCC emits for one
// value (to nearest even, nan kept quiet), and the bfloat16 rounding is to_bfloat16's integer
// arithmetic lane by lane (not vcvtneps2bf16, which flushes subnormals).
inline void widen_row(const _Float16* a, float* b, int64_t n) {{
  int64_t i = 0;
#if defined(__AVX512F__)
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_ps(b + i, _mm512_maskz_cvtph_ps(0xffff, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + i))));
#endif
  for (; i < n; ++i) b[i] = widen(a[i]);
}}
inline void widen_row(const opgen::bfloat16* a, float* b, int64_t n) {{
  int64_t i = 0;
#if defined(__AVX512F__)
  for (; i + 16 <= n; i += 16) {{
    const __m512i bits = _mm512_maskz_cvtepu16_epi32(0xffff, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + i)));
    _mm512_storeu_ps(b + i, _mm512_castsi512_ps(_mm512_slli_epi32(bits, 16)));
  }}
#endif
  for (; i < n; ++i) b[i] = widen(a[i]);
}}
inline void narrow_row(const float* a, _Float16* b, int64_t n) {{
  int64_t i = 0;
#if defined(__AVX512F__)
  for (; i + 16 <= n; i += 16)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(b + i),
                        _mm512_cvtps_ph(_mm512_loadu_ps(a + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
#endif
  for (; i < n; ++i) narrow(a[i], b[i]);
}}
inline void narrow_row(const float* a, opgen::bfloat16* b, int64_t n) {{
  int64_t i = 0;
#if defined(__AVX512F__)
  const __m512i one = _mm512_set1_epi32(1), bias = _mm512_set1_epi32(0x7fff);
  const __m512i magnitude = _mm512_set1_epi32(0x7fffffff), infinity = _mm512_set1_epi32(0x7f800000);
  const __m512i quiet = _mm512_set1_epi32(0x0040);
  for (; i + 16 <= n; i += 16) {{
    const __m512i u = _mm512_castps_si512(_mm512_loadu_ps(a + i));
    const __m512i high = _mm512_srli_epi32(u, 16);
    const __m512i rounded = _mm512_srli_epi32(_mm512_add_epi32(u, _mm512_add_epi32(bias, _mm512_and_si512(high, one))), 16);
    const __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(u, magnitude), infinity);
    const __m512i result = _mm512_mask_blend_epi32(nan, rounded, _mm512_or_si512(high, quiet));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(b + i), _mm512_cvtepi32_epi16(result));
  }}
#endif
  for (; i < n; ++i) narrow(a[i], b[i]);
}}

struct Float32Copy {{
  std::vector<float> data;
  opgen::Tensor tensor;
}};

// A float32 copy of a half tensor: contiguous over its dims, except that stride-0 dims stay
// stride 0 (one copy of what they repeat). The innermost dim is a tight loop (a unit-stride one
// where the input is, which GCC vectorises: F16C conversions, bfloat16 shifts) and only the outer
// dims advance an odometer, so the copy costs about one load and one store per stored value.
Float32Copy widened(const opgen::Tensor& t) {{
  const int nd = t.ndim();
  int64_t shape[OPGEN_MAX_DIMS] = {{}}, strides[OPGEN_MAX_DIMS] = {{}};
  int64_t count = 1;
  for (int d = nd - 1; d >= 0; --d) {{
    shape[d] = t.size(d);
    const bool repeated = t.stride(d) == 0 && t.size(d) > 1;
    strides[d] = repeated ? 0 : count;
    if (!repeated) count *= t.size(d);
  }}
  Float32Copy c;
  c.data.resize(static_cast<size_t>(t.numel() == 0 ? 0 : count));
  if (t.numel() > 0 && nd == 0) {{
    c.data[0] = widen(*t.data<Half>());
  }} else if (t.numel() > 0) {{
    const Half* src = t.data<Half>();
    float* dst = c.data.data();
    const int inner = nd - 1;
    const int64_t n = strides[inner] == 0 && shape[inner] > 1 ? 1 : shape[inner];
    const int64_t step = t.stride(inner);
    int64_t idx[OPGEN_MAX_DIMS] = {{}};
    int64_t from = 0, to = 0;
    for (;;) {{  // every index of the outer dims whose repeated dims are 0: each stored row once
      const Half* a = src + from;
      float* b = dst + to;
      if (step == 1) {{
        widen_row(a, b, n);
      }} else {{
        for (int64_t i = 0; i < n; ++i) b[i] = widen(a[i * step]);
      }}
      int d = inner - 1;
      for (; d >= 0; --d) {{
        if (strides[d] == 0 && shape[d] > 1) continue;
        from += t.stride(d);
        to += strides[d];
        if (++idx[d] < shape[d]) break;
        from -= idx[d] * t.stride(d);
        to -= idx[d] * strides[d];
        idx[d] = 0;
      }}
      if (d < 0) break;
    }}
  }}
  opgen_tensor raw{{}};
  raw.data = c.data.data();
  raw.device = opgen_device{{1, 0}};
  raw.ndim = nd;
  raw.dtype = opgen_dtype{{2, 32, 1}};
  raw.shape = shape;
  raw.strides = strides;
  raw.byte_offset = 0;
  c.tensor = opgen::Tensor(raw);
  return c;
}}

// A contiguous float32 result of out's shape, rounded into out afterwards.
struct Float32Result {{
  std::vector<float> data;
  opgen::Tensor tensor;
  explicit Float32Result(const opgen::Tensor& out) : data(static_cast<size_t>(out.numel())) {{
    int64_t shape[OPGEN_MAX_DIMS] = {{}};
    for (int d = 0; d < out.ndim(); ++d) shape[d] = out.size(d);
    opgen_tensor raw{{}};
    raw.data = data.data();
    raw.device = opgen_device{{1, 0}};
    raw.ndim = out.ndim();
    raw.dtype = opgen_dtype{{2, 32, 1}};
    raw.shape = shape;
    raw.strides = nullptr;
    raw.byte_offset = 0;
    tensor = opgen::Tensor(raw);
  }}
  void store(opgen::Tensor& out) const {{
    narrow_row(data.data(), out.data<Half>(), static_cast<int64_t>(data.size()));
  }}
}};

}}  // namespace

{entry}
"""


def _entry(f32_name: str, params: str, half_name: str) -> str:
    """The half entry point: the f32 kernel's parameters, tensors widened and out rounded."""
    decls, calls, prep = [], [], []
    for p in [p.strip() for p in params.split(",")]:
        m = re.fullmatch(r"(const\s+)?opgen::Tensor&\s*(\w+)", p)
        if m and m.group(1):
            name = m.group(2)
            decls.append(p)
            prep.append(f"  const Float32Copy wide_{name} = widened({name});")
            calls.append(f"wide_{name}.tensor")
        elif m:
            name = m.group(2)
            decls.append(p)
            prep.append(f"  Float32Result wide_{name}({name});")
            calls.append(f"wide_{name}.tensor")
        else:
            decls.append(p)
            calls.append(p.split()[-1].lstrip("&*"))
    outs = [p for p in params.split(",") if re.fullmatch(r"\s*opgen::Tensor&\s*\w+\s*", p)]
    store = [f"  wide_{o.split('&')[-1].strip()}.store({o.split('&')[-1].strip()});" for o in outs]
    body = "\n".join(prep + [f"  float32_kernel({', '.join(calls)});"] + store)
    return f"void {half_name}({', '.join(decls)}) {{\n{body}\n}}"


def half_answer(op: str, f32_overload: str, half: str) -> str:
    ctype, dtype = HALVES[half]
    f32_stem = f"{op}__{f32_overload}"
    overload = f32_overload.replace("f32", half, 1)
    source = (ANSWERS / f"{f32_stem}.cpp").read_text()
    f32_name = f32_stem.replace(".", "_")
    m = re.search(rf"^void {re.escape(f32_name)}\(([^)]*)\)\s*{{", source, re.M)
    if m is None:
        raise SystemExit(f"{f32_stem}.cpp: no definition of {f32_name}(...) at the start of a line")
    params = " ".join(m.group(1).split())
    source = source[:m.start()] + f"static void float32_kernel({params}) {{" + source[m.end():]
    includes = [h for h in ("<vector>",) if f"#include {h}" not in source]
    includes.append("<immintrin.h>")  # used under __AVX512F__ only; harmless where absent
    # GCC 12's AVX-512 headers trip -Wmaybe-uninitialized on their own _mm512_undefined_*
    # placeholders (GCC bug 105593); the pragma must precede the header to silence them.
    source = source.replace('#include "opgen_kernel.hpp"\n', '#include "opgen_kernel.hpp"\n\n'
                            + '#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"\n'
                            + "".join(f"#include {h}\n" for h in includes), 1)
    closing = source.rstrip().rfind("}  // namespace opgen::kernels")
    if closing < 0:
        raise SystemExit(f"{f32_stem}.cpp: no closing '}}  // namespace opgen::kernels' line")
    half_name = f"{op.replace('.', '_')}__{overload}"
    wrapper = WIDENING.format(ctype=ctype, dtype=dtype, entry=_entry(f32_name, params, half_name))
    header = (f"// {op}, overload {overload}: {dtype} storage, float32 arithmetic. Written by "
              f"scripts/half_kernels.py from\n// answers/cpp/{f32_stem}.cpp (its algorithm, unchanged and "
              "private) and a widening wrapper.\n")
    return header + source[:closing] + wrapper + "\n" + source[closing:]


def main() -> int:
    for op, f32_overload in HALF_OPS.items():
        for half in HALVES:
            path = ANSWERS / f"{op}__{f32_overload.replace('f32', half, 1)}.cpp"
            path.write_text(half_answer(op, f32_overload, half))
            print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
