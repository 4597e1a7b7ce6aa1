"""Functions for tests/test_python_entry.py: every parameter and result kind the native CPython entry
converts (opgen/compiler/types.py), keywords and defaults, and kernels that raise."""

from typing import Annotated

import numpy as np
import numpy.typing as npt
import torch


def kinds(n: int, x: float, flag: bool, s: str, ints: list[int], floats: list[float], flags: list[bool],
          words: list[str], counts: dict[str, int], a: npt.NDArray[np.float32]
          ) -> tuple[int, float, bool, str, list[int], list[float], list[bool], list[str], dict[str, int],
                     npt.NDArray[np.float32]]:
    return n + 1, x * 2.0, not flag, s + "!", ints, floats, flags, words + [s], counts, a + 1.0


def tables(scores: dict[str, float], labels: dict[str, str], seen: dict[str, bool]) -> dict[str, str]:
    out = dict(labels)
    for k in scores:
        out[k] = f"{scores[k]:.2f} {seen.get(k, False)}"
    return out


def scaled(x: Annotated[torch.Tensor, torch.float32], k: float = 2.0) -> Annotated[torch.Tensor, torch.float32]:
    return x * k


def counts_of(a: npt.NDArray[np.int64], shift: int = 0) -> npt.NDArray[np.int64]:
    return a + shift


def lookup(d: dict[str, int], key: str, scale: int = 1) -> int:
    return d[key] * scale


def divide(a: int, b: int) -> int:
    return a // b


def big(n: int) -> list[str]:
    return ["x" * 1000 for _ in range(n)]


def halves(a: npt.NDArray[np.bfloat16], h: npt.NDArray[np.float16]
           ) -> tuple[npt.NDArray[np.bfloat16], npt.NDArray[np.float16]]:
    return a + a, h + h
