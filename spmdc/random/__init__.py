"""spmdc.random: JAX's random number API, bit for bit equal to JAX 0.10.2's default
generator (threefry2x32 with partitionable bits; see Note [threefry bits]).

Keys come in two kinds, as in JAX: raw ``uint32[2]`` arrays from ``PRNGKey(seed)``
and typed key arrays from ``key(seed)`` (see Note [typed keys]). Every function takes
either kind; ``split`` and ``fold_in`` return the kind they were given.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import numpy as jnp
from ..transforms.jit import jit
from . import (
    key_ops,  # noqa: F401  (registers the jnp shape functions on keys)
    threefry,
)
from .derived import (
    chisquare,
    double_sided_maxwell,
    f,
    lognormal,
    maxwell,
    pareto,
    rayleigh,
    t,
    triangular,
    wald,
    weibull_min,
)
from .discrete import binomial, geometric, multinomial
from .distributions import bits, normal, uniform
from .gamma import ball, beta, dirichlet, gamma, generalized_normal, loggamma, poisson
from .keys import KEY_DTYPE, PRNGKeyArray, PRNGKeyDType, as_keys, check_key, seed_array
from .linalg_samplers import multivariate_normal, orthogonal
from .samplers import (
    bernoulli,
    categorical,
    cauchy,
    choice,
    exponential,
    gumbel,
    laplace,
    logistic,
    rademacher,
    randint,
    truncated_normal,
)

__all__ = ["PRNGKey", "key", "key_data", "wrap_key_data", "key_impl", "split", "fold_in",
           "clone", "bits", "uniform", "normal", "truncated_normal", "bernoulli", "randint",
           "exponential", "gumbel", "laplace", "logistic", "cauchy", "rademacher",
           "categorical", "choice", "gamma", "loggamma", "beta", "dirichlet", "poisson",
           "generalized_normal", "ball", "orthogonal", "multivariate_normal", "pareto", "t",
           "chisquare", "f", "maxwell", "double_sided_maxwell", "weibull_min", "rayleigh",
           "wald", "triangular", "lognormal", "geometric", "binomial", "multinomial"]

# The shuffles need lax.sort (Note [sort shuffle]); they exist once it does.
from .. import lax as _lax  # noqa: E402

if hasattr(_lax, "sort_key_val"):
    from .permutations import permutation  # noqa: E402,F401
    __all__ += ["permutation"]

_seed = jit(threefry.seed)
_split = jit(threefry.split, static_argnums=1)
_fold_in = jit(threefry.fold_in)


def _impl_check(name: str, impl: Any) -> None:
    if impl is not None and impl != "threefry2x32" and not isinstance(impl, PRNGKeyDType):
        raise ValueError(f"{name}: unrecognized PRNG implementation {impl!r}; spmdc has "
                         "only \"threefry2x32\"")


def PRNGKey(seed: Any, *, impl: Any = None) -> Any:
    """A legacy raw key: ``uint32[2]`` from an integer seed (a typed key under
    ``jax_enable_custom_prng``)."""
    _impl_check("PRNGKey", impl)
    return as_keys(_seed(seed_array(seed, "PRNGKey")), False)


def key(seed: Any, *, impl: Any = None, dtype: Any = None) -> PRNGKeyArray:
    """A typed key (a rank-0 key array of dtype ``key<fry>``) from an integer seed."""
    if impl is not None and dtype is not None:
        raise ValueError("Cannot specify both `impl` and `dtype` arguments to jax.random.key")
    _impl_check("key", impl if dtype is None else dtype)
    return PRNGKeyArray._wrap(_seed(seed_array(seed, "key")))


def key_data(keys: Any) -> Any:
    """The ``uint32[..., 2]`` data of a key array (raw keys are returned as they are)."""
    data, _ = check_key("key_data", keys, allow_batched=True)
    return data


def wrap_key_data(key_bits_array: Any, *, impl: Any = None, dtype: Any = None
                  ) -> PRNGKeyArray:
    """A typed key array from ``uint32[..., 2]`` key data."""
    if impl is not None and dtype is not None:
        raise ValueError("Cannot specify both `impl` and `dtype` arguments to "
                         "jax.random.wrap_key_data")
    _impl_check("wrap_key_data", impl if dtype is None else dtype)
    if isinstance(key_bits_array, PRNGKeyArray):
        raise TypeError("wrap_key_data: the argument is already a typed key array")
    return PRNGKeyArray(key_bits_array)


def key_impl(keys: Any) -> str:
    check_key("key_impl", keys, allow_batched=True)
    return "threefry2x32"


def key_dtype(impl: Any = None) -> PRNGKeyDType:
    _impl_check("key_dtype", impl)
    return KEY_DTYPE


def split(key: Any, num: int | tuple[int, ...] = 2) -> Any:
    """``num`` new keys (or an array of keys of shape ``num``) from one key."""
    data, typed = check_key("split", key)
    shape = tuple(num) if isinstance(num, (tuple, list)) else (num,)
    shape = tuple(_nonneg(n) for n in shape)
    return as_keys(_split(data, shape), typed)


def _nonneg(n: Any) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"split: num must be a non-negative int or a tuple of them, got {n!r}")
    if n < 0:
        raise ValueError(f"split: num must be non-negative, got {n}")
    return int(n)


def fold_in(key: Any, data: Any) -> Any:
    """A new key from ``key`` and 32 bits of integer ``data``."""
    raw, typed = check_key("fold_in", key)
    if np.ndim(data):
        raise TypeError("fold_in accepts a scalar, but was given an array of shape "
                        f"{np.shape(data)} != (). Use jax.vmap for batching.")
    if isinstance(data, (int, np.integer)) and not isinstance(data, bool):
        if not 0 <= int(data) < 2**32:
            raise OverflowError(f"fold_in: Python integer {int(data)} out of bounds for "
                                "uint32")
        data = np.uint32(data)
    return as_keys(_fold_in(raw, jnp.asarray(data).astype(np.uint32)), typed)


def clone(key: Any) -> Any:
    """A new key array with the same keys, unconsumed for the key-reuse checker (Note
    [key reuse] in random/key_reuse.py); a raw key is returned as it is."""
    data, typed = check_key("clone", key, allow_batched=True)
    return PRNGKeyArray._wrap(data) if typed else key
