"""References of the int8 quantized ops (``opgen.nn.int8_row_scale``, ``quantize_int8``,
``int8_matmul``, ``int8_dequantize``): dynamic per-token (per-row) symmetric int8 activations
times per-channel symmetric int8 weights, accumulated in int32, as ONNX's DynamicQuantizeLinear /
QuantizeLinear (zero point 0, saturating, ties to even) and MatMulInteger define the pieces.

Every step is exactly determined, so each reference computes its result exactly (NumPy float32
arithmetic is IEEE's correctly rounded float32 arithmetic; the integer product is formed in int64,
which cannot overflow) and the specs compare exactly, except ``int8_dequantize``, whose last two
steps a kernel may fuse (an FMA), within a float32 tolerance scaled by ``error_scale``.

``int8_matmul_float_blas`` is what a float pipeline runs instead (the int8 operands converted to
float32 and multiplied by NumPy's BLAS sgemm), for ``opgen bench`` to time the kernels against.
"""

from __future__ import annotations

import numpy as np

INT8_MAX = np.float32(127.0)


def int8_row_scale(input: np.ndarray) -> np.ndarray:
    """max_p |input[..., p]| / 127 in float32 (one correctly rounded division), 1.0 where that is
    0 (an all-zero row, an empty row, or a row whose largest magnitude is so small a subnormal
    that the quotient rounds to 0), so that quantizing with the scale never divides by zero."""
    x = np.asarray(input, dtype=np.float32)
    if x.shape[-1] == 0:
        return np.ones(x.shape[:-1], dtype=np.float32)
    with np.errstate(under="ignore"):
        scale = np.abs(x).max(axis=-1) / INT8_MAX  # float32 / float32: float32, correctly rounded
    return np.where(scale == 0, np.float32(1.0), scale).astype(np.float32)


def quantize_int8(input: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """clamp(round_half_to_even(input / scale), -128, 127) as int8, input / scale one float32
    division (ONNX QuantizeLinear, zero point 0, saturating); scale is one value per row."""
    x = np.asarray(input, dtype=np.float32)
    s = np.asarray(scale, dtype=np.float32)[..., None]
    with np.errstate(over="ignore", under="ignore"):
        q = np.rint(x / s)  # an overflow to +-inf saturates below like any other large quotient
    return np.clip(q, -128.0, 127.0).astype(np.int8)


def int8_matmul(input: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """out[..., j] = sum_p input[..., p] * weight[j, p], products and sum exact (int64), as int32
    (exact: the spec's domain keeps |sum| below 2**31)."""
    acc = np.matmul(np.asarray(input, dtype=np.int64), np.asarray(weight, dtype=np.int64).T)
    if acc.size and (acc.max() > np.iinfo(np.int32).max or acc.min() < np.iinfo(np.int32).min):
        raise OverflowError("int8_matmul: a sum is outside int32 (k is too large for the contract)")
    return acc.astype(np.int32)


def int8_matmul_float_blas(input: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """The float32 product a non-quantized pipeline computes instead: the operands as float32,
    multiplied by NumPy's BLAS sgemm (exact here too while every partial sum stays below 2**24;
    for timing only)."""
    return np.matmul(np.asarray(input, dtype=np.float32), np.asarray(weight, dtype=np.float32).T)


def int8_dequantize(acc: np.ndarray, input_scale: np.ndarray, weight_scale: np.ndarray,
                    bias: np.ndarray) -> np.ndarray:
    """out[..., j] = float32(acc[..., j]) * (input_scale * weight_scale[j]) + bias[j], each step a
    correctly rounded float32 operation in that order: s = fl(input_scale * weight_scale[j]),
    p = fl(fl(acc) * s), out = fl(p + bias[j]); input_scale is one value per row."""
    a = np.asarray(acc).astype(np.float32)  # int32 -> float32, round to nearest even
    s = np.asarray(input_scale, dtype=np.float32)[..., None] * np.asarray(weight_scale, dtype=np.float32)
    with np.errstate(over="ignore", under="ignore"):
        return (a * s + np.asarray(bias, dtype=np.float32)).astype(np.float32)


def _dequantize_error_scale(acc: np.ndarray, input_scale: np.ndarray, weight_scale: np.ndarray,
                            bias: np.ndarray) -> np.ndarray:
    """|acc| * |input_scale * weight_scale[j]| + |bias[j]| in float64: the magnitude a kernel's
    rounding differences (an FMA for the last two steps, the scales multiplied in another order)
    are proportional to; |ref| is not one, since p + bias can cancel."""
    a = np.abs(np.asarray(acc, dtype=np.float64))
    s = np.abs(np.asarray(input_scale, dtype=np.float64)[..., None] * np.asarray(weight_scale, dtype=np.float64))
    return a * s + np.abs(np.asarray(bias, dtype=np.float64))


int8_dequantize.error_scale = _dequantize_error_scale  # type: ignore[attr-defined]
