"""Write opgen.cast: its spec (specs/opgen/cast.yaml, one overload per ordered pair of dtypes) and the
answers of every overload (C++ for all 47, Rust for the 25 without a half dtype): every ordered pair
of seven dtypes, and int8, int16, uint8, uint16 and uint32 to int64 (index arrays opgen compile widens).

A cast moves each element through one conversion; the walk over a strided input is the same for every
pair, only the conversion differs. So one C++ walk and one Rust walk are instantiated per pair with the
pair's conversion, which is where the care is: each conversion rounds once (NumPy's rule, see the
spec's semantics), float -> int truncates toward zero, int -> int wraps, anything -> bool is `!= 0`.
Each overload's answer is still its own file, admitted on its own through the whole gate
(``scripts/record_answers.py --target cpp|rust opgen.cast__f32_to_f64 ...``).

    python scripts/cast_kernels.py            # (re)write the spec and every answer
    python scripts/cast_kernels.py --check    # exit 1 if any written file differs from what it would write
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OP = "opgen.cast"

# token -> (dtype, C++ type, Rust type or None for the half dtypes, which have no stable Rust type)
DTYPES = {
    "f32": ("float32", "float", "f32"),
    "f64": ("float64", "double", "f64"),
    "f16": ("float16", "_Float16", None),
    "bf16": ("bfloat16", "opgen::bfloat16", None),
    "i64": ("int64", "int64_t", "i64"),
    "i32": ("int32", "int32_t", "i32"),
    "bool": ("bool", "bool", "bool"),
}
FLOATS = ("f32", "f64", "f16", "bf16")
INTS = ("i64", "i32")
# The small integer dtypes cast only to int64: what NumPy indexes with besides int64 and int32
# (x[idx] with an int16 or uint8 idx), which opgen compile widens to numpy.take's int64 indices.
INDEX_INTS = {"i16": ("int16", "int16_t", "i16"), "i8": ("int8", "int8_t", "i8"),
              "u8": ("uint8", "uint8_t", "u8"), "u16": ("uint16", "uint16_t", "u16"),
              "u32": ("uint32", "uint32_t", "u32")}
DTYPES.update(INDEX_INTS)


def pairs() -> list[tuple[str, str]]:
    every = [(a, b) for a in DTYPES for b in DTYPES if a != b and a not in INDEX_INTS and b not in INDEX_INTS]
    return every + [(a, "i64") for a in INDEX_INTS]


def overload_name(a: str, b: str) -> str:
    return f"{a}_to_{b}"


# ---------------------------------------------------------------- C++ conversions


def _cpp_as_float(a: str) -> str:
    """A source element `v` as a float (exact: every f16/bf16/f32 value is one)."""
    return {"f32": "v", "f16": "static_cast<float>(v)", "bf16": "opgen::to_float(v)"}[a]


def cpp_convert(a: str, b: str) -> tuple[str, str]:
    """(the body of `To convert(From v)`, a comment saying how it rounds)."""
    if a == "bool":
        # Branch-free: a bool holds exactly 0 or 1, so it converts (or scales 1.0's bits) without a
        # select; `v ? 1 : 0` compiled to a branch per element, mispredicted on mixed data (0.02x NumPy).
        # A bool source is read as its byte (From is uint8_t): GCC vectorizes no load of a C++ bool.
        body = {"f16": "return static_cast<_Float16>(static_cast<float>(v));",
                "bf16": "return opgen::bfloat16{static_cast<uint16_t>(0x3f80u * v)};"}.get(
            b, "return static_cast<To>(v);")
        return body, "false is 0 and true is 1 (a bool is read as its byte, which holds exactly 0 or 1)"
    if b == "bool":
        if a in FLOATS:
            src = "v" if a == "f64" else _cpp_as_float(a)
            return f"return {src} != 0;", "nonzero is true: nan is true, -0.0 is false (nan != 0 holds)"
        return "return v != 0;", "nonzero is true"
    if a in INDEX_INTS:
        return "return static_cast<To>(v);", "widening: exact"
    if a in INTS and b in INTS:
        return ("return static_cast<To>(v);",
                "int64 -> int32 keeps the low 32 bits (two's complement wrap, as NumPy's C cast)"
                if (a, b) == ("i64", "i32") else "widening: exact")
    if a in FLOATS and b in INTS:
        src = "v" if a in ("f32", "f64") else _cpp_as_float(a)
        return (f"return static_cast<To>({src});",
                "truncation toward zero; the spec's domain keeps the value finite and inside To's range "
                "(out of it C++'s conversion is undefined, as NumPy's is)")
    # to a float type
    if b == "f64":
        if a == "f16":
            return "return half_to_double(v);", "exact (the float16's fields moved into a double's)"
        src = "v" if a in ("i64", "i32", "f32") else f"static_cast<double>({_cpp_as_float(a)})"
        how = "exact" if a != "i64" else "one rounding to nearest even (the int64 -> double instruction)"
        return f"return static_cast<double>({src});", how
    if b == "f32":
        if a == "f64":
            return "return static_cast<float>(v);", "one rounding to nearest even"
        if a in INTS:
            return "return static_cast<float>(v);", "one rounding to nearest even (exact for int32 up to 2**24)"
        return f"return {_cpp_as_float(a)};", "exact widening"
    # b is a half type: round exactly once from the source value
    store = "static_cast<_Float16>({})" if b == "f16" else "opgen::to_bfloat16({})"
    if a in ("f32", "f16", "bf16"):
        return f"return {store.format(_cpp_as_float(a))};", \
            "the source is a float exactly; one rounding to nearest even from it"
    if a == "f64":
        return f"return {store.format('narrow_odd(v)')};", \
            ("one rounding: narrowed to float with round-to-odd first, which keeps the sticky information "
             "(float's 24 bits are at least twice the half's plus two), so the final nearest-even rounding "
             "is the one a direct double -> half rounding gives")
    return f"return {store.format('int_to_float_odd(v)')};", \
        ("one rounding: to float with round-to-odd first (a 64-bit int has more bits than a float), then "
         "nearest even to the half type, which equals rounding the int directly")


CPP_HELPERS = r'''
// Round-to-odd narrowing: the float nearest toward zero, with its last bit forced to 1 when the
// conversion was inexact. Rounding that float to a type with at most 11 significant bits (float16,
// bfloat16) gives the correctly rounded result of the original value (round-to-odd needs 2p + 2 bits
// for p-bit targets, and float has 24), where rounding to float to nearest first could round twice.
inline float narrow_odd(double v) {
  float f = static_cast<float>(v);
  if (!(static_cast<double>(f) != v) || std::isnan(v)) return f;  // exact (or nan): nothing lost
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  // f was rounded away from zero: step back to the float below |v| (the bit pattern of a float's
  // magnitude is monotonic, and an infinite f steps back to FLT_MAX).
  if (std::fabs(static_cast<double>(f)) > std::fabs(v)) u -= 1;
  u |= 1u;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

inline float int_to_float_odd(int64_t v) {
  const bool neg = v < 0;
  uint64_t m = neg ? uint64_t(0) - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  int shift = 0;
  if (m >= (uint64_t(1) << 24)) {
    shift = 64 - __builtin_clzll(m) - 24;  // keep the top 24 bits
    const bool sticky = (m & ((uint64_t(1) << shift) - 1)) != 0;
    m = (m >> shift) | (sticky ? 1u : 0u);
  }
  const float f = std::ldexp(static_cast<float>(m), shift);  // exact: m has at most 24 bits
  return neg ? -f : f;
}
'''

# float16 -> double in integer arithmetic: GCC folds the two exact widenings (float16 -> float ->
# double) into a call to libgcc's __extendhfdf2, which the gate's import policy refuses.
CPP_HALF_TO_DOUBLE = r'''
inline double half_to_double(From v) {
  uint16_t h;
  std::memcpy(&h, &v, sizeof h);
  const uint64_t sign = uint64_t(h >> 15) << 63;
  const int exp = (h >> 10) & 0x1f;
  uint64_t man = h & 0x3ff;
  uint64_t bits;
  if (exp == 0x1f) {
    bits = sign | (uint64_t(0x7ff) << 52) | (man << 42);  // inf, or nan with its payload
  } else if (exp != 0) {
    bits = sign | (uint64_t(exp - 15 + 1023) << 52) | (man << 42);
  } else if (man == 0) {
    bits = sign;  // +-0
  } else {  // subnormal: (man / 1024) * 2**-14, normalised to 1.f * 2**e
    int e = -14;
    while (!(man & 0x400)) {
      man <<= 1;
      --e;
    }
    bits = sign | (uint64_t(e + 1023) << 52) | ((man & 0x3ff) << 42);
  }
  double d;
  std::memcpy(&d, &bits, sizeof d);
  return d;
}
'''

# Whole vectors of 16 float16 widened by the F16C/AVX-512 instructions (vcvtph2ps is exact), then
# stored as float, as two halves of doubles (exact), or narrowed to bfloat16 by vcvtneps2bf16 (AVX512_BF16:
# nearest even, a nan quieted as opgen::to_bfloat16 does; it flushes float32 subnormals, which no
# float16 value becomes). GCC converts _Float16 one element at a time, and float16 -> double through
# libgcc, so these are written with intrinsics; the walk converts the tail and strided runs.
CPP_HALF_BLOCK = r'''
// Converts the first multiple of 16 elements of a contiguous run with the vector instructions (GCC
// converts _Float16 one element at a time); returns how many it converted. vcvtph2ps widens exactly;
// vcvtneps2bf16 rounds to nearest even and quiets a nan as opgen::to_bfloat16 does (it flushes
// float32 subnormals, which no float16 value becomes).
inline int64_t convert_block(const From* s, To* o, int64_t n) {{
  int64_t i = 0;
#if {guard}
  for (; i + 16 <= n; i += 16) {{
    const __m512 f = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i)));
    {store}
  }}
#else
  (void)s;
  (void)o;
  (void)n;
#endif
  return i;
}}
'''
HALF_BLOCK_STORES = {
    "f32": ("defined(__AVX512F__)", "_mm512_storeu_ps(o + i, f);"),
    "f64": ("defined(__AVX512F__) && defined(__AVX512DQ__)",
            "_mm512_storeu_pd(o + i, _mm512_cvtps_pd(_mm512_castps512_ps256(f)));\n"
            "    _mm512_storeu_pd(o + i + 8, _mm512_cvtps_pd(_mm512_extractf32x8_ps(f, 1)));"),
    "bf16": ("defined(__AVX512F__) && defined(__AVX512BF16__)",
             "_mm256_storeu_si256(reinterpret_cast<__m256i*>(o + i), reinterpret_cast<__m256i>(_mm512_cvtneps_pbh(f)));"),
}

CPP = r'''// opgen.cast, overload {ov}: out = x.astype({to}) elementwise, {from_} -> {to}.
//
// Conversion: {how}.
// `x` may be strided (any strides, including 0 and negative), 0-d or empty; `out` is contiguous with
// x's shape. Dims of size 1 are dropped and mergeable neighbours merged, so a contiguous input is one
// long loop. Written by scripts/cast_kernels.py (the walk is the same for every pair).
#include "opgen_kernel.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>{includes}

namespace opgen::kernels {{

namespace {{

using From = {cfrom};
using To = {cto};
{helpers}
inline To convert(From v) {{
  {body}
}}

}}  // namespace

void opgen_cast__{ov}(const opgen::Tensor& x, opgen::Tensor& out) {{
  const int64_t total = x.numel();
  if (total == 0) return;
  const From* src = x.data<From>();
  To* dst = out.data<To>();
  int nd = 0;
  int64_t shape[OPGEN_MAX_DIMS], stride[OPGEN_MAX_DIMS];
  for (int d = 0; d < x.ndim(); ++d) {{
    if (x.size(d) == 1) continue;
    if (nd > 0 && stride[nd - 1] == x.stride(d) * x.size(d)) {{
      shape[nd - 1] *= x.size(d);
      stride[nd - 1] = x.stride(d);
    }} else {{
      shape[nd] = x.size(d);
      stride[nd] = x.stride(d);
      ++nd;
    }}
  }}
  if (nd == 0) {{
    dst[0] = convert(src[0]);
    return;
  }}
  const int64_t run = shape[nd - 1], rs = stride[nd - 1];
  int64_t idx[OPGEN_MAX_DIMS] = {{}};
  int64_t off = 0;
  for (int64_t e = 0; e < total; e += run) {{
    const From* s = src + off;
    To* o = dst + e;
    if (rs == 1) {{
      {contiguous}
    }} else {{
      for (int64_t i = 0; i < run; ++i) o[i] = convert(s[i * rs]);
    }}
    for (int d = nd - 2; d >= 0; --d) {{  // next run
      if (++idx[d] < shape[d]) {{
        off += stride[d];
        break;
      }}
      off -= stride[d] * (shape[d] - 1);
      idx[d] = 0;
    }}
  }}
}}

}}  // namespace opgen::kernels
'''


# ---------------------------------------------------------------- Rust conversions


def rust_convert(a: str, b: str) -> tuple[str, str]:
    rb = DTYPES[b][2]
    if a == "bool":
        return ("if v { 1.0 } else { 0.0 }" if b in FLOATS else f"v as {rb}"), "false is 0 and true is 1"
    if b == "bool":
        return ("v != 0.0" if a in FLOATS else "v != 0"), "nonzero is true (nan is true, -0.0 false)"
    if a in FLOATS and b in INTS:
        return f"v as {rb}", ("truncation toward zero; the spec's domain keeps the value finite and inside "
                              "the target's range (out of it Rust saturates and maps nan to 0, where NumPy's "
                              "result is undefined)")
    if a in INDEX_INTS:
        return f"v as {rb}", "widening: exact"
    if (a, b) == ("i64", "i32"):
        return "v as i32", "keeps the low 32 bits (two's complement wrap, as NumPy's C cast)"
    return f"v as {rb}", "one rounding to nearest even where inexact (Rust's `as` between numbers)"


RUST = r'''// opgen.cast, overload {ov}: out = x.astype({to}) elementwise, {from_} -> {to}.
//
// Conversion: {how}.
// A contiguous input is one slice loop; otherwise rows along the last dim, a unit-stride row as a
// slice. `x` may be strided, 0-d or empty; `out` is contiguous. Written by scripts/cast_kernels.py.
use opgen::{{Result, TensorMut, TensorRef}};

#[inline(always)]
fn convert(v: {rfrom}) -> {rto} {{
    {body}
}}

pub fn opgen_cast__{ov}(x: &TensorRef<{rfrom}>, out: &mut TensorMut<{rto}>) -> Result<()> {{
    let n = out.numel();
    if n == 0 {{
        return Ok(());
    }}
    let dst = out.as_mut_slice();
    if let Some(s) = x.as_slice() {{
        for (o, &v) in dst.iter_mut().zip(s) {{
            *o = convert(v);
        }}
        return Ok(());
    }}
    if x.ndim() == 0 {{
        dst[0] = convert(x.item());
        return Ok(());
    }}
    let last = x.ndim() - 1;
    let len = x.size(last);
    for (lane, d) in x.lanes(last).zip(dst.chunks_exact_mut(len)) {{
        match lane.as_slice() {{
            Some(s) => d.iter_mut().zip(s).for_each(|(o, &v)| *o = convert(v)),
            None => d.iter_mut().zip(lane.iter()).for_each(|(o, v)| *o = convert(v)),
        }}
    }}
    Ok(())
}}
'''


# ---------------------------------------------------------------- the spec

SPEC_HEAD = '''# Written by scripts/cast_kernels.py (one overload per ordered pair of dtypes): edit the script, not this file.
op: opgen.cast
summary: "Elementwise dtype conversion (x.astype(np.float32), x.to(torch.float16), x.float(), x.long(), ...)."
semantics: |
  out = x.astype(<to>): every element converted to the overload's result dtype, out contiguous with x's
  shape (x may be strided, 0-d or empty). The target dtype is not a kernel argument: it selects the
  overload (f32_to_f16 takes a float32 tensor and returns a float16 one), as `x.astype(np.float16)`'s
  constant dtype selects it when opgen compile resolves the call (docs/writing-specs.md, "A dtype that
  selects the overload"). NumPy's conversions, exactly:
  - float -> float: rounded once to nearest, ties to even (float64 -> float16 and -> bfloat16 round
    the double once, never through float32); overflow gives inf of the sign; nan stays nan, inf stays
    inf, -0.0 stays -0.0; widening is exact.
  - int -> float: rounded once to nearest, ties to even (an int64 beyond float16's range is inf).
  - float -> int: truncated toward zero (-2.7 -> -2). NumPy leaves nan, inf and values outside the
    int's range undefined (platform-dependent; x86-64 gives the int's minimum): the domain never draws
    them, and a compiled program meeting one gets what the kernel's conversion gives, as NumPy's does.
  - int64 -> int32: the low 32 bits (two's complement wrap), as NumPy's cast; int32 -> int64 exact.
  - -> bool: x != 0 (nan is true, -0.0 false); bool -> number: 1 and 0.
  Bools are one byte holding exactly 0 or 1. No errors are raised. Compared exactly (each zero's sign
  too).
reference: opgen.cast_references.astype
edge_cases:
  - nan, inf, -inf, -0.0 and subnormals where the domain admits them (float -> float and -> bool)
  - values just past the target's largest finite value (overflow to inf), ties of the target's rounding
  - fractional values of both signs (truncation toward zero), int64 values that wrap in int32
  - 0-d and empty tensors, strided, transposed and reversed inputs
overloads:
'''


def _domain(a: str, b: str) -> str:
    if a == "bool":
        return "{max_dims: 4}"
    if a in INTS or a in INDEX_INTS:
        return "{max_dims: 4, edge_runs: true}"
    if b in INTS:
        if a == "f16":
            lo_hi = "6.5e+4"  # every finite float16 fits in int32 and int64
        else:
            lo_hi = "2.1e+9" if b == "i32" else "9.0e+18"  # inside the int's range after rounding to a
        return f'{{min: -{lo_hi}, max: {lo_hi}, special: ["-0", subnormal], max_dims: 4}}'
    specials = '[nan, inf, -inf, "-0", subnormal]'
    bound = {"f16": "1.0e+5", "bf16": "1.0e+39", "f32": "1.0e+39"}.get(b) if a == "f64" else \
        ("1.0e+5" if b == "f16" else None)
    rng = f"min: -{bound}, max: {bound}, " if bound else ""
    return f"{{{rng}special: {specials}, max_dims: 4}}"


def spec_text() -> str:
    out = [SPEC_HEAD]
    for a, b in pairs():
        fa, fb = DTYPES[a][0], DTYPES[b][0]
        out.append(f"  - name: {overload_name(a, b)}\n")
        out.append(f'    signature: "(x: tensor[{fa}]) -> tensor[{fb}]"\n')
        out.append("    shape: {same_as: x}\n")
        out.append(f"    reference: opgen.cast_references.to_{fb}\n")
        out.append(f"    domain:\n      x: {_domain(a, b)}\n")
        if b in FLOATS:
            out.append(f"    tolerance:\n      {fb}: {{rtol: 0.0, atol: 0.0, signed_zeros: true, why: \"a conversion "
                       "rounds once, as NumPy's: exact, zeros with their sign\"}\n")
        # Every pair is timed (bench shapes are outside the overload's hash: adding them stales nothing).
        out.append("    bench:\n      - name: minilm-hidden\n        args: {x: {shape: [8, 128, 384]}}\n"
                   f"        why: converting MiniLM's hidden states (batch 8 x 128 x 384), {fa} to {fb}\n")
    out.append("targets: [cpp, rust]\ntags: [elementwise, cast]\n")
    return "".join(out)


def files() -> dict[Path, str]:
    written: dict[Path, str] = {ROOT / "specs" / "opgen" / "cast.yaml": spec_text()}
    for a, b in pairs():
        ov = overload_name(a, b)
        body, how = cpp_convert(a, b)
        helpers = CPP_HELPERS if ("narrow_odd" in body or "int_to_float_odd" in body) else ""
        if "half_to_double" in body:
            helpers = CPP_HALF_TO_DOUBLE
        includes, contiguous = "", "for (int64_t i = 0; i < run; ++i) o[i] = convert(s[i]);"
        if a == "f16" and b in HALF_BLOCK_STORES:
            guard, store = HALF_BLOCK_STORES[b]
            includes = "\n#include <immintrin.h>"
            helpers += CPP_HALF_BLOCK.format(guard=guard, store=store)
            contiguous = "for (int64_t i = convert_block(s, o, run); i < run; ++i) o[i] = convert(s[i]);"
        cfrom = "uint8_t" if a == "bool" else DTYPES[a][1]  # a bool as its byte, 0 or 1 (see cpp_convert)
        written[ROOT / "answers" / "cpp" / f"{OP}__{ov}.cpp"] = CPP.format(
            ov=ov, to=DTYPES[b][0], from_=DTYPES[a][0], how=how, cfrom=cfrom, cto=DTYPES[b][1],
            helpers=helpers, body=body, includes=includes, contiguous=contiguous)
        if DTYPES[a][2] and DTYPES[b][2]:
            rbody, rhow = rust_convert(a, b)
            written[ROOT / "answers" / "rust" / f"{OP}__{ov}.rs"] = RUST.format(
                ov=ov, to=DTYPES[b][0], from_=DTYPES[a][0], how=rhow, rfrom=DTYPES[a][2], rto=DTYPES[b][2],
                body=rbody)
    return written


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="report files that differ instead of writing them")
    args = ap.parse_args()
    stale = []
    for path, text in files().items():
        if path.exists() and path.read_text() == text:
            continue
        if args.check:
            stale.append(path)
        else:
            path.write_text(text)
            print(f"wrote {path.relative_to(ROOT)}")
    for path in stale:
        print(f"{path.relative_to(ROOT)} differs from what scripts/cast_kernels.py writes", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    raise SystemExit(main())
