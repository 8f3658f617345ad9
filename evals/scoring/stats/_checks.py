"""Input checks shared by the statistics functions."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from searchtrace.errors import ValidationError

ArrayLike = Sequence[float] | np.ndarray


def vector(values: ArrayLike, name: str, *, unit: bool = False) -> np.ndarray:
    """``values`` as a finite 1-D float array (within [0, 1] when ``unit``)."""
    array = np.asarray(values, dtype=np.float64)
    if array.ndim != 1:
        raise ValidationError(f"{name} must be one-dimensional, got shape {array.shape}", field=name)
    if not np.all(np.isfinite(array)):
        raise ValidationError(f"{name} must be finite numbers", field=name)
    if unit and np.any((array < 0) | (array > 1)):
        raise ValidationError(f"{name} must lie in [0, 1]", field=name)
    return array


def binary(values: ArrayLike, name: str) -> np.ndarray:
    """``values`` as a 0/1 float array."""
    array = vector(values, name)
    if not np.all((array == 0) | (array == 1)):
        raise ValidationError(f"{name} must be 0 or 1", field=name)
    return array


def paired(a: ArrayLike, b: ArrayLike, names: tuple[str, str] = ("a", "b")) -> tuple[np.ndarray, np.ndarray]:
    """Two equal-length vectors."""
    x, y = vector(a, names[0]), vector(b, names[1])
    if len(x) != len(y):
        raise ValidationError(f"{names[0]} and {names[1]} differ in length: {len(x)} != {len(y)}", field=names[1])
    return x, y


def resamples(n_resamples: int) -> int:
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, int) or n_resamples < 1:
        raise ValidationError(f"n_resamples must be a positive integer, got {n_resamples!r}", field="n_resamples")
    return n_resamples
