"""A primitive defined as a library defines it for JAX (jax.extend.core.Primitive with its
rules in jax.interpreters.ad / batching / mlir), run under every transformation and
checked against NumPy: spmdc/interpreters/ (Note [JAX's rule tables])."""
import numpy as np
import pytest
from jaxlib.mlir.dialects import stablehlo as hlo

import spmdc
import spmdc.numpy as jnp
from spmdc import lax
from spmdc.core.abstract import ShapedArray
from spmdc.extend.core import Primitive
from spmdc.interpreters import ad, batching, mlir
from spmdc.sharding import Mesh, PartitionSpec

# --- sin_scaled(x, a) = a sin(x): JVP through a linear primitive with a transpose rule -----

sin_scaled_p = Primitive("test_sin_scaled")
cos_mul_p = Primitive("test_cos_mul")          # cos_mul(x, t) = a cos(x) t, linear in t


def _sin_scaled_impl(x, *, a):
    return jnp.sin(x) * a


sin_scaled_p.def_impl(_sin_scaled_impl)
sin_scaled_p.def_abstract_eval(lambda x, *, a: ShapedArray(x.shape, x.dtype))
cos_mul_p.def_impl(lambda x, t, *, a: jnp.cos(x) * t * a)
cos_mul_p.def_abstract_eval(lambda x, t, *, a: ShapedArray(t.shape, t.dtype))


def _sin_scaled_jvp(primals, tangents, *, a):
    (x,), (t,) = primals, tangents
    y = sin_scaled_p.bind(x, a=a)
    if type(t) is ad.Zero:
        return y, ad.Zero.from_primal_value(y)
    return y, cos_mul_p.bind(x, t, a=a)


def _cos_mul_transpose(ct, x, t, *, a):
    assert ad.is_undefined_primal(t) and not ad.is_undefined_primal(x)
    assert isinstance(t.aval, ShapedArray)
    if type(ct) is ad.Zero:
        return [None, None]
    return [None, ct * jnp.cos(x) * a]


def _sin_scaled_batch(args, dims, *, a):
    (x,), (d,) = args, dims
    return sin_scaled_p.bind(x, a=a), d


def _cos_mul_batch(args, dims, *, a):
    (x, t), (dx, dt) = args, dims
    size = x.shape[dx] if dx is not None else t.shape[dt]
    x = jnp.moveaxis(x, dx, 0) if dx is not None else jnp.broadcast_to(x, (size, *x.shape))
    t = jnp.moveaxis(t, dt, 0) if dt is not None else jnp.broadcast_to(t, (size, *t.shape))
    return cos_mul_p.bind(x, t, a=a), 0


ad.primitive_jvps[sin_scaled_p] = _sin_scaled_jvp
ad.primitive_transposes[cos_mul_p] = _cos_mul_transpose
batching.primitive_batchers[sin_scaled_p] = _sin_scaled_batch
batching.primitive_batchers[cos_mul_p] = _cos_mul_batch
mlir.register_lowering(sin_scaled_p, mlir.lower_fun(_sin_scaled_impl, multiple_results=False))
mlir.register_lowering(cos_mul_p, mlir.lower_fun(lambda x, t, *, a: jnp.cos(x) * t * a,
                                                 multiple_results=False))


def sin_scaled(x, a=2.0):
    return sin_scaled_p.bind(x, a=a)


# --- muladd(x, y) = (x y, x + y): multiple results, a lowering that emits StableHLO -------

muladd_p = Primitive("test_muladd")
muladd_p.multiple_results = True
muladd_p.def_impl(lambda x, y: (x * y, x + y))
muladd_p.def_abstract_eval(lambda x, y: [ShapedArray(x.shape, x.dtype)] * 2)


def _muladd_lowering(ctx, x, y):
    assert [a.shape for a in ctx.avals_in] == [a.shape for a in ctx.avals_out]
    assert ctx.module_context.platforms == (spmdc.default_backend(),)
    return [hlo.MulOp(x, y).result, hlo.AddOp(x, y).result]


def _muladd_jvp(primals, tangents):
    (x, y), (tx, ty) = primals, map(ad.instantiate_zeros, tangents)
    return muladd_p.bind(x, y), [tx * y + x * ty, tx + ty]


def _muladd_batch(args, dims):
    x, y = (a if d is None else jnp.moveaxis(a, d, 0) for a, d in zip(args, dims, strict=True))
    return muladd_p.bind(*jnp.broadcast_arrays(x, y)), [0, 0]


