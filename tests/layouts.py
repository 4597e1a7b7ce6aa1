"""Helpers the kernel tests share: the strided layouts a kernel must read (contiguous, reversed,
transposed, every other element offset by one), comparison by bit pattern (nan payloads and -0.0
count), and a probe of the compiled runtime's shape functions (opgen_compiled.hpp) built with g++."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from opgen.project import PACKAGE_ROOT


def layouts(x: np.ndarray) -> Iterator[np.ndarray]:
    """x as it is, reversed along its last dim, in Fortran order, and every other element of a
    buffer offset by one: the same values in four layouts."""
    yield x
    if x.ndim and x.size:
        yield np.ascontiguousarray(x[..., ::-1])[..., ::-1]  # reversed
        yield np.asfortranarray(x)  # transposed strides
        buf = np.zeros(2 * x.size + 1, x.dtype)
        strided = buf[1::2].reshape(x.shape)  # every other element, offset by one
        strided[...] = x
        yield strided


def bits(a: np.ndarray) -> np.ndarray:
    """a's elements as unsigned integers of their width: equal arrays of these are bit-for-bit equal."""
    a = np.ascontiguousarray(a)
    return a.view({8: np.uint64, 4: np.uint32, 2: np.uint16, 1: np.uint8}[a.dtype.itemsize])


PROBE_PRELUDE = r"""#include "opgen_compiled.hpp"
#include <cstdio>
#include <iostream>
using opgen::compiled::Array;
static std::vector<int64_t> read_list() {
  int n; std::cin >> n; std::vector<int64_t> s(static_cast<size_t>(n));
  for (auto& d : s) std::cin >> d;
  return s;
}
static void print_shape(const std::vector<int64_t>& s) {
  std::printf("(");
  for (auto d : s) std::printf("%lld,", static_cast<long long>(d));
  std::printf(")\n");
}
"""


def shape_probe(tmp_path: Path, main: str, stdin: str) -> list[tuple[int, ...]]:
    """Build ``main`` (a C++ main() that reads cases from stdin with read_list and prints each
    result with print_shape) against the compiled runtime, run it on ``stdin`` and return the
    shapes it printed; skips the test where there is no C++ compiler."""
    cxx = shutil.which("g++") or shutil.which("c++")
    if cxx is None:
        pytest.skip("no C++ compiler")
    src, exe = tmp_path / "probe.cpp", tmp_path / "probe"
    src.write_text(PROBE_PRELUDE + main)
    subprocess.run([cxx, "-std=c++17", "-Wall", "-Werror", "-I", str(PACKAGE_ROOT / "opgen/compiler/runtime"), "-I",
                    str(PACKAGE_ROOT / "opgen/runtime"), str(src), "-o", str(exe), "-ldl"], check=True)
    out = subprocess.run([str(exe)], input=stdin, check=True, capture_output=True, text=True).stdout.splitlines()
    return [tuple(int(d) for d in line.strip("()").split(",") if d) for line in out]
