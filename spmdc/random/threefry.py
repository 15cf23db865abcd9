"""The threefry2x32 generator on raw key data: the hash, seeding, split, fold_in and bits.

Everything here takes and returns *raw* keys, ``uint32[..., 2]`` arrays, and is built
from ordinary spmdc primitives (uint32 ``add``, ``xor``, ``shift_left``,
``shift_right_logical``, ``or``), so keys and draws trace, batch (vmap over a batch of
keys), differentiate (as constants) and run per device under pmap with no special rules.

Note [threefry bits]
~~~~~~~~~~~~~~~~~~~~
The stream is JAX 0.10.2's default: threefry2x32 (Salmon et al., 20 rounds, key schedule
constant 0x1BD11BDA) with ``jax_threefry_partitionable=True``, the default since JAX 0.5.
In that mode every output element is hashed from its own flat (row-major) index, split
into a 64-bit counter ``(hi, lo)``:

- ``bits(key, shape)``: ``(b1, b2) = threefry(key, hi, lo)``; 32-bit draws are
  ``b1 ^ b2``, 8- and 16-bit draws are its low bits, 64-bit draws are ``b1 << 32 | b2``.
- ``split(key, shape)``: the new key at index ``i`` is ``(b1, b2)`` at that index.
- ``fold_in(key, d)``: ``threefry(key, 0, uint32(d))`` (the same in both modes).
- ``seed(s)``: ``(s >> 32, s & 0xFFFFFFFF)`` of the integer seed.

So a draw does not depend on how the array is laid out or partitioned, and the same key
gives the same values for a given shape whatever the dtype's width (below 64 bits).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import lax
from ..lax.control_flow import fori_loop
from ..runtime import pjrt
from ..transforms.vmap import batching

U32 = np.dtype(np.uint32)
_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_PARITY = np.uint32(0x1BD11BDA)



def _rotate_left(x: Any, d: int) -> Any:
    return lax.bitwise_or(lax.shift_left(x, np.uint32(d)),
                          lax.shift_right_logical(x, np.uint32(32 - d)))


def threefry2x32(k1: Any, k2: Any, x1: Any, x2: Any) -> tuple[Any, Any]:
    """The threefry2x32 hash of the counters ``(x1, x2)`` under the key ``(k1, k2)``:
    uint32 arrays of one shape (rank-0 keys broadcast); returns two such arrays. See
    Note [threefry rolled for small draws]."""
    ks = (k1, k2, lax.bitwise_xor(lax.bitwise_xor(k1, k2), _PARITY))
    x1, x2 = lax.add(x1, ks[0]), lax.add(x2, ks[1])
    if math.prod(np.shape(x1)) <= _ROLLED_UP_TO and pjrt.platform_name() == "cpu" \
            and not batching():
        return _rolled(ks, x1, x2)
    for block in range(5):
        for r in _ROTATIONS[block % 2]:
            x1 = lax.add(x1, x2)
            x2 = lax.bitwise_xor(x1, _rotate_left(x2, r))
        # key injection: the next two schedule words, the second plus the block number
        x1 = lax.add(x1, ks[(block + 1) % 3])
        x2 = lax.add(x2, lax.add(ks[(block + 2) % 3], np.uint32(block + 1)))
    return x1, x2


# Note [threefry rolled for small draws]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# The 20 rounds are unrolled: XLA fuses the whole hash and what consumes the bits into
# one kernel, which for large draws is several times faster than a loop that stores the
# state between blocks. But PJRT's CPU client runs a program on the calling thread only
# when XLA's cost analysis counts fewer than 1000 flops, and otherwise hands it to a worker
# thread (~5 us more per call, ~40 us when the caller then waits for the value on this
# 2-CPU machine); unrolled, the hash counts ~120 flops per element, so even
# ``normal(key, (8,))`` went to the worker. For up to _ROLLED_UP_TO counters the five
# blocks are a loop instead (a scan over the block number, carrying the key schedule and
# the two rotation sets, which alternate), as JAX lowers threefry on the CPU: the cost
# analysis counts a loop's body once, so a small draw, and a jitted step made of small
# draws, stays under the limit. The bits are the same either way (integer arithmetic).
# Not on a GPU, where every loop iteration is a kernel launch, nor in a function vmap is
# batching: the program's arrays are then larger than the traced ones, and the loop,
# which stores the state between blocks, made vmap(split) of 4096 keys 4.5 times slower
# than the unrolled hash.
_ROLLED_UP_TO = 32


def _rolled(ks: tuple[Any, Any, Any], x1: Any, x2: Any) -> tuple[Any, Any]:
    shape = np.shape(x1)

    def word(v: Any, i: int) -> Any:             # v[i] of a uint32[4], broadcast to shape
        w = lax.reshape(lax.slice(v, (i,), (i + 1,)), ())
        return lax.broadcast_in_dim(w, shape, ())

    def block(i: Any, state: Any) -> Any:
        x1, x2, k0, k1, k2, now, then = state
        for j in range(4):
            r = word(now, j)
            x1 = lax.add(x1, x2)
            x2 = lax.bitwise_xor(x1, lax.bitwise_or(
                lax.shift_left(x2, r), lax.shift_right_logical(x2, lax.sub(np.uint32(32), r))))
        x1 = lax.add(x1, k0)
        x2 = lax.add(x2, lax.add(k1, lax.add(lax.convert_element_type(i, U32), np.uint32(1))))
        return x1, x2, k1, k2, k0, then, now

    rotations = tuple(np.array(r, U32) for r in _ROTATIONS)
    x1, x2, *_ = fori_loop(0, 5, block, (x1, x2, ks[1], ks[2], ks[0], *rotations))
    return x1, x2


def _key_words(key: Any) -> tuple[Any, Any]:
    first, second = lax.slice(key, (0,), (1,)), lax.slice(key, (1,), (2,))
    return lax.reshape(first, ()), lax.reshape(second, ())


def _counters(shape: tuple[int, ...]) -> tuple[Any, Any]:
    """The high and low words of each element's 64-bit flat index, shaped ``shape``."""
    size = math.prod(shape)
    if size >= 2**32:
        raise ValueError(f"random arrays of 2**32 or more elements are not supported "
                         f"(shape {shape} has {size}); draw them in smaller pieces")
    if not shape:
        return np.uint32(0), np.uint32(0)
    high = lax.broadcast_in_dim(np.uint32(0), shape, ())
    low = lax.iota(U32, size)
    if len(shape) != 1:
        low = lax.reshape(low, shape)
    return high, low


