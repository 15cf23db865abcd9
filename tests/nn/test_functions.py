"""spmdc.nn against values recorded from JAX 0.10.2 (`tools/record.py libs`),
plus the stability and gradient properties JAX's functions have."""
from __future__ import annotations

import numpy as np
import oracle
import pytest
from libs_cases import UNARY, W, X

import spmdc
import spmdc.nn as nn
import spmdc.numpy as jnp

REF = oracle.recorded("libs_reference.npz")
FNS = {name: getattr(nn, name) for name in [*UNARY, "logsumexp"]}
FNS["gelu_tanh"] = lambda v: nn.gelu(v, approximate=True)
FNS["gelu_erf"] = lambda v: nn.gelu(v, approximate=False)


def close(got, want, rtol=2e-6, atol=1e-6):
    got = np.asarray(got)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


@pytest.mark.parametrize("name", sorted(FNS))
def test_values_and_gradients_match_jax(name):
    f = FNS[name]
    close(f(jnp.asarray(X)), REF[f"nn.{name}"])
    grad = spmdc.grad(lambda v: jnp.sum(f(v) * W))(jnp.asarray(X))
    close(grad, REF[f"nn.{name}.grad"])


def test_jit_and_vmap_agree_with_eager():
    x = jnp.asarray(X)
    for name in ["relu", "gelu_erf", "softmax", "log_softmax", "standardize"]:
        f = FNS[name]
        close(spmdc.jit(f)(x), np.asarray(f(x)))
    batch = jnp.stack([x, -x])
    close(spmdc.vmap(nn.softmax)(batch), np.asarray(nn.softmax(batch, axis=-1)))


M = np.array([[1., 2., 3., 4.], [0.5, -1., 7., 2.], [3., 3., 3., 3.]], np.float32)
MASK = np.array([[True, False, True, True], [True, True, False, False],
                 [False, False, False, True]])


def test_axis_and_where_match_jax():
    close(nn.softmax(M, axis=0), REF["nn.softmax.axis0"])
    close(nn.softmax(M, where=MASK), REF["nn.softmax.where"])
    close(nn.log_softmax(M, where=MASK), REF["nn.log_softmax.where"])
    close(nn.logsumexp(M, axis=1, where=MASK), REF["nn.logsumexp.where"])
    close(nn.standardize(M, axis=1, where=MASK), REF["nn.standardize.where"])
    close(nn.standardize(M, axis=0, algorithm="stable"), REF["nn.standardize.stable"])
    close(nn.glu(M, axis=1), REF["nn.glu"])


def test_softmax_and_logsumexp_never_overflow():
    big = jnp.array([1e30, 1e30, -1e30], jnp.float32)
    np.testing.assert_allclose(nn.softmax(big), [0.5, 0.5, 0.])
    assert np.isfinite(np.asarray(nn.log_softmax(big))[:2]).all()
    assert float(nn.logsumexp(jnp.array([1e4, 1e4]))) == pytest.approx(1e4 + np.log(2))
    for f in (nn.softmax, nn.log_softmax, lambda v: nn.logsumexp(v)):
        g = spmdc.grad(lambda v, f=f: jnp.sum(f(v) * jnp.array([1., 2., 3.])))(big)
        assert np.isfinite(np.asarray(g)).all(), f
    # all -inf: logsumexp is -inf (not NaN), and a masked-out row of softmax is 0
    assert float(nn.logsumexp(jnp.array([-np.inf, -np.inf]))) == -np.inf
    np.testing.assert_array_equal(nn.softmax(M, where=np.zeros_like(MASK)), 0)


def test_kinks_have_jax_gradients():
    g = spmdc.grad(lambda v: jnp.sum(nn.relu(v)))(jnp.array([-1., 0., 1.]))
    np.testing.assert_array_equal(g, [0., 0., 1.])
    g = spmdc.grad(lambda v: jnp.sum(nn.relu6(v)))(jnp.array([0., 3., 6., 7.]))
    np.testing.assert_array_equal(g, [0., 1., 0., 0.])
    assert float(spmdc.grad(nn.softplus)(0.)) == 0.5
    assert np.isnan(float(nn.relu(np.float32(np.nan))))


def test_relu_and_relu6_cost_what_jax_counts():
    # Flax's tabulate reports XLA's cost analysis of the lowered program; JAX 0.10.2's
    # relu and relu6 are custom_jvp functions of max/min: 1 and 2 flops per element
    # forward, twice that with their gradient (recorded from JAX).
    x = jnp.ones((4, 8))
    for f, forward, backward in ((nn.relu, 32, 64), (nn.relu6, 64, 128)):
        assert isinstance(f, spmdc.custom_jvp)
        assert spmdc.jit(f).lower(x).cost_analysis()["flops"] == forward
        grad = spmdc.jit(spmdc.grad(lambda v, f=f: jnp.sum(f(v))))
        assert grad.lower(x).cost_analysis()["flops"] == backward


def test_vjp_under_jit_computes_a_custom_jvp_function_once():
    # vjp traces its function for the value and again for the pullback; the two calls of
    # relu are one equation after CSE, as in JAX's program (345 flops, recorded from JAX;
    # 361 when relu was computed twice). Flax's tabulate reports this count.
    def pulled(x, w, b):
        out, vjp_fn = spmdc.vjp(lambda x, w, b: nn.relu(x) @ w + b, x, w, b)
        return vjp_fn(out)
    lowered = spmdc.jit(pulled).lower(jnp.ones((2, 8)), jnp.ones((8, 3)), jnp.ones(3))
    assert lowered.cost_analysis()["flops"] == 345
    assert lowered.as_text().count("stablehlo.maximum") == 1


def test_dtypes_follow_jax():
    ints = jnp.array([1, 7, -2])
    for name in ["relu", "relu6", "hard_tanh", "elu", "softmax", "log_softmax", "standardize",
                 "leaky_relu", "celu"]:
        assert getattr(nn, name)(ints).dtype == REF[f"nn.int.{name}"].dtype, name
        close(getattr(nn, name)(ints), REF[f"nn.int.{name}"])
    assert nn.sigmoid(jnp.array([1, 2])).dtype == jnp.float32
    assert nn.gelu(jnp.array([1.], jnp.float16)).dtype == jnp.float16
    assert nn.softplus(jnp.array([1.], jnp.bfloat16)).dtype == jnp.bfloat16


def test_one_hot():
    out = nn.one_hot(jnp.array([0, 2, -1, 3]), 3)
    np.testing.assert_array_equal(out, [[1, 0, 0], [0, 0, 1], [0, 0, 0], [0, 0, 0]])
    assert out.dtype == jnp.float32
    out = nn.one_hot(jnp.array([[1, 0]]), 2, axis=0, dtype=jnp.int32)
    assert out.shape == (2, 1, 2) and out.dtype == jnp.int32
    np.testing.assert_array_equal(out[:, 0, :], [[0, 1], [1, 0]])
    np.testing.assert_array_equal(spmdc.jit(lambda v: nn.one_hot(v, 4))(jnp.array([3])),
                                  [[0, 0, 0, 1]])


def test_bad_arguments_raise_clear_errors():
    with pytest.raises(ValueError, match="must be even"):
        nn.glu(jnp.ones((2, 3)))
    with pytest.raises(ValueError, match="Unknown algorithm"):
        nn.standardize(M, algorithm="slow")
    with pytest.raises(TypeError, match="num_classes must be a concrete integer"):
        nn.one_hot(jnp.array([1]), 2.5)
    with pytest.raises(TypeError, match="axis must be an integer"):
        nn.one_hot(jnp.array([1]), 2, axis="batch")
