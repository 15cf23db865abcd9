# spmdc vs reference: raises
# spmdc: float32[], float32[3]
# reference: error: TracerArrayConversionError: cannot convert a traced f32[3] to a NumPy array (at /work/wt-fuzz/spmdc/frontend/numpy.py:68); use spmdc.numpy functions inside transformed functions
# fuzz program, seed 14
import spmdc as jax
import spmdc.numpy as jnp
from spmdc import lax
import ml_dtypes
import numpy as np


def _flat(f):
    return lambda *a: tuple(jax.tree_util.tree_leaves(f(*a)))


def _isfloat(x):
    return jnp.issubdtype(x.dtype, jnp.floating)


def _floats(f):
    return lambda *a: tuple(o for o in f(*a) if _isfloat(o))


def _total(f):
    return lambda *a: sum(jnp.sum(o) for o in _floats(f)(*a))


def _neg(outs):
    return tuple(o if o.dtype == jnp.bool_ else -o for o in outs)


def _acc(acc, new):
    return tuple(a | b if a.dtype == jnp.bool_ else a + b for a, b in zip(acc, new))


def _bump(args, i):
    return tuple(x * (1 + 0.25 * i).astype(x.dtype) if _isfloat(x) else x for x in args)


def _only(args, nums, diff):
    args = list(args)
    for k, d in zip(nums, diff):
        args[k] = d
    return args


def body(a0):
    v1 = jnp.max(a0, axis=None, keepdims=True)
    return (v1,)


f = body
rng = np.random.default_rng(14)
a0 = np.asarray(rng.integers(-4, 5, (2, 3)), np.int8)
out = f(a0)

if __name__ == '__main__':
    for o in out:
        print(o.dtype, o.shape)
        print(np.asarray(o))
