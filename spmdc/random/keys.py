"""PRNG keys: raw ``uint32[..., 2]`` arrays (``PRNGKey``) and typed key arrays (``key``).

Note [typed keys]
~~~~~~~~~~~~~~~~~
JAX gives typed keys an extended dtype (``key<fry>``) whose elements are whole keys.
spmdc has no extended dtypes in its IR, so a typed key array is a thin Python object,
``PRNGKeyArray``, around its raw data ``uint32[*shape, 2]``, registered as an array node
(Note [array nodes] in spmdc/core/tree.py): to users' tree functions it is one leaf, as
in JAX, while everything that moves pytrees (jit, vmap, pmap, grad, lax control flow)
carries keys through as their data and rebuilds the typed key on the other side. The
key data dimension stays last, so mapping over axis ``k >= 0`` of a key array maps over
axis ``k`` of its data. ``shape``/``ndim``/``size`` exclude that dimension, as in JAX;
``dtype`` is ``key<fry>``; it prints as JAX prints it; indexing (``key[...]`` is
``key``), ``reshape``, ``copy``, ``len``, iteration and ``==`` act on keys, and so do
``jnp.broadcast_to``, ``jnp.array_equal``, ``jnp.isclose``, ``jnp.allclose`` and the
shape functions of spmdc/random/key_ops.py (through ``extended_array_rules`` in
spmdc/numpy/core.py). Differences from JAX: a negative ``in_axes`` counts from the
data's last axis (give a non-negative one), ``key.at[...]`` has ``get`` and ``set``
only (of typed keys), and the other ``jnp`` functions do not accept typed keys (use
``key_data``/``wrap_key_data``).
Every function in spmdc.random accepts a typed key or a raw one and returns keys of the
kind it was given; under ``jax.enable_custom_prng`` (``jax_enable_custom_prng``), as in
JAX, ``PRNGKey``, ``split`` and ``fold_in`` return typed keys whatever they were given,
and a raw key given to a random function warns (``FutureWarning``) that it is taken as
threefry2x32 key data.
"""
from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from .. import numpy as jnp
from ..core import tree as _tree
from ..core.abstract import ShapedArray, aval_rules
from ..core.tracer_text import tracer_repr
from ..core.tracing import Tracer
from ..dtypes import ExtendedDType, prng_key
from ..numpy.core import extended_array_rules
from ..runtime.array import register_array_type
from ..runtime.config_states import enable_custom_prng
from . import key_reuse, threefry

IMPL_NAME = "threefry2x32"


class PRNGKeyDType(ExtendedDType):
    """The dtype of typed threefry keys: ``key<fry>``, an extended dtype of type
    ``prng_key`` (Note [extended dtypes] in spmdc/dtypes.py)."""
    type = prng_key
    name = "key<fry>"
    impl = IMPL_NAME
    itemsize = 8        # a key's data: two uint32 words, as JAX's key<fry> says

    def __repr__(self) -> str:
        return self.name

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PRNGKeyDType) or other in (self.name, IMPL_NAME)

    def __hash__(self) -> int:
        return hash(self.name)


KEY_DTYPE = PRNGKeyDType()


class _KeyIndexer:
    """``keys.at``: indexing it names the keys to read or replace."""
    __slots__ = ("_keys",)

    def __init__(self, keys: PRNGKeyArray):
        self._keys = keys

    def __getitem__(self, index: Any) -> _KeyUpdate:
        return _KeyUpdate(self._keys, index)


class _KeyUpdate:
    """``keys.at[index]``: ``get`` and ``set`` on the keys' data, a key's two words whole."""
    __slots__ = ("_keys", "_index")

    def __init__(self, keys: PRNGKeyArray, index: Any):
        self._keys, self._index = keys, index

    def get(self, **kwargs: Any) -> PRNGKeyArray:
        at = self._keys._base.at[self._keys._data_index(self._index)]
        return PRNGKeyArray._wrap(at.get(**kwargs))

    def set(self, values: Any, **kwargs: Any) -> PRNGKeyArray:
        if not isinstance(values, PRNGKeyArray):
            raise TypeError(f"key_array.at[...].set takes typed keys, got "
                            f"{getattr(values, 'dtype', type(values).__name__)}: wrap raw "
                            "key data with random.wrap_key_data")
        at = self._keys._base.at[self._keys._data_index(self._index)]
        return PRNGKeyArray._wrap(at.set(values._base, **kwargs))


