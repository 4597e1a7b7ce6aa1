"""NumPy linear algebra as retrieval and scoring code writes it: np.dot, np.linalg.norm, math.sqrt."""

import math

import numpy as np


def cosine_similarity(a: np.ndarray, b: np.ndarray) -> float:
    """Cosine of two vectors with an epsilon against a zero norm: np.dot and np.linalg.norm."""
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b) + 1e-8))


def project(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """np.dot of a batch of rows and a weight matrix (or vector), NumPy's shape errors included."""
    return np.dot(x, w)


def unit_rows(x: np.ndarray) -> np.ndarray:
    """Rows scaled to unit L2 norm: np.linalg.norm(x, axis=1, keepdims=True)."""
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def rms_distance(a: np.ndarray, b: np.ndarray) -> float:
    """Root-mean-square distance: math.sqrt of a mean of squares, 0.0 for empty vectors."""
    if a.size == 0:
        return 0.0
    d = a - b
    return math.sqrt(float(np.dot(d, d)) / a.size)


def stable_normalize(v: np.ndarray) -> np.ndarray:
    """An array over its norm plus machine epsilon (np.finfo(v.dtype).eps): a zero array stays zero."""
    return v / (np.linalg.norm(v) + np.finfo(v.dtype).eps)
