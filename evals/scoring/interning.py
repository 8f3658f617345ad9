"""Id interning: each distinct id once, in first-seen order, and an int32 code per row.

:func:`intern` does it for ids already held as Python strings (the containers of
:mod:`~searchtrace.evals.scoring.rankings` and the TREC line reader). :func:`intern_fields`
does it for a column of ids given as byte ranges of a file, without a Python
string per row (the TREC column reader), and :func:`index_in` looks ids up in a
vocabulary the same way (the metric kernels' join of a run to its qrels).

For the last two, each id is read as zero-padded big-endian 64-bit words
loaded straight from the buffer (ids never hold NUL: the readers refuse control
characters first), so a word's integer order is its bytes' order. An id of up
to 8 bytes is its own integer key; longer ids are hashed a word at a time, and
every row is then checked equal, word for word, to the first row of its key (a
collision returns None, for the exact reader). Only the distinct ids are copied
out whole, a slice at a time, to become Python strings, decoded once.

The cost is linear in the bytes of the ids, not in rows times the longest id: word
``w`` is read only for the ids longer than ``8 * w`` (all rows while most are),
the last few long ids are hashed and compared whole as bytes, and the distinct ids
are copied out end to end rather than padded to the longest when padding would
cost more.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import numpy as np

__all__ = ["decode", "fixed_width", "index_in", "intern", "intern_fields"]

_MAX_KEY_BYTES = 1 << 28
"""Past this many bytes of fixed-width rows (many distinct, very long ids), leave the file to the exact reader."""
_DECODED_ROWS = 1 << 16
"""Distinct ids decoded at a time."""
_TAIL_ROWS = 64
"""Fewer ids than this still longer than the words read so far: the rest of each is hashed and compared as bytes."""
_WORD = (1 << 64) - 1
_MIX = np.uint64(0x9E3779B97F4A7C15)
_MASKS = np.array([0, *(((1 << 8 * k) - 1) << 8 * (8 - k) for k in range(1, 9))], dtype=np.uint64)
"""The high ``k`` bytes of a word, for ``k`` = 0..8."""


def intern(ids: Iterable[str]) -> tuple[np.ndarray, np.ndarray]:
    """Vocabulary (first-seen order, object array) and each id's int32 code."""
    ids = list(ids)
    table: dict[str, int] = {}
    for value in ids:
        if value not in table:
            table[value] = len(table)
    codes = np.fromiter(map(table.__getitem__, ids), dtype=np.int32, count=len(ids))
    vocab = np.empty(len(table), dtype=object)
    vocab[:] = list(table)
    return vocab, codes


def _loads(raw: np.ndarray) -> np.ndarray:
    """Every unaligned 8-byte big-endian word of ``raw``, one per offset (a view)."""
    if len(raw) < 8:
        raw = np.concatenate([raw, np.zeros(8, dtype=np.uint8)])
    return np.ndarray((len(raw) - 7,), dtype=">u8", buffer=raw, strides=(1,))


def _word(loads: np.ndarray, start: np.ndarray, length: np.ndarray, word: int) -> np.ndarray:
    """Word ``word`` of each field: one load at its offset, the bytes past the field masked off.

    A load that would run past the data starts earlier and is shifted back.
    """
    at = start + 8 * word if word else start
    last = len(loads) - 1
    late = at > last
    if late.any():
        value = loads[np.minimum(at, last)]
        value[late] <<= (np.minimum(at[late] - last, 7) * 8).astype(np.uint64)
    else:
        value = loads[at]
    return value & _MASKS[np.clip(length - 8 * word, 0, 8) if word else np.minimum(length, 8)]


