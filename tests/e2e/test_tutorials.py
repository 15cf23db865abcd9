"""The scenarios of the pmap tutorials our users read, written fresh:
listing devices, doubling an arange over every device, pmap of a jitted function on data
placed with device_put(data, [devices]), data-parallel gradients averaged with pmean
(the numbers the tutorial's example gives with np.random.seed(0)), and vmap inside pmap.
They use the public API the way the tutorials do: ``import spmdc as jax``."""
from __future__ import annotations

import numpy as np
import pytest

import spmdc as jax
import spmdc.numpy as jnp

pytestmark = pytest.mark.devices(8)      # the tutorials map over 8 devices


def test_listing_devices():
    devices = jax.devices()
    assert len(devices) == jax.device_count() == 8
    assert jax.local_devices()[:2] == devices[:2]
    assert "CpuDevice(id=0)" in str(devices)


def test_doubling_an_arange_on_every_device():
    n = jax.device_count()
    data = jnp.arange(n * 3).reshape((n, 3))
    result = jax.pmap(lambda x: x * 2)(data)
    assert isinstance(result, jax.Array)
    assert result.shape == (n, 3)
    assert result.devices() == set(jax.devices())
    np.testing.assert_array_equal(np.asarray(result), 2 * np.arange(n * 3).reshape(n, 3))
    assert str(result).startswith("[[ 0  2  4]")


def test_pmap_of_a_jitted_function_on_placed_data():
    two = jax.local_devices()[:2]

    def work(x):
        y = jnp.sin(x) * jnp.cos(x)
        return (jnp.tanh(y) + jnp.sqrt(jnp.abs(x))) * 2.0

    data = np.arange(8.0).reshape(2, -1)
    placed = jax.device_put(data, two)
    plain = jax.pmap(work)(placed).block_until_ready()
    jitted = jax.pmap(jax.jit(work))(placed)
    y = np.sin(data) * np.cos(data)
    want = (np.tanh(y) + np.sqrt(np.abs(data))) * 2.0
    assert plain.shape == (2, 4) and plain.devices() == set(two)
    np.testing.assert_allclose(np.asarray(plain), want, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(jitted), want, rtol=1e-6)


def test_averaged_gradients_of_a_linear_model():
    two = jax.local_devices()[:2]

    def mse(params, xs, ys):
        w, b = params
        return jnp.mean((w * xs + b - ys) ** 2)

    def step(params, xs, ys):
        loss, grads = jax.value_and_grad(mse)(params, xs, ys)
        return jax.lax.pmean(loss, "batch"), jax.lax.pmean(grads, "batch")

    run = jax.pmap(step, axis_name="batch", in_axes=(None, 0, 0), out_axes=(None, None))
    params = (jnp.array(2.0), jnp.array(1.0))
    xs = np.arange(8.0).reshape(2, -1)
    np.random.seed(0)
    ys = 3 * xs + 2 + np.random.randn(*xs.shape) * 0.5
    loss, (dw, db) = run(params, jax.device_put(xs, two), jax.device_put(ys, two))
    # Per-device gradients, then averaged: Note [collective transpose].
    assert f"{loss:.4f}" == "28.8791"
    assert (f"{dw:.4f}", f"{db:.4f}") == ("-44.0382", "-9.8841")
    assert loss.shape == () and loss.devices() == {two[0]}


def test_vmap_inside_pmap():
    two = jax.local_devices()[:2]

    def per_device(batch):
        return jax.vmap(lambda item: jnp.tanh(item) * 2.0)(batch)

    data = np.arange(2 * 3 * 4.0).reshape(2, 3, 4)
    result = jax.pmap(per_device, in_axes=0)(jax.device_put(data, two))
    result.block_until_ready()
    assert result.shape == (2, 3, 4)
    np.testing.assert_allclose(np.asarray(result), np.tanh(data) * 2.0, rtol=1e-6)
