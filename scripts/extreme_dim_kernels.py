"""Write the answers of torch.max and torch.min along a dim (their f32_dim, f64_dim and int64_dim
overloads): one C++ and one Rust template, instantiated per op and dtype.

torch.max(x, dim) and torch.min(x, dim) differ only in the comparison, and the dtypes only in the
element type and whether nan exists; each answer is still its own file, admitted on its own through
the gate (``scripts/record_answers.py --target cpp torch.max__f32_dim``).

    python scripts/extreme_dim_kernels.py            # (re)write every answer
    python scripts/extreme_dim_kernels.py --check    # exit 1 if a written answer differs
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

OPS = {"torch.max": ("largest", ">"), "torch.min": ("smallest", "<")}
# overload -> (C++ type, Rust type, whether the dtype has nan)
DTYPES = {"f32_dim": ("float", "f32", True), "f64_dim": ("double", "f64", True), "int64_dim": ("int64_t", "i64", False)}

CPP = r'''// {op}, overload {ov}: (values, indices) = {op}(input, dim, keepdim), the {word} element along
// dim and its index.
//
// One pass per lane: the first {word} element wins (a later equal one, 0.0 against -0.0 included,
// does not replace it), and {nan_rule}. Results are contiguous and their elements are the lanes in
// row-major order of the other dims, with or without the kept dim, so lane L writes element L.
// The shim has checked dim; an empty lane raises IndexError in torch's words.
// Written by scripts/extreme_dim_kernels.py.
#include "opgen_kernel.hpp"

#include <cstdint>
#include <string>

namespace opgen::kernels {{

void {fn}(const opgen::Tensor& input, int64_t dim, bool keepdim, opgen::Tensor& values,
          opgen::Tensor& indices) {{
  (void)keepdim;  // the results' shapes carry it; their element order is the same
  using T = {ctype};
  const T* x = input.data<T>();
  T* vo = values.data<T>();
  int64_t* io = indices.data<int64_t>();
  const int nd = input.ndim();
  if (nd == 0) {{
    vo[0] = x[0];
    io[0] = 0;
    return;
  }}
  const int ax = static_cast<int>(dim < 0 ? dim + nd : dim);
  const int64_t n = input.size(ax);
  if (n == 0)
    throw opgen::Error(opgen::ErrorKind::Index, "{short}(): Expected reduction dim " + std::to_string(ax) +
                                                    " to have non-zero size.");
  int64_t lanes = 1;
  for (int d = 0; d < nd; ++d)
    if (d != ax) lanes *= input.size(d);
  const int64_t sx = input.stride(ax);
  for (int64_t lane = 0; lane < lanes; ++lane) {{
    int64_t rem = lane, off = 0;  // the lane's first element: decode L over the other dims
    for (int d = nd - 1; d >= 0; --d) {{
      if (d == ax) continue;
      const int64_t size = input.size(d);
      off += (rem % size) * input.stride(d);
      rem /= size;
    }}
    const T* row = x + off;
    T best = row[0];
    int64_t at = 0;
{loop}
    vo[lane] = best;
    io[lane] = at;
  }}
}}

}}  // namespace opgen::kernels
'''

CPP_LOOP_NAN = '''    if (best == best) {{  // a row starting with nan is decided
      for (int64_t j = 1; j < n; ++j) {{
        const T v = row[j * sx];
        if (v != v) {{  // the first nan is the result
          best = v;
          at = j;
          break;
        }}
        if (v {cmp} best) {{
          best = v;
          at = j;
        }}
      }}
    }}'''
CPP_LOOP_INT = '''    for (int64_t j = 1; j < n; ++j) {{
      const T v = row[j * sx];
      if (v {cmp} best) {{
        best = v;
        at = j;
      }}
    }}'''

RUST = r'''// {op}, overload {ov}: (values, indices) = {op}(input, dim, keepdim), the {word} element along
// dim and its index.
//
// One pass per lane: the first {word} element wins (a later equal one, 0.0 against -0.0 included,
// does not replace it), and {nan_rule}. The lanes come in row-major order of the other dims, which is
// the results' element order with or without the kept dim. The shim has checked dim; an empty lane
// raises IndexError in torch's words. Written by scripts/extreme_dim_kernels.py.
use opgen::{{Error, Result, TensorMut, TensorRef}};

type T = {rtype};

pub fn {fn}(input: &TensorRef<T>, dim: i64, keepdim: bool, values: &mut TensorMut<T>,
            indices: &mut TensorMut<i64>) -> Result<()> {{
    let _ = keepdim; // the results' shapes carry it; their element order is the same
    let nd = input.ndim();
    if nd == 0 {{
        values.set(&[], input.get(&[]));
        indices.set(&[], 0);
        return Ok(());
    }}
    let ax = (if dim < 0 {{ dim + nd as i64 }} else {{ dim }}) as usize;
    if input.size(ax) == 0 {{
        return Err(Error::index(format!("{short}(): Expected reduction dim {{}} to have non-zero size.", ax)));
    }}
    if values.numel() == 0 {{
        return Ok(());
    }}
    let vo = values.as_mut_slice();
    let mut io_all = Vec::with_capacity(vo.len());
    for (lane, v_out) in input.lanes(ax).zip(vo.iter_mut()) {{
        let mut best = lane.get(0);
        let mut at = 0usize;
{loop}
        *v_out = best;
        io_all.push(at as i64);
    }}
    indices.as_mut_slice().copy_from_slice(&io_all);
    Ok(())
}}
'''

RUST_LOOP_NAN = '''        if !best.is_nan() {{
            // a row starting with nan is decided
            for (j, v) in lane.iter().enumerate().skip(1) {{
                if v.is_nan() {{
                    // the first nan is the result
                    best = v;
                    at = j;
                    break;
                }}
                if v {cmp} best {{
                    best = v;
                    at = j;
                }}
            }}
        }}'''
RUST_LOOP_INT = '''        for (j, v) in lane.iter().enumerate().skip(1) {{
            if v {cmp} best {{
                best = v;
                at = j;
            }}
        }}'''


def files() -> dict[Path, str]:
    out = {}
    for op, (word, cmp) in OPS.items():
        short = op.split(".")[1]
        for ov, (ctype, rtype, has_nan) in DTYPES.items():
            fn = f"{op.replace('.', '_')}__{ov}"
            nan_rule = ("a nan is larger and smaller than everything: the first nan and its index are the result"
                        if has_nan else "integers have no nan")
            loop_c = (CPP_LOOP_NAN if has_nan else CPP_LOOP_INT).format(cmp=cmp)
            loop_r = (RUST_LOOP_NAN if has_nan else RUST_LOOP_INT).format(cmp=cmp)
            out[ROOT / "answers" / "cpp" / f"{op}__{ov}.cpp"] = CPP.format(
                op=op, ov=ov, word=word, nan_rule=nan_rule, fn=fn, ctype=ctype, short=short, loop=loop_c)
            out[ROOT / "answers" / "rust" / f"{op}__{ov}.rs"] = RUST.format(
                op=op, ov=ov, word=word, nan_rule=nan_rule, fn=fn, rtype=rtype, short=short, loop=loop_r)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="report answers that differ instead of writing them")
    args = ap.parse_args()
    stale = [p for p, text in files().items() if not (p.exists() and p.read_text() == text)]
    if args.check:
        for p in stale:
            print(f"{p.relative_to(ROOT)} differs from what scripts/extreme_dim_kernels.py writes", file=sys.stderr)
        return 1 if stale else 0
    for p in stale:
        p.write_text(files()[p])
        print(f"wrote {p.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
