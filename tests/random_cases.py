"""The draws that tests/test_random.py compares bit for bit with JAX's.

Shared with tools/record_random.py, which runs the same cases on JAX 0.10.2 and stores
what it draws in tests/data/random_x32.npz and tests/data/random_x64.npz. A case is
``(id, fn)`` with ``fn(random, jnp, key) -> array`` and ``key`` a raw key; the tests run
it on raw and typed keys, eagerly, under jit, under vmap over a batch of keys and under
pmap. This module imports neither jax nor spmdc.
"""
from __future__ import annotations

SEEDS = (0, 42, 2**31 + 7)          # a seed above 2**31 covers the seed's sign handling
SHAPES = ((), (0,), (1,), (7,), (3, 5), (2, 0, 3), (4, 3, 2))
FLOATS = ("float32", "bfloat16", "float16")
VMAP_SIZE = 2                       # keys per vmap/pmap batch: random.split(key, 2)


def _float_cases(x64: bool) -> tuple[str, ...]:
    return FLOATS + (("float64",) if x64 else ())


def cases(x64: bool) -> list[tuple[str, object]]:
    """Every case for one x64 setting (the x64 file has the float64/uint64 ones too)."""
    out: list[tuple[str, object]] = []

    def add(name, fn):
        out.append((name, fn))

    # keys
    add("split/2", lambda r, jnp, k: r.split(k))
    add("split/3", lambda r, jnp, k: r.split(k, 3))
    add("split/0", lambda r, jnp, k: r.split(k, 0))
    add("split/2x3", lambda r, jnp, k: r.split(k, (2, 3)))
    for d in (0, 1, 12345, 2**32 - 1):
        add(f"fold_in/{d}", lambda r, jnp, k, d=d: r.fold_in(k, d))
    add("split_of_fold_in", lambda r, jnp, k: r.split(r.fold_in(k, 7), 4))
    # bits
    widths = ("uint8", "uint16", "uint32") + (("uint64",) if x64 else ())
    for dt in widths:
        for shape in SHAPES:
            add(f"bits/{dt}/{shape}", lambda r, jnp, k, s=shape, d=dt: r.bits(k, s, d))
    add("bits/default/(5,)", lambda r, jnp, k: r.bits(k, (5,)))
    # uniform and normal over shapes and dtypes
    for dt in _float_cases(x64):
        for shape in SHAPES:
            add(f"uniform/{dt}/{shape}", lambda r, jnp, k, s=shape, d=dt: r.uniform(k, s, d))
            add(f"normal/{dt}/{shape}", lambda r, jnp, k, s=shape, d=dt: r.normal(k, s, d))
        add(f"uniform/{dt}/range", lambda r, jnp, k, d=dt: r.uniform(
            k, (3, 4), d, minval=jnp.array([-2.0, 0.5, 3.0, 10.0]), maxval=11.0))
    add("uniform/default/(9,)", lambda r, jnp, k: r.uniform(k, (9,)))
    add("uniform/minmax", lambda r, jnp, k: r.uniform(k, (6,), minval=-3, maxval=-1))
    add("normal/complex64", lambda r, jnp, k: r.normal(k, (5,), "complex64"))
    add("normal/default/(9,)", lambda r, jnp, k: r.normal(k, (9,)))
    return out
