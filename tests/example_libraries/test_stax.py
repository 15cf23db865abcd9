"""spmdc.example_libraries.stax against JAX 0.10.2: a stax network with dropout and batch
norm trained as in JAX (tests/libs_programs.py), the convolution and pooling layers'
output shapes, parameters (bit for bit, same key) and outputs (recorded by
`tools/record.py libs` and `tools/record.py conv`), and a small CNN
(conv, max-pool, dense) trained data-parallel with pmap over 8 devices, whose loss falls
and matches jit's."""
from __future__ import annotations

import libs_programs
import numpy as np
import oracle
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc import lax, random
from spmdc.example_libraries import stax

REF = oracle.recorded("libs_reference.npz")


def test_stax_network_with_dropout_and_batchnorm_gives_jax_numbers():
    losses, final, out_shape = libs_programs.stax_classifier(spmdc)
    assert out_shape == (-1, 2)
    np.testing.assert_allclose(losses, REF["examples.stax.losses"], rtol=2e-5)
    for k, leaf in enumerate(final):
        np.testing.assert_allclose(leaf, REF[f"examples.stax.param{k}"], rtol=2e-4, atol=2e-6)


def test_stax_shapes_and_dropout_modes():
    init_fun, apply_fun = stax.serial(stax.Dense(4), stax.Relu, stax.Flatten)
    out_shape, params = init_fun(random.PRNGKey(0), (3, 5))
    assert out_shape == (3, 4) and apply_fun(params, jnp.ones((3, 5))).shape == (3, 4)
    init_fun, apply_fun = stax.FanInConcat(axis=1)
    assert init_fun(None, [(2, 3), (2, 4)])[0] == (2, 7)
    assert apply_fun((), [jnp.ones((2, 3)), jnp.ones((2, 4))]).shape == (2, 7)
    _, drop = stax.Dropout(0.5, mode="test")
    np.testing.assert_array_equal(drop((), jnp.ones(3), rng=random.PRNGKey(0)), 1.)
    _, drop = stax.Dropout(0.5)
    with pytest.raises(ValueError, match="requires apply_fun to be called with a PRNG key"):
        drop((), jnp.ones(3))
    kept = np.asarray(drop((), jnp.ones(1000), rng=random.PRNGKey(0)))
    assert set(np.unique(kept)) <= {0., 2.} and 350 < (kept > 0).sum() < 650


DATA = oracle.recorded("conv_reference.npz")
LAYERS = {   # the same layers as tools/recorders/conv.py (STAX_LAYERS)
    "conv": (lambda: stax.Conv(4, (3, 3), padding="SAME"), (2, 6, 6, 3)),
    "conv_strided": (lambda: stax.Conv(5, (2, 3), strides=(2, 1), padding="VALID"),
                     (1, 7, 6, 2)),
    "conv_nchw": (lambda: stax.GeneralConv(("NCHW", "OIHW", "NCHW"), 3, (2, 2)), (2, 2, 5, 5)),
    "conv_transpose": (lambda: stax.ConvTranspose(3, (3, 3), strides=(2, 2), padding="SAME"),
                       (2, 4, 4, 2)),
    "conv1d_transpose": (lambda: stax.Conv1DTranspose(2, (3,), padding="VALID"), (2, 5, 3)),
    "max_pool": (lambda: stax.MaxPool((2, 2), strides=(2, 2)), (2, 6, 6, 3)),
    "max_pool_same": (lambda: stax.MaxPool((3, 3), strides=(2, 2), padding="SAME"),
                      (2, 5, 5, 2)),
    "avg_pool": (lambda: stax.AvgPool((2, 2)), (2, 5, 5, 3)),
    "avg_pool_same": (lambda: stax.AvgPool((3, 3), strides=(2, 2), padding="SAME"),
                      (1, 5, 6, 2)),
    "sum_pool": (lambda: stax.SumPool((2, 3), strides=(1, 2)), (2, 5, 6, 2)),
    "max_pool_nchw": (lambda: stax.MaxPool((2, 2), spec="NCHW"), (2, 3, 4, 4)),
}


