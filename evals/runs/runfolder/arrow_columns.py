"""Arrow columns built from numpy buffers and read back the same way: pyarrow's ``pa.array`` and
``to_numpy`` import pandas (most of a second of CPU, 0.2 s of a new process) even for numpy input, so the
run folder's writers and readers that run without pandas cross between numpy and arrow through buffers."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["dictionary", "falses", "floats", "numbers", "strings"]


def floats(values: np.ndarray) -> Any:
    """A float64 column, null where NaN (as pandas writes it), built from buffers.

    pyarrow's ``pa.array`` and ``to_numpy`` import pandas (most of a second of CPU) even for
    numpy input; arrays cross from numpy to arrow through their buffers instead.
    """
    import pyarrow as pa

    values = np.ascontiguousarray(values, dtype=np.float64)
    valid = np.packbits(~np.isnan(values), bitorder="little")
    return pa.Array.from_buffers(pa.float64(), len(values), [pa.py_buffer(valid), pa.py_buffer(values)])


def strings(values: Sequence[str]) -> Any:
    """An arrow string array of ``values`` (``large_string`` past 2 GiB of text), built from buffers."""
    import pyarrow as pa

    blob = "".join(values).encode()
    lengths = np.fromiter(map(len, values), dtype=np.int64, count=len(values))
    if len(blob) != lengths.sum():  # not all ASCII: characters are not bytes
        lengths = np.fromiter((len(v.encode()) for v in values), dtype=np.int64, count=len(values))
    offsets = np.zeros(len(values) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    small = offsets[-1] < 2**31
    return pa.Array.from_buffers(pa.string() if small else pa.large_string(), len(values),
                                 [None, pa.py_buffer(offsets.astype(np.int32) if small else offsets),
                                  pa.py_buffer(blob)])


def falses(n: int) -> Any:
    import pyarrow as pa

    return pa.Array.from_buffers(pa.bool_(), n, [None, pa.py_buffer(np.zeros((n + 7) // 8, dtype=np.uint8))])


def dictionary(codes: np.ndarray, vocabulary: Sequence[str]) -> Any:
    """A dictionary-encoded string column: int32 ``codes`` into ``vocabulary``, built from buffers."""
    import pyarrow as pa

    indices = pa.Array.from_buffers(pa.int32(), len(codes), [None, pa.py_buffer(np.ascontiguousarray(codes,
                                                                                                  dtype=np.int32))])
    return pa.DictionaryArray.from_arrays(indices, strings(list(vocabulary)))


def numbers(array: Any, arrow_type: Any, dtype: type) -> np.ndarray:
    """A numeric arrow array without nulls as numpy, read from its buffer.

    Raises:
        ValueError: another type, or nulls (the caller names the file).
    """
    if array.type != arrow_type or array.null_count:
        raise ValueError(f"expected {arrow_type} without nulls, got {array.type}")
    width = np.dtype(dtype).itemsize
    return np.frombuffer(array.buffers()[1], dtype=dtype, count=len(array), offset=array.offset * width).copy()
