"""Element types: one table, read by the spec parser, the ABI, the harness and the prompts.

Keeping every per-dtype fact (NumPy name, C++ and Rust spelling, DLPack code and
bits, default tolerance) in one row is what lets C++, Rust, CUDA and the harness
differ only as data.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

import numpy as np

# DLPack's DLDataTypeCode values (dlpack.h): kDLInt=0, kDLUInt=1, kDLFloat=2, kDLBfloat=4, kDLBool=6.
DL_INT, DL_UINT, DL_FLOAT, DL_BFLOAT, DL_BOOL = 0, 1, 2, 4, 6


def register_bfloat16() -> None:
    """Make NumPy know "bfloat16" (ml_dtypes registers it, and np.finfo for it), on first need.

    Not at import: ml_dtypes 0.7 takes about 0.6 s of CPU to import, and every verification
    runner, gate process and CLI call imports this module, while only half-precision work needs
    the dtype. Everything that turns a dtype *name* into a NumPy dtype goes through
    ``DType.numpy`` or ``numpy_dtype``, which call this first."""
    if "ml_dtypes" not in sys.modules:
        import ml_dtypes  # noqa: F401 - here, not at the top: see above


def numpy_dtype(name: str) -> np.dtype:
    """``np.dtype(name)`` for a dtype name from a spec, a job file or a wire format (bfloat16 too)."""
    if name == "bfloat16":
        register_bfloat16()
    return np.dtype(name)


@dataclass(frozen=True)
class DType:
    name: str
    numpy_name: str  # NumPy's name of the dtype; read it as ``numpy`` (which registers bfloat16)
    cpp: str
    rust: str
    dl_code: int
    bits: int
    # Default closeness |got - ref| <= atol + rtol*|ref|, in the spirit of
    # torch.testing.assert_close's per-dtype defaults. Integers and bools are exact.
    rtol: float
    atol: float

    @property
    def is_float(self) -> bool:
        return self.dl_code in (DL_FLOAT, DL_BFLOAT)

    @property
    def is_half(self) -> bool:
        """A 16-bit storage float (float16, bfloat16): kernels compute in float32."""
        return self.is_float and self.bits == 16

    @property
    def numpy(self) -> str:
        if self.dl_code == DL_BFLOAT:
            register_bfloat16()
        return self.numpy_name

    @property
    def np(self) -> np.dtype:
        return np.dtype(self.numpy)

    @property
    def eps(self) -> float:
        return float(np.finfo(self.numpy).eps) if self.is_float else 0.0


DTYPES: dict[str, DType] = {
    d.name: d
    for d in (
        DType("float16", "float16", "_Float16", "f16", DL_FLOAT, 16, 1e-3, 1e-5),
        # bfloat16 has no C++ type in GCC 12 on x86 (and no stable Rust one): opgen_kernel.hpp's
        # opgen::bfloat16 holds the bits, with conversions to and from float. NumPy's dtype is
        # ml_dtypes' (registered on first use: register_bfloat16).
        DType("bfloat16", "bfloat16", "opgen::bfloat16", "bf16", DL_BFLOAT, 16, 8e-3, 1e-5),
        DType("float32", "float32", "float", "f32", DL_FLOAT, 32, 1.3e-6, 1e-5),
        DType("float64", "float64", "double", "f64", DL_FLOAT, 64, 1e-7, 1e-7),
        DType("int8", "int8", "int8_t", "i8", DL_INT, 8, 0.0, 0.0),
        DType("int16", "int16", "int16_t", "i16", DL_INT, 16, 0.0, 0.0),
        DType("int32", "int32", "int32_t", "i32", DL_INT, 32, 0.0, 0.0),
        DType("int64", "int64", "int64_t", "i64", DL_INT, 64, 0.0, 0.0),
        DType("uint8", "uint8", "uint8_t", "u8", DL_UINT, 8, 0.0, 0.0),
        DType("uint16", "uint16", "uint16_t", "u16", DL_UINT, 16, 0.0, 0.0),
        DType("uint32", "uint32", "uint32_t", "u32", DL_UINT, 32, 0.0, 0.0),
        DType("uint64", "uint64", "uint64_t", "u64", DL_UINT, 64, 0.0, 0.0),
        DType("bool", "bool", "bool", "bool", DL_BOOL, 8, 0.0, 0.0),
    )
}


def dtype(name: str) -> DType:
    """Look a dtype up by name; the error lists the known ones."""
    try:
        return DTYPES[name]
    except KeyError:
        known = ", ".join(DTYPES)
        raise KeyError(f"unknown dtype {name!r}; known dtypes: {known}") from None


def dtype_of_code(code: int, bits: int) -> DType:
    for d in DTYPES.values():
        if d.dl_code == code and d.bits == bits:
            return d
    raise KeyError(f"no dtype with DLPack code {code} and {bits} bits")


def floating(dt: np.dtype) -> bool:
    """Whether a NumPy dtype holds floats: NumPy's own, and ml_dtypes' bfloat16 (whose kind is 'V';
    a dtype that is bfloat16 exists only once ml_dtypes is imported, so its name is enough)."""
    return dt.kind == "f" or (dt.kind == "V" and dt.name == "bfloat16")