def _hash_shape(key: Any, shape: tuple[int, ...]) -> tuple[Any, Any]:
    k1, k2 = _key_words(key)
    high, low = _counters(shape)
    if not shape:
        # rank-0 counters are literals; broadcast them like the keys so the hash is rank 0
        return threefry2x32(k1, k2, *(lax.broadcast_in_dim(c, (), ()) for c in (high, low)))
    return threefry2x32(k1, k2, high, low)


def seed(s: Any) -> Any:
    """A raw key ``uint32[2]`` from a rank-0 integer seed (traced or not)."""
    dtype = s.dtype if hasattr(s, "dtype") else np.asarray(s).dtype
    if dtype.itemsize == 8:
        high = lax.convert_element_type(lax.shift_right_logical(s, dtype.type(32)), U32)
    else:
        # a 32-bit (or narrower) seed: the shift by 32 shifts everything out
        high = np.uint32(0)
    low = lax.convert_element_type(s, U32)
    return lax.concatenate([lax.broadcast_in_dim(w, (1,), ()) for w in (high, low)], 0)


def _stack_last(a: Any, b: Any, shape: tuple[int, ...]) -> Any:
    n = len(shape)
    parts = [lax.broadcast_in_dim(w, (*shape, 1), tuple(range(n))) for w in (a, b)]
    return lax.concatenate(parts, n)


def split(key: Any, shape: tuple[int, ...]) -> Any:
    """``uint32[*shape, 2]``: new keys, one per index of ``shape``."""
    b1, b2 = _hash_shape(key, shape)
    return _stack_last(b1, b2, shape)


def fold_in(key: Any, data: Any) -> Any:
    """A new raw key from ``key`` and a rank-0 uint32 ``data``."""
    k1, k2 = _key_words(key)
    zero = lax.broadcast_in_dim(np.uint32(0), (), ())
    b1, b2 = threefry2x32(k1, k2, zero, data)
    return _stack_last(b1, b2, ())


def random_bits(key: Any, bit_width: int, shape: tuple[int, ...]) -> Any:
    """Unsigned integers of ``bit_width`` bits, shaped ``shape``. See Note [threefry bits]."""
    b1, b2 = _hash_shape(key, shape)
    if bit_width == 64:
        u64 = np.dtype(np.uint64)
        high = lax.convert_element_type(b1, u64)
        return lax.bitwise_or(lax.shift_left(high, np.uint64(32)),
                              lax.convert_element_type(b2, u64))
    bits = lax.bitwise_xor(b1, b2)
    if bit_width == 32:
        return bits
    return lax.convert_element_type(bits, np.dtype(f"uint{bit_width}"))