class PRNGKeyArray:
    """An array of typed threefry keys. See Note [typed keys]; ``_cell`` records what of
    it has been consumed (None: nothing), See Note [key reuse] in random/key_reuse.py."""
    __slots__ = ("_base", "_cell")

    def __init__(self, data: Any):
        data = jnp.asarray(data)
        _check_data("wrap_key_data", data)
        self._base = data
        self._cell = None

    @classmethod
    def _wrap(cls, data: Any, cell: key_reuse.ConsumptionCell | None = None
              ) -> PRNGKeyArray:
        obj = object.__new__(cls)      # no checks: pytree unflattening passes any leaf
        obj._base = data
        obj._cell = cell
        return obj

    def _forward(self, data: Any) -> PRNGKeyArray:
        """Keys ``data`` made from these by an operation JAX forwards (a reshape, a copy):
        they share the consumption while the key-reuse checker is on."""
        if not key_reuse.checking():
            return PRNGKeyArray._wrap(data)
        self._cell, cell = key_reuse.forward(self._base, self._cell)
        return PRNGKeyArray._wrap(data, cell)

    @property
    def _consumed(self) -> Any:
        """JAX's flag: whether (which of) these keys were consumed by the key-reuse
        checker (``jax.debug_key_reuse``)."""
        return key_reuse.consumed(self._cell)

    shape = property(lambda self: tuple(self._base.shape[:-1]))
    ndim = property(lambda self: len(self._base.shape) - 1)
    size = property(lambda self: int(np.prod(self.shape, dtype=np.int64)))
    dtype = property(lambda self: KEY_DTYPE)
    T = property(lambda self: self.transpose())

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object (a single key)")
        return self.shape[0]

    def __iter__(self) -> Any:
        if not self.shape:
            raise TypeError("iteration over a single key (a 0-d key array)")
        # JAX's eager iteration consumes nothing; traced, it slices (Note [key reuse])
        if isinstance(self._base, Tracer):
            return (self[i] for i in range(self.shape[0]))
        return (PRNGKeyArray._wrap(self._base[i]) for i in range(self.shape[0]))

    def __getitem__(self, index: Any) -> PRNGKeyArray:
        if index is Ellipsis or (isinstance(index, tuple) and index == ()):
            return self                                   # as JAX: x[...] is x
        out = PRNGKeyArray._wrap(self._base[self._data_index(index)])
        if key_reuse.checking():
            self._cell = key_reuse.use_slice(self._base, self._cell, self.shape, index)
        return out

    def _data_index(self, index: Any) -> tuple[Any, ...]:
        """The index into the key data that selects what ``index`` selects of the keys
        (each key's two data words whole)."""
        if not isinstance(index, tuple):
            index = (index,)
        if any(i is Ellipsis for i in index):
            return (*index, slice(None))
        if len(index) > self.ndim:
            raise IndexError(f"too many indices for a key array of shape {self.shape}: "
                             f"{len(index)} given")
        return (*index, *([slice(None)] * (self.ndim - len(index))), slice(None))

    @property
    def at(self) -> _KeyIndexer:
        """``keys.at[index].get()`` and ``.set(other_keys)``, as JAX's key arrays have."""
        return _KeyIndexer(self)

    def reshape(self, *shape: Any) -> PRNGKeyArray:
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        return self._forward(jnp.reshape(self._base, (*shape, 2)))

    def copy(self) -> PRNGKeyArray:
        return self._forward(jnp.array(self._base, copy=True))

    def ravel(self) -> PRNGKeyArray:
        return self.reshape(-1)

    def transpose(self, *axes: Any) -> PRNGKeyArray:
        axes = tuple(axes[0]) if len(axes) == 1 and isinstance(axes[0], (tuple, list)) \
            else axes or tuple(reversed(range(self.ndim)))
        return PRNGKeyArray._wrap(jnp.transpose(self._base, (*axes, self.ndim)))

    def __eq__(self, other: object) -> Any:
        if not isinstance(other, PRNGKeyArray):
            return NotImplemented
        return jnp.all(self._base == other._base, axis=-1)

    def __ne__(self, other: object) -> Any:
        if not isinstance(other, PRNGKeyArray):
            return NotImplemented
        return jnp.any(self._base != other._base, axis=-1)

    __hash__ = None  # type: ignore[assignment]   # like arrays: mutable-looking, unhashable

    def block_until_ready(self) -> PRNGKeyArray:
        if hasattr(self._base, "block_until_ready"):
            self._base.block_until_ready()
        return self

    def __repr__(self) -> str:
        if isinstance(self._base, Tracer):          # See Note [tracer text]
            return tracer_repr(self._base, str(KEY_DTYPE))
        return f"Array({self.shape}, dtype={KEY_DTYPE}) overlaying:\n{np.asarray(self._base)}"

    __str__ = __repr__


_tree.register_array_node(PRNGKeyArray, lambda k: ((k._base,), None),
                          lambda _, children: PRNGKeyArray._wrap(children[0]))