# one convolution of each kind with make test; its layout and stride variants with
# make test-slow (each compiles its own network)
_SLOW_LAYERS = {"conv_nchw", "conv1d_transpose", "conv_strided"}


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in _SLOW_LAYERS
                                  else n for n in sorted(LAYERS)])
def test_layer_same_as_jax(name):
    make, shape = LAYERS[name]
    init, apply = make()
    out_shape, params = init(random.PRNGKey(0), shape)
    assert tuple(out_shape) == tuple(DATA[f"stax.{name}.out_shape"])
    leaves = spmdc.tree_util.tree_leaves(params)
    assert len(leaves) == len([k for k in DATA.files if k.startswith(f"stax.{name}.param")])
    for k, p in enumerate(leaves):
        np.testing.assert_array_equal(np.asarray(p), DATA[f"stax.{name}.param{k}"])
    y = apply(params, DATA[f"stax.{name}.x"])
    assert y.shape == tuple(out_shape)
    np.testing.assert_allclose(y, DATA[f"stax.{name}.y"], rtol=1e-5, atol=1e-6)


def _cnn():
    return stax.serial(stax.Conv(4, (3, 3), padding="SAME"), stax.Relu,
                       stax.MaxPool((2, 2), strides=(2, 2)), stax.Conv(6, (3, 3)), stax.Relu,
                       stax.AvgPool((2, 2)), stax.Flatten, stax.Dense(10), stax.LogSoftmax)


def _data(n=32):
    rng = np.random.default_rng(0)
    images = rng.normal(size=(n, 10, 10, 1)).astype(np.float32)
    labels = (images[:, :5].sum(axis=(1, 2, 3)) > images[:, 5:].sum(axis=(1, 2, 3))
              ).astype(np.int32) + 2 * (images[:, :, :5].mean(axis=(1, 2, 3)) > 0)
    return images, labels


@pytest.mark.slow       # eight-device pmap training: make test-slow
@pytest.mark.devices(8)
def test_cnn_pmap_training_matches_jit():
    init, apply = _cnn()
    _, params = init(random.PRNGKey(1), (-1, 10, 10, 1))
    images, labels = _data()
    lr = 0.2

    def loss(p, x, y):
        logits = apply(p, x)
        return -jnp.mean(jnp.sum(logits * (y[:, None] == jnp.arange(10)), axis=1))

    @spmdc.jit
    def step(p, x, y):
        value, grads = spmdc.value_and_grad(loss)(p, x, y)
        return spmdc.tree_util.tree_map(lambda w, g: w - lr * g, p, grads), value

    def device_step(p, x, y):
        value, grads = spmdc.value_and_grad(loss)(p, x, y)
        grads = lax.pmean(grads, "batch")
        new = spmdc.tree_util.tree_map(lambda w, g: w - lr * g, p, grads)
        return new, lax.pmean(value, "batch")

    pstep = spmdc.pmap(device_step, axis_name="batch", in_axes=(None, 0, 0),
                       out_axes=(None, None))
    n_dev = 8
    shards = images.reshape(n_dev, -1, 10, 10, 1), labels.reshape(n_dev, -1)
    p1, p8 = params, params
    losses1, losses8 = [], []
    for _ in range(10):
        p1, l1 = step(p1, images, labels)
        p8, l8 = pstep(p8, *shards)
        losses1.append(float(l1))
        losses8.append(float(l8))
    np.testing.assert_allclose(losses8, losses1, rtol=1e-5, atol=1e-6)
    for a, b in zip(spmdc.tree_util.tree_leaves(p8), spmdc.tree_util.tree_leaves(p1),
                    strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
    assert losses1[-1] < 0.8 * losses1[0], losses1