def fixed_width(raw: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray | None:
    """(n, words) big-endian uint64: each field's bytes, zero-padded; None past ``_MAX_KEY_BYTES``."""
    length = end - start
    words = -(-int(length.max()) // 8)
    if len(start) * words * 8 > _MAX_KEY_BYTES:
        return None
    loads = _loads(raw)
    out = np.empty((len(start), words), dtype=">u8")
    for word in range(words):
        out[:, word] = _word(loads, start, length, word)
    return out


def _longer(length: np.ndarray, rows: np.ndarray | None, word: int) -> np.ndarray | None:
    """The rows (of ``rows``, None for all) with a word ``word``; None (all rows) while that is most of them."""
    if rows is None:
        longer = length > 8 * word
        return None if 2 * np.count_nonzero(longer) >= len(length) else np.flatnonzero(longer)
    return rows[length[rows] > 8 * word]


def _words_read(length: np.ndarray, words: int) -> Iterator[tuple[int, np.ndarray | None]]:
    """``(word, rows)`` for each word ``1 .. words - 1`` read by numpy: the rows holding it (None: all rows).

    Stops early while fewer than ``_TAIL_ROWS`` rows are left: what follows of those is
    the caller's, from the word after the last one yielded. Each step costs the rows it reads, so the whole is linear in the ids' bytes.
    """
    rows: np.ndarray | None = None
    for word in range(1, words):
        rows = _longer(length, rows, word)
        if rows is not None and len(rows) < _TAIL_ROWS:
            return
        yield word, rows


def _keys(raw: np.ndarray, loads: np.ndarray, start: np.ndarray, length: np.ndarray, words: int) -> np.ndarray:
    """One uint64 per field: its one word, or a hash of its words (read one word at a time, then the tail whole)."""
    key = _word(loads, start, length, 0).astype(np.uint64)
    word = 0
    for word, rows in _words_read(length, words):
        part = key if rows is None else key[rows]
        part ^= _word(loads, start, length, word) if rows is None else _word(loads, start[rows], length[rows], word)
        part *= _MIX
        part ^= part >> np.uint64(29)
        if rows is not None:
            key[rows] = part
    word += 1
    for row in np.flatnonzero(length > 8 * word).tolist():  # a few long ids: the rest of each hashed whole
        rest = raw[start[row] + 8 * word : start[row] + length[row]].tobytes()
        key[row] = ((int(key[row]) ^ (hash(rest) & _WORD)) * int(_MIX)) & _WORD
    return key


def _same(raw: np.ndarray, loads: np.ndarray, start: np.ndarray, length: np.ndarray, words: int,
          other: np.ndarray) -> bool:
    """Whether each field equals field ``other[i]`` (ids hold no NUL: equal lengths and words, equal bytes)."""
    if (length != length[other]).any():
        return False
    if (_word(loads, start, length, 0) != _word(loads, start[other], length, 0)).any():
        return False
    word = 0
    for word, rows in _words_read(length, words):
        at = slice(None) if rows is None else rows
        if (_word(loads, start[at], length[at], word) != _word(loads, start[other[at]], length[at], word)).any():
            return False
    word += 1
    return all(raw[start[row] + 8 * word : start[row] + length[row]].tobytes()
               == raw[start[other[row]] + 8 * word : start[other[row]] + length[row]].tobytes()
               for row in np.flatnonzero(length > 8 * word).tolist())


def _compact(keys: np.ndarray, spare: int) -> np.ndarray | None:
    """``keys`` less their minimum, shifted past the zero bits they all end with: the same order and
    equalities in as few bits as they span; None when that leaves fewer than ``spare`` bits free."""
    spread = keys - keys.min()
    ones = int(np.bitwise_or.reduce(spread))
    shift = (ones & -ones).bit_length() - 1 if ones else 0
    if (ones >> shift).bit_length() + spare > 64:
        return None
    spread >>= np.uint64(shift)
    return spread


def _sorted(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A permutation putting equal keys together, each group in row order, and where each group starts.

    One sort of plain integers instead of an argsort: each key with its position in the
    low bits. Keys that span too many bits for that (long ids' hashes) go in as the high
    bits of a multiplicative hash; two keys sharing those (unlikely; detected) take a
    stable argsort instead.
    """
    bits = max(len(keys).bit_length(), 1)
    low = np.uint64((1 << bits) - 1)
    compact = _compact(keys, bits)
    packed = keys * _MIX if compact is None else compact << np.uint64(bits)
    packed &= ~low
    packed |= np.arange(len(keys), dtype=np.uint64)
    packed.sort()
    order = (packed & low).astype(np.int64)
    new = np.empty(len(keys), dtype=bool)
    new[0] = True
    np.not_equal(packed[1:] >> np.uint64(bits), packed[:-1] >> np.uint64(bits), out=new[1:])
    if compact is not None:
        return order, new
    ordered = keys[order]
    if (ordered[1:] != ordered[:-1])[~new[1:]].any():
        order = np.argsort(keys, kind="stable")
        ordered = keys[order]
        np.not_equal(ordered[1:], ordered[:-1], out=new[1:])
    return order, new


def _dense(key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows of each distinct key's first occurrence (first-seen order) and each row's int32 code.

    Runs of equal keys (a run's query ids) are collapsed first, so a grouped
    column sorts one key per group.
    """
    n = len(key)
    change = np.empty(n, dtype=bool)
    change[0] = True
    np.not_equal(key[1:], key[:-1], out=change[1:])
    heads = np.flatnonzero(change)
    order, new = _sorted(key[heads])
    first_head = order[new]  # each key's earliest head (groups are in row order), keys in sorted order
    is_first = np.zeros(len(heads), dtype=bool)
    is_first[first_head] = True
    rank = (np.cumsum(is_first, dtype=np.int32) - 1)[first_head]  # each key's place in first-seen order
    head_code = np.empty(len(heads), dtype=np.int32)
    head_code[order] = rank[np.cumsum(new) - 1]
    codes = head_code if len(heads) == n else np.repeat(head_code, np.diff(np.append(heads, n)))
    return heads[is_first], codes


def decode(words: np.ndarray) -> list[str] | None:
    """The fields held by rows of ``fixed_width`` words as ``str``; None when one is not UTF-8."""
    lines = np.zeros((len(words), 8 * words.shape[1] + 1), dtype=np.uint8)  # each field, its zero padding, a newline
    lines[:, :-1] = words.view(np.uint8).reshape(len(words), -1)
    lines[:, -1] = ord("\n")
    try:
        return lines[lines != 0].tobytes().decode("utf-8").split("\n")[:-1]
    except UnicodeDecodeError:
        return None


def _strings(raw: np.ndarray, start: np.ndarray, end: np.ndarray) -> list[str] | None:
    """The fields ``raw[start:end]`` as ``str``, copied end to end (each once, none padded); None when one is not UTF-8."""
    step = end - start + 1  # each field and a newline
    placed = np.cumsum(step) - step
    index = np.arange(int(step.sum())) + np.repeat(start - placed, step)
    np.minimum(index, len(raw) - 1, out=index)  # a field's newline slot may point past the data
    lines = raw[index]
    lines[placed + step - 1] = ord("\n")
    try:
        return lines.tobytes().decode("utf-8").split("\n")[:-1]
    except UnicodeDecodeError:
        return None


def _interned(raw: np.ndarray, start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """First rows (first-seen order) and codes of the fields; None on a hash collision."""
    length = end - start
    words = -(-int(length.max()) // 8)
    loads = _loads(raw)
    first, codes = _dense(_keys(raw, loads, start, length, words))
    if words > 1 and not _same(raw, loads, start, length, words, first[codes]):
        return None
    return first, codes


def intern_fields(raw: np.ndarray, start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Vocabulary (object array of ``str``, first-seen order) and int32 codes of the ids ``raw[start:end]``.

    Fields must be non-empty and free of NUL. Returns None when an id is not
    UTF-8 or two ids share a hash.
    """
    interned = _interned(raw, start, end)
    if interned is None:
        return None
    first, codes = interned
    names: list[str] = []
    for rows in range(0, len(first), _DECODED_ROWS):  # in slices: a few long ids widen only their slice
        at = first[rows:rows + _DECODED_ROWS]
        length = end[at] - start[at]
        if len(at) * -(-int(length.max()) // 8) * 8 <= 2 * int(length.sum()) + len(at):  # padding is cheap
            words = fixed_width(raw, start[at], end[at])
            part = None if words is None else decode(words)
        else:  # a few long ids: copied end to end
            part = _strings(raw, start[at], end[at])
        if part is None:
            return None
        names += part
    vocab = np.empty(len(names), dtype=object)
    vocab[:] = names
    return vocab, codes


def index_in(values: np.ndarray, vocab: np.ndarray) -> np.ndarray | None:
    """Index of each of ``values`` in ``vocab`` (both object arrays of distinct non-empty ``str``), -1 where absent.

    Both are interned together, ``vocab`` first, from one UTF-8 buffer; None when
    ``vocab`` is empty, an id holds a control character, or on a hash collision.
    """
    try:
        blob = ("\n".join(vocab.tolist()) + "\n" + "\n".join(values.tolist()) + "\n").encode()
    except (TypeError, UnicodeEncodeError):  # not strings, or a lone surrogate
        return None
    raw = np.frombuffer(blob, dtype=np.uint8)
    ends = np.flatnonzero(raw <= 0x1F)
    if not len(vocab) or len(ends) != len(vocab) + len(values) or (raw == 0x7F).any():
        return None
    starts = np.empty_like(ends)
    starts[0] = 0
    starts[1:] = ends[:-1] + 1
    if (ends == starts).any():
        return None
    interned = _interned(raw, starts, ends)
    if interned is None:
        return None
    codes = interned[1]
    if not (codes[: len(vocab)] == np.arange(len(vocab))).all():  # a repeated vocabulary entry
        return None
    found = codes[len(vocab) :].astype(np.int64)
    found[found >= len(vocab)] = -1
    return found