def _check_data(name: str, data: Any) -> None:
    if data.ndim < 1 or data.shape[-1] != 2:
        raise TypeError(f"{name}: threefry2x32 key data must have shape (..., 2), got "
                        f"shape {tuple(data.shape)}")
    if data.dtype != threefry.U32:
        raise TypeError(f"{name}: threefry2x32 key data must have dtype uint32, got "
                        f"{data.dtype}; make keys with random.key(seed) or "
                        "random.PRNGKey(seed)")


def check_key(name: str, key: Any, *, allow_batched: bool = False) -> tuple[Any, bool]:
    """``(raw data uint32[..., 2], typed)`` of a key given to ``name``, checked."""
    if isinstance(key, PRNGKeyArray):
        data, typed = key._base, True
    else:
        if not hasattr(key, "shape") or not hasattr(key, "dtype"):
            if isinstance(key, (list, tuple, np.ndarray)):
                key = np.asarray(key)
            else:
                raise TypeError(f"{name}: unexpected PRNG key type {type(key).__name__}; "
                                "make keys with random.key(seed) or random.PRNGKey(seed)")
        data, typed = jnp.asarray(key), False
        _check_data(name, data)
        if enable_custom_prng.value:
            warnings.warn("Raw arrays as random keys to jax.random functions are deprecated. "
                          "Assuming valid threefry2x32 key for now.", FutureWarning,
                          stacklevel=3)
    if not allow_batched and data.ndim != 1:
        shape = tuple(data.shape[:-1])
        raise ValueError(f"{name} accepts a single key, but was given a key array of shape "
                         f"{shape} != (). Use jax.vmap for batching.")
    if typed and key_reuse.checking() and name not in key_reuse.NOT_CONSUMING:
        key._cell = key_reuse.consume(name, data, key._cell)      # See Note [key reuse]
    return data, typed


def as_keys(data: Any, typed: bool) -> Any:
    """New key data returned as the kind of key the caller gave (typed keys whatever it
    gave under ``jax_enable_custom_prng``: Note [typed keys])."""
    return PRNGKeyArray._wrap(data) if typed or enable_custom_prng.value else data


def seed_array(seed: Any, name: str) -> Any:
    """An integer seed (a Python int, a NumPy or spmdc integer scalar) as an array."""
    from ..core import dtypes
    if isinstance(seed, PRNGKeyArray):
        raise TypeError(f"{name} accepts a scalar seed, but was given a PRNG key.")
    if np.ndim(seed):
        raise TypeError(f"{name} accepts a scalar seed, but was given an array of shape "
                        f"{np.shape(seed)} != (). Use jax.vmap for batching")
    if isinstance(seed, (bool, np.bool_)) or not (
            isinstance(seed, int) or np.issubdtype(getattr(seed, "dtype", np.float64),
                                                   np.integer)):
        raise TypeError(f"{name}: PRNG key seed must be an integer; got {seed!r}")
    if isinstance(seed, int):
        # Like JAX: a Python int is taken as int64, then narrowed to int32 (keeping its low
        # 32 bits) unless x64 is on.
        value = np.int64(seed)
        seed = value if dtypes.x64_enabled() else value.astype(np.int32)
    return jnp.asarray(seed)


def _both_keys(name: str, a: Any, b: Any) -> tuple[Any, Any]:
    if not (isinstance(a, PRNGKeyArray) and isinstance(b, PRNGKeyArray)):
        other = b if isinstance(a, PRNGKeyArray) else a
        raise TypeError(f"{name} does not accept dtypes {KEY_DTYPE}, "
                        f"{getattr(other, 'dtype', type(other).__name__)}: compare typed "
                        f"keys with typed keys (random.key_data gives a key's uint32 data)")
    return a._base, b._base


def _key_broadcast_to(key: PRNGKeyArray, shape: Any) -> PRNGKeyArray:
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    return key._forward(jnp.broadcast_to(key._base, (*shape, 2)))


def _key_array_equal(a: Any, b: Any) -> Any:
    a, b = _both_keys("array_equal", a, b)
    return jnp.array_equal(a, b)


def _key_isclose(a: Any, b: Any) -> Any:
    a, b = _both_keys("isclose", a, b)
    return jnp.all(a == b, axis=-1)


extended_array_rules[PRNGKeyArray] = {
    "broadcast_to": _key_broadcast_to, "array_equal": _key_array_equal,
    "isclose": _key_isclose}
register_array_type(PRNGKeyArray)     # a key array is a jax.Array, as in JAX
aval_rules[PRNGKeyArray] = lambda k: ShapedArray(k.shape, k.dtype)   # key<fry>[...]
