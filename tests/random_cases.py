"""The draws that tests/random/test_samplers.py compares bit for bit with JAX's.

Shared with `tools/record.py random` (and `random_sort`, the shuffles of ``sort_cases``),
which runs the same cases on JAX 0.10.2 and stores what it draws in
tests/data/random_{x32,x64}.npz (and random_sort_{x32,x64}.npz). A case is
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
    # one-line transforms of uniform draws, over dtypes and a few shapes
    for dt in _float_cases(x64):
        for shape in ((), (0,), (3, 5)):
            for fn in ("exponential", "gumbel", "laplace", "logistic", "cauchy"):
                add(f"{fn}/{dt}/{shape}",
                    lambda r, jnp, k, s=shape, d=dt, f=fn: getattr(r, f)(k, s, d))
            add(f"truncated_normal/{dt}/{shape}", lambda r, jnp, k, s=shape, d=dt:
                r.truncated_normal(k, -1.5, 0.7, s, d))
        add(f"gumbel/{dt}/high", lambda r, jnp, k, d=dt: r.gumbel(k, (3, 5), d, mode="high"))
    add("truncated_normal/bounds", lambda r, jnp, k: r.truncated_normal(
        k, jnp.array([-3.0, 0.0, 1.0]), jnp.array([[3.0], [0.5]])))
    add("truncated_normal/tail", lambda r, jnp, k: r.truncated_normal(k, 4.0, 9.0, (6,)))
    add("bernoulli/default", lambda r, jnp, k: r.bernoulli(k))
    add("bernoulli/(3, 5)", lambda r, jnp, k: r.bernoulli(k, 0.3, (3, 5)))
    add("bernoulli/p_array", lambda r, jnp, k: r.bernoulli(k, jnp.array([0.1, 0.5, 0.9])))
    add("bernoulli/high", lambda r, jnp, k: r.bernoulli(k, 0.25, (3, 5), mode="high"))
    add("bernoulli/bf16", lambda r, jnp, k: r.bernoulli(k, jnp.bfloat16(0.5), (7,)))
    ints = ("int8", "uint8", "int16", "int32", "uint32") + (("int64", "uint64") if x64 else ())
    for dt in ints:
        add(f"randint/{dt}/(3, 5)", lambda r, jnp, k, d=dt: r.randint(k, (3, 5), 0, 100, d))
        add(f"rademacher/{dt}/(7,)", lambda r, jnp, k, d=dt: r.rademacher(k, (7,), d))
    add("randint/uint8/full", lambda r, jnp, k: r.randint(k, (9,), 0, 256, "uint8"))
    add("randint/int8/clipped", lambda r, jnp, k: r.randint(k, (9,), -1000, 1000, "int8"))
    add("randint/wide", lambda r, jnp, k: r.randint(k, (9,), -2**31, 2**31 - 1))
    add("randint/empty_range", lambda r, jnp, k: r.randint(k, (4,), 5, 3))
    add("randint/arrays", lambda r, jnp, k: r.randint(
        k, (2, 3), jnp.array([0, -7, 100]), jnp.array([[10], [1000]])))
    add("randint/()", lambda r, jnp, k: r.randint(k, (), 0, 7))
    add("randint/(0,)", lambda r, jnp, k: r.randint(k, (0,), 0, 7))
    add("rademacher/float32", lambda r, jnp, k: r.rademacher(k, (3, 5), "float32"))
    add("rademacher/default", lambda r, jnp, k: r.rademacher(k, (5,)))
    logits = [[0.1, 2.0, -1.0, 0.5], [0.0, 0.0, 0.0, 0.0], [5.0, -5.0, 1.0, 1.0]]
    add("categorical/default", lambda r, jnp, k: r.categorical(k, jnp.array(logits)))
    add("categorical/axis0", lambda r, jnp, k: r.categorical(k, jnp.array(logits), axis=0))
    add("categorical/shape", lambda r, jnp, k: r.categorical(k, jnp.array(logits),
                                                             shape=(5, 3)))
    add("categorical/high", lambda r, jnp, k: r.categorical(k, jnp.array(logits[0]),
                                                            shape=(6,), mode="high"))
    add("choice/int", lambda r, jnp, k: r.choice(k, 10, (5,)))
    add("choice/()", lambda r, jnp, k: r.choice(k, 10))
    add("choice/array_axis1", lambda r, jnp, k: r.choice(
        k, jnp.arange(12.0).reshape(3, 4), (2, 2), axis=1))
    add("choice/p", lambda r, jnp, k: r.choice(k, 5, (3, 4),
                                               p=jnp.array([0.1, 0.2, 0.3, 0.0, 0.4])))
    add("choice/p_array", lambda r, jnp, k: r.choice(k, jnp.array([10, 20, 30]), (6,),
                                                     p=jnp.array([1.0, 1.0, 2.0])))
    add("choice/empty", lambda r, jnp, k: r.choice(k, 4, (0, 3)))
    # rejection samplers
    alphas = [0.01, 0.3, 1.0, 2.5, 40.0]
    for dt in _float_cases(x64):
        add(f"gamma/{dt}", lambda r, jnp, k, d=dt: r.gamma(k, jnp.array(alphas), dtype=d))
        add(f"loggamma/{dt}", lambda r, jnp, k, d=dt: r.loggamma(k, jnp.array(alphas),
                                                               dtype=d))
        add(f"beta/{dt}", lambda r, jnp, k, d=dt: r.beta(k, 0.5, 2.0, (2, 3), d))
        add(f"dirichlet/{dt}", lambda r, jnp, k, d=dt: r.dirichlet(
            k, jnp.array([0.2, 1.0, 5.0]), (2,), d))
        add(f"ball/{dt}", lambda r, jnp, k, d=dt: r.ball(k, 3, shape=(2,), dtype=d))
    add("gamma/shape", lambda r, jnp, k: r.gamma(k, 1.5, (2, 3)))
    add("gamma/broadcast", lambda r, jnp, k: r.gamma(k, jnp.array([0.5, 4.0]), (3, 2)))
    add("gamma/()", lambda r, jnp, k: r.gamma(k, 0.8))
    add("gamma/(0,)", lambda r, jnp, k: r.gamma(k, 2.0, (0,)))
    add("beta/arrays", lambda r, jnp, k: r.beta(k, jnp.array([0.1, 1.0, 7.0]), 3.0))
    add("dirichlet/batch", lambda r, jnp, k: r.dirichlet(k, jnp.array([[0.5, 0.5], [3.0, 1.0]])))
    lams = [0.0, 0.5, 3.0, 9.9, 10.0, 42.0, 1000.0]
    add("poisson/lams", lambda r, jnp, k: r.poisson(k, jnp.array(lams)))
    add("poisson/shape", lambda r, jnp, k: r.poisson(k, 4.0, (3, 5)))
    add("poisson/()", lambda r, jnp, k: r.poisson(k, 20.0))
    add("poisson/int8", lambda r, jnp, k: r.poisson(k, 2.0, (7,), "int8"))
    add("generalized_normal", lambda r, jnp, k: r.generalized_normal(k, 1.5, (3, 4)))
    add("ball/p1", lambda r, jnp, k: r.ball(k, 2, p=1, shape=(3,)))
    add("ball/()", lambda r, jnp, k: r.ball(k, 4))
    return out


def sort_cases(x64: bool) -> list[tuple[str, object]]:
    """The shuffles (they need a sort): recorded in tests/data/random_sort_*.npz."""
    out: list[tuple[str, object]] = []

    def add(name, fn):
        out.append((name, fn))

    for n in (0, 1, 2, 10, 33):
        add(f"permutation/int{n}", lambda r, jnp, k, n=n: r.permutation(k, n))
    add("permutation/array", lambda r, jnp, k: r.permutation(k, jnp.arange(7.0) * 3))
    grid = [[float(4 * i + j) for j in range(4)] for i in range(3)]
    add("permutation/axis0", lambda r, jnp, k: r.permutation(k, jnp.array(grid)))
    add("permutation/axis1", lambda r, jnp, k: r.permutation(k, jnp.array(grid), axis=1))
    add("permutation/independent", lambda r, jnp, k: r.permutation(
        k, jnp.array(grid), axis=1, independent=True))
    add("permutation/negative_axis", lambda r, jnp, k: r.permutation(k, jnp.array(grid), -1))
    add("permutation/bf16", lambda r, jnp, k: r.permutation(k, jnp.arange(9, dtype="bfloat16")))
    add("choice/no_replace", lambda r, jnp, k: r.choice(k, 10, (4,), replace=False))
    add("choice/no_replace_all", lambda r, jnp, k: r.choice(k, 6, (2, 3), replace=False))
    add("choice/no_replace_axis1", lambda r, jnp, k: r.choice(
        k, jnp.array(grid), (2,), replace=False, axis=1))
    add("choice/no_replace_p", lambda r, jnp, k: r.choice(
        k, 5, (3,), replace=False, p=jnp.array([0.1, 0.2, 0.3, 0.0, 0.4])))
    add("choice/no_replace_p_array", lambda r, jnp, k: r.choice(
        k, jnp.array([5, 6, 7, 8]), (2,), replace=False, p=jnp.array([1.0, 2.0, 3.0, 4.0])))
    logits = [[0.1, 2.0, -1.0, 0.5], [0.0, 0.0, 0.0, 0.0], [5.0, -5.0, 1.0, 1.0]]
    add("categorical/no_replace", lambda r, jnp, k: r.categorical(
        k, jnp.array(logits), shape=(2, 3), replace=False))
    add("categorical/no_replace_axis0", lambda r, jnp, k: r.categorical(
        k, jnp.array(logits), axis=0, shape=(3, 4), replace=False))
    if x64:
        add("permutation/int64", lambda r, jnp, k: r.permutation(k, 12))
    return out