mlir.register_lowering(muladd_p, _muladd_lowering)
ad.primitive_jvps[muladd_p] = _muladd_jvp
batching.primitive_batchers[muladd_p] = _muladd_batch

X = np.linspace(-1.0, 2.0, 8).astype(np.float32)
Y = np.linspace(0.5, 3.0, 8).astype(np.float32)


def close(a, b):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-5)


def test_eager_bind_runs_the_impl():
    close(sin_scaled(X), 2 * np.sin(X))
    prod, total = muladd_p.bind(X, Y)
    close(prod, X * Y)
    close(total, X + Y)


def test_jit_lowers_through_lower_fun_and_an_mlir_rule():
    close(spmdc.jit(sin_scaled)(X), 2 * np.sin(X))
    prod, total = spmdc.jit(lambda x, y: muladd_p.bind(x, y))(X, Y)
    close(prod, X * Y)
    close(total, X + Y)
    text = spmdc.jit(lambda x, y: muladd_p.bind(x, y)[0]).lower(X, Y).as_text()
    assert "stablehlo.multiply" in text


def test_vmap_uses_the_batching_rule():
    close(spmdc.vmap(sin_scaled)(X.reshape(4, 2)), 2 * np.sin(X.reshape(4, 2)))
    prod, total = spmdc.vmap(lambda x, y: muladd_p.bind(x, y), in_axes=(1, None))(
        X.reshape(2, 4), Y[:2])
    close(prod, X.reshape(2, 4).T * Y[:2])
    close(total, X.reshape(2, 4).T + Y[:2])


def test_jvp_and_linearize_use_the_jvp_rule():
    t = np.ones_like(X)
    y, ty = spmdc.jvp(sin_scaled, (X,), (t,))
    close(y, 2 * np.sin(X))
    close(ty, 2 * np.cos(X))
    _, lin = spmdc.linearize(sin_scaled, X)
    close(lin(Y), 2 * np.cos(X) * Y)


def test_grad_linearizes_and_transposes():
    close(spmdc.grad(lambda x: sin_scaled(x).sum())(X), 2 * np.cos(X))
    close(spmdc.jit(spmdc.grad(lambda x: sin_scaled(x).sum()))(X), 2 * np.cos(X))
    gx, gy = spmdc.grad(lambda x, y: (lambda o: (o[0] * o[1]).sum())(muladd_p.bind(x, y)),
                        argnums=(0, 1))(X, Y)
    close(gx, Y * (X + Y) + X * Y)          # d/dx of xy (x + y)
    close(gy, X * (X + Y) + X * Y)
    y, vjp = spmdc.vjp(sin_scaled, X)
    close(vjp(Y)[0], 2 * np.cos(X) * Y)


def test_linear_transpose_uses_the_transpose_rule():
    # cos_mul has a transpose rule and no JVP rule, as a linear primitive may.
    (ct,) = spmdc.linear_transpose(lambda t: cos_mul_p.bind(X, t, a=2.0), X)(Y)
    close(ct, 2 * np.cos(X) * Y)
    close(spmdc.grad(lambda t: (cos_mul_p.bind(X, t, a=2.0) * Y).sum())(X), 2 * np.cos(X) * Y)


def test_higher_order_and_composed_derivatives():
    close(spmdc.vmap(spmdc.grad(sin_scaled))(X), 2 * np.cos(X))
    close(spmdc.grad(spmdc.grad(lambda x: sin_scaled(x)))(np.float32(0.7)),
          -2 * np.sin(np.float32(0.7)))
    close(spmdc.jacfwd(sin_scaled)(X[:3]), np.diag(2 * np.cos(X[:3])))
    close(spmdc.hessian(lambda x: muladd_p.bind(x, x)[0].sum())(X[:2]), 2 * np.eye(2))


@pytest.mark.devices(4)
def test_pmap_and_shard_map():
    prod, total = spmdc.pmap(lambda x, y: muladd_p.bind(x, y))(X[:4], Y[:4])
    close(prod, X[:4] * Y[:4])
    close(total, X[:4] + Y[:4])
    mesh = Mesh(np.array(spmdc.devices()[:4]), ("i",))
    spec = PartitionSpec("i")
    out = spmdc.shard_map(lambda x: sin_scaled(x), mesh=mesh, in_specs=(spec,),
                          out_specs=spec)(X)
    close(out, 2 * np.sin(X))
    grads = spmdc.pmap(spmdc.grad(lambda x: sin_scaled(x)))(X[:4])
    close(grads, 2 * np.cos(X[:4]))


