# spmdc vs reference: raises
# spmdc: float32[2, 4, 2, 1], float32[3, 1, 2, 4, 2]
# reference: error: UnboundAxisError: pmax: unbound axis name 'a' (at <fuzz body>:45). Axis names bound here (by an enclosing pmap or vmap axis_name=...): none
# fuzz program, seed 26
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


def body(a0, a1):
    v2 = lax.pmax(a0, 'a')
    v3 = lax.pmean(a0, 'a')
    v4 = jnp.stack([v3, a0], axis=2)
    v5 = v3 + 2
    v6 = jnp.prod(v4, axis=(0, 1, 2), keepdims=True)
    v7 = v5 + a1
    v8 = jnp.tanh(v4)
    v9 = lax.psum(v8, 'a')
    return (v9,)


f = body
f = (lambda f: lambda xs, *r: _flat(lax.scan)(
    lambda acc, x: (lambda y: (_acc(acc, y), y))(f(x, *r)),
    f(xs[0], *r), xs))(f)
f = jax.jit(f)
f = jax.vmap(f, in_axes=(None, 2), out_axes=(-1, -4), axis_name='a')
rng = np.random.default_rng(26)
a0 = np.asarray(rng.standard_normal((3, 2, 4)), np.float32)
a1 = np.asarray(rng.standard_normal((1, 1, 1)), np.float32)
out = f(a0, a1)

if __name__ == '__main__':
    for o in out:
        print(o.dtype, o.shape)
        print(np.asarray(o))
