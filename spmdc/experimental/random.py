"""``spmdc.experimental.random`` (JAX's ``jax.experimental.random``): ``stateful_rng``, a
generator in the manner of ``numpy.random.default_rng`` whose state updates itself.

A ``StatefulPRNG`` is a typed threefry key and a counter held in a mutable array
reference (``spmdc.ref``; Note [refs as threaded state] in core/refs.py): every draw folds
the counter into the key and increments it, so repeated draws differ, under jit too (the
ref is the program's threaded state). The bits are JAX's: the same seed gives the same
keys and values as JAX 0.10.2's generator. As JAX's, a generator cannot be returned from
a transformed function (a ref cannot), and ``split`` makes a batch of generators for vmap.
"""
from __future__ import annotations

import dataclasses
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import numpy as jnp
from .. import random as _random
from ..core.refs import Ref, addupdate, get, new_ref
from ..core.tracing import Tracer, current_trace
from ..core.tree import register_pytree_node
from ..dtypes import issubdtype, prng_key
from ..errors import where

__all__ = ["StatefulPRNG", "stateful_rng"]


def _canonicalize_size(size: int | Sequence[int] | None, *args: Any) -> tuple[int, ...]:
    if size is None:
        return tuple(np.broadcast_shapes(*(np.shape(a) for a in args)))
    if isinstance(size, (int, np.integer)):
        return (operator.index(size),)
    return tuple(map(operator.index, size))


def _is_key(x: Any) -> bool:
    return isinstance(x, (_random.PRNGKeyArray, Tracer)) and issubdtype(x.dtype, prng_key)


@dataclasses.dataclass(frozen=True, slots=True)
class StatefulPRNG:
    """A stateful random generator: ``_base_key`` a typed PRNG key, ``_counter`` a scalar
    integer ref (one per key when split). Make one with ``stateful_rng``."""
    _base_key: Any
    _counter: Ref

    def __post_init__(self) -> None:
        if not _is_key(self._base_key):
            raise ValueError(f"Expected base_key to be a typed PRNG key; got {self._base_key}")
        if not isinstance(self._counter, Ref):
            raise ValueError(f"Expected counter to be a scalar integer ref; got {self._counter}")

    def key(self, shape: int | Sequence[int] = ()) -> Any:
        """A new key (or ``shape`` of them), independent of every other this generator
        gives; the generator's counter advances by one."""
        if self._base_key.shape:
            raise ValueError("cannot operate on split stateful generator: vmap over it (or "
                             f"use spawn for a list of generators){where()}")
        key = _random.fold_in(self._base_key, get(self._counter))
        addupdate(self._counter, ..., 1)
        shape = _canonicalize_size(shape)
        return _random.split(key, shape) if shape else key

    def random(self, size: int | Sequence[int] | None = None, dtype: Any = float) -> Any:
        """Floats in the half-open interval [0.0, 1.0)."""
        return _random.uniform(self.key(), shape=_canonicalize_size(size), dtype=dtype)

    def uniform(self, low: Any = 0, high: Any = 1, size: int | Sequence[int] | None = None,
                *, dtype: Any = float) -> Any:
        """Values drawn uniformly from [low, high)."""
        return _random.uniform(self.key(), _canonicalize_size(size, low, high),
                               minval=low, maxval=high, dtype=dtype)

    def normal(self, loc: Any = 0, scale: Any = 1, size: int | Sequence[int] | None = None,
               *, dtype: Any = float) -> Any:
        """Normally distributed values of mean ``loc`` and standard deviation ``scale``."""
        norm = _random.normal(self.key(), _canonicalize_size(size, loc, scale), dtype)
        return (jnp.asarray(loc) + jnp.asarray(scale) * norm).astype(dtype)

    def integers(self, low: Any, high: Any = None, size: int | Sequence[int] | None = None,
                 *, dtype: Any = int) -> Any:
        """Integers drawn uniformly from [low, high) ([0, low) without ``high``)."""
        if high is None:
            low, high = 0, low
        return _random.randint(self.key(), _canonicalize_size(size, low, high),
                               minval=low, maxval=high, dtype=dtype)

    def split(self, num: int | Sequence[int]) -> StatefulPRNG:
        """One generator holding ``num`` independent ones, to map over with vmap."""
        return StatefulPRNG(self.key(num), new_ref(jnp.zeros(num, dtype=int)))

    def spawn(self, n_children: int) -> list[StatefulPRNG]:
        """A list of ``n_children`` independent generators."""
        return [type(self)(key, new_ref(0)) for key in self.key(n_children)]


def _unflatten(_: None, children: Any) -> StatefulPRNG:
    # Transformations rebuild generators from their leaves (tracers, placeholders, batch
    # axes): no checks, as JAX's sentinel path.
    rng = object.__new__(StatefulPRNG)
    object.__setattr__(rng, "_base_key", children[0])
    object.__setattr__(rng, "_counter", children[1])
    return rng


register_pytree_node(StatefulPRNG, lambda r: ((r._base_key, r._counter), None), _unflatten)


def stateful_rng(seed: Any = None, *, impl: Any = None) -> StatefulPRNG:
    """A StatefulPRNG seeded with ``seed`` (from NumPy's entropy when None, which is a
    TypeError inside a transformation, as JAX's)."""
    if seed is None:
        if current_trace() is not None:
            raise TypeError("When used within transformed code, jax.experimental.random."
                            f"stateful_rng() requires an explicit seed to be set{where()}")
        entropy = np.random.SeedSequence().entropy
        seed = np.int64(int(entropy) & np.iinfo(np.int64).max)
    return StatefulPRNG(_random.key(seed, impl=impl), new_ref(0))