def test_control_flow_bodies():
    carry, ys = lax.scan(lambda c, v: (c + sin_scaled(v), muladd_p.bind(c, v)[0]),
                         np.float32(0), X)
    close(carry, (2 * np.sin(X)).sum())
    close(ys, np.concatenate([[0], np.cumsum(2 * np.sin(X))[:-1]]) * X)
    close(lax.cond(True, sin_scaled, lambda x: x, X), 2 * np.sin(X))
    out = lax.while_loop(lambda c: c[0] < 50, lambda c: tuple(muladd_p.bind(*c)),
                         (np.float32(2), np.float32(3)))
    close(out[0], 330.0)          # (2, 3) -> (6, 5) -> (30, 11) -> (330, 41)
    close(spmdc.grad(lambda x: lax.scan(lambda c, v: (c * sin_scaled(v), None), x,
                                        X[:3])[0])(np.float32(1.5)),
          np.prod(2 * np.sin(X[:3])))


def test_builtin_primitives_bind_as_in_jax():
    from spmdc.compiler.primitives.elementwise import sqrt_p
    close(sqrt_p.bind(np.float32(16.0)), 4.0)
    close(spmdc.jit(lambda x: sqrt_p.bind(x))(X * X), np.abs(X))
    close(spmdc.grad(lambda x: sqrt_p.bind(x))(np.float32(4.0)), 0.25)


def test_integer_operands_get_float0_zero_tangents():
    p = Primitive("test_scale_by_int")
    p.def_abstract_eval(lambda x, n: x)
    mlir.register_lowering(p, mlir.lower_fun(lambda x, n: x * n.astype(x.dtype),
                                             multiple_results=False))
    seen = []

    def jvp(primals, tangents):
        (x, n), (tx, tn) = primals, tangents
        seen.append((type(tn), tn.aval.dtype))
        return p.bind(x, n), tx * n.astype(x.dtype)
    ad.primitive_jvps[p] = jvp
    n = np.array([1, 2, 3, 4, 5, 6, 7, 8], np.int32)
    close(spmdc.grad(lambda x: p.bind(x, n).sum())(X), n)
    close(spmdc.jvp(lambda x: p.bind(x, n), (X,), (Y,))[1], Y * n)
    assert seen == [(ad.Zero, np.dtype([("float0", np.void, 0)]))] * 2


def test_lowerings_with_array_constants():
    offsets = np.array([0.5, -1.0, 2.0], np.float32)
    mask = np.array([True, False, True])
    p = Primitive("test_offset")
    p.def_abstract_eval(lambda x: x)
    mlir.register_lowering(p, mlir.lower_fun(lambda x: jnp.where(mask, x + offsets, x),
                                             multiple_results=False))
    close(spmdc.jit(lambda x: p.bind(x))(X[:3]), np.where(mask, X[:3] + offsets, X[:3]))
    q = Primitive("test_ir_constant")
    q.def_abstract_eval(lambda x: x)
    mlir.register_lowering(q, lambda ctx, x: [hlo.MulOp(x, mlir.ir_constant(offsets)).result])
    close(spmdc.jit(lambda x: q.bind(x))(X[:3]), X[:3] * offsets)
    r = Primitive("test_bool_constant")
    r.def_abstract_eval(lambda x: ShapedArray(x.shape, np.bool_))
    mlir.register_lowering(r, lambda ctx, x: [mlir.ir_constant(mask)])
    assert spmdc.jit(lambda x: r.bind(x))(X[:3]).tolist() == mask.tolist()


def test_rules_may_use_small_array_constants():
    # A rule runs inside a pass, whose program has fixed inputs: its constants are built
    # from literals (Note [rules on values]).
    weights = np.array([1.0, 2.0, 3.0], np.float32)
    p = Primitive("test_weighted")
    p.def_abstract_eval(lambda x: x)
    mlir.register_lowering(p, mlir.lower_fun(lambda x: x * weights, multiple_results=False))
    ad.deflinear2(p, lambda ct, x: [ct * jnp.asarray(weights) + np.zeros(3, np.float32)])
    batching.primitive_batchers[p] = lambda args, dims: (
        p.bind(jnp.moveaxis(args[0], dims[0], 0) * np.array([[1.0]], np.float32)), 0)
    close(spmdc.grad(lambda x: p.bind(x).sum())(X[:3]), weights)
    close(spmdc.vmap(lambda x: p.bind(x), in_axes=1)(np.stack([X[:3]] * 2, axis=1)),
          np.stack([X[:3] * weights] * 2))
