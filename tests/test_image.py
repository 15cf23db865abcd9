"""spmdc.image (jax.image) against JAX 0.10.2's results, recorded in
tests/data/image_reference.json: resize by every method, with and without antialiasing,
down, up and to the same size; scale_and_translate; gradients with respect to the image,
the scale and the translation; dtypes; JAX's exception types for bad input."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc import image

with open(os.path.join(os.path.dirname(__file__), "data", "image_reference.json")) as _f:
    REF = json.load(_f)
IMG = np.asarray(REF["img"], np.float32)
SCALE = np.array([1.7, 0.6], np.float32)
TRANS = np.array([-0.4, 1.3], np.float32)
METHODS = ["nearest", "linear", "lanczos3", "lanczos5", "cubic", "cubic-pytorch", "area"]


def _resize_cases(keys):
    """(key, method, antialias, shape) of the recorded resize cases named by ``keys``."""
    for key in keys:
        method, antialias, shape = key.split("|")
        yield key, method, antialias == "True", tuple(int(n) for n in shape.split("x"))


def _check_resizes(keys):
    cases = list(_resize_cases(keys))
    # One program for all of them: one compile.
    results = spmdc.jit(lambda x: [image.resize(x, shape, method, antialias)
                                   for _, method, antialias, shape in cases])(IMG)
    for (key, _, _, shape), got in zip(cases, results, strict=True):
        assert got.shape == shape and got.dtype == np.float32, key
        np.testing.assert_allclose(got, REF["resize"][key], rtol=2e-5, atol=2e-6,
                                   err_msg=key)


def test_resize_as_jax():
    # Every method, down and up, with and without antialiasing (the rest: slow).
    _check_resizes([f"{m}|{aa}|{shape}" for m, (aa, shape) in zip(
        METHODS, [("True", "3x9"), ("False", "7x2"), ("True", "7x2"), ("False", "3x9"),
                  ("True", "1x13"), ("False", "7x2"), ("True", "7x2")], strict=True)])


@pytest.mark.slow
def test_every_recorded_resize_as_jax():
    _check_resizes(REF["resize"])


def _check_scale_and_translate(keys):
    def run(x, s, t):
        return [image.scale_and_translate(x, (5, 4), (0, 1), s, t,
                                          image.ResizeMethod.from_string(key.split("|")[0]),
                                          antialias=key.split("|")[1] == "True")
                for key in keys]
    for key, got in zip(keys, spmdc.jit(run)(IMG, SCALE, TRANS), strict=True):
        np.testing.assert_allclose(got, REF["st"][key], rtol=2e-5, atol=2e-6, err_msg=key)


def test_scale_and_translate_as_jax():
    img3 = np.asarray(REF["img3"], np.float32)

    def run(x):
        return (image.scale_and_translate(x, (3, 6, 2), (-2,), jnp.array([1.5]),
                                          jnp.array([0.25]), "triangle"),
                image.resize(x, (5, 2, 2), "bicubic"))
    shifted, resized = spmdc.jit(run)(img3)
    np.testing.assert_allclose(shifted, REF["st1"], rtol=2e-5, atol=2e-6)
    np.testing.assert_allclose(resized, REF["chan"], rtol=2e-5, atol=2e-6)


def test_some_scale_and_translate_as_jax():
    _check_scale_and_translate(["lanczos3|True", "cubic-pytorch|False", "area|True"])


@pytest.mark.slow
def test_every_recorded_scale_and_translate_as_jax():
    _check_scale_and_translate(list(REF["st"]))


def _check_grads(method):
    w = np.asarray(REF["w"], np.float32)

    def loss(x, s, t):
        return jnp.sum(image.scale_and_translate(x, (5, 4), (0, 1), s, t, method) * w)

    def both(x, s, t):
        return (spmdc.grad(loss, argnums=(0, 1, 2))(x, s, t),
                spmdc.grad(lambda x: jnp.sum(image.resize(x, (5, 4), method) * w))(x))
    grads, resize_grad = spmdc.jit(both)(IMG, SCALE, TRANS)
    for got, want in zip(grads, REF["grad|" + method], strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(resize_grad, REF["rgrad|" + method], rtol=1e-4, atol=1e-5)


def test_grads_as_jax():
    _check_grads("lanczos3")


@pytest.mark.slow
@pytest.mark.parametrize("method", ["linear", "cubic", "area", "cubic-pytorch"])
def test_more_grads_as_jax(method):
    _check_grads(method)


def test_dtypes_and_vmap():
    ints = (IMG * 100).astype(np.int32)
    dtype, want = REF["int_linear"]

    def run(x, y):
        return (image.resize(x, (3, 9), "nearest"),
                image.resize(x, (3, 9), image.ResizeMethod.LINEAR),
                spmdc.vmap(lambda y: image.resize(y, (3, 9), "lanczos3"))(jnp.stack([y, y])))
    nearest, linear, batched = spmdc.jit(run)(ints, IMG)
    assert nearest.dtype == np.int32
    np.testing.assert_array_equal(nearest, REF["int_nearest"])
    assert linear.dtype == np.dtype(dtype)
    np.testing.assert_allclose(linear, want, rtol=2e-5)
    np.testing.assert_allclose(batched[1], REF["resize"]["lanczos3|True|3x9"], rtol=2e-5,
                               atol=2e-6)


def test_bad_input_raises_jaxs_types():
    errors = REF["errors"]
    with pytest.raises(ValueError, match="shape must have length"):
        image.resize(IMG, (3,), "linear")
    with pytest.raises(ValueError, match='Unknown resize method "bogus"'):
        image.resize(IMG, (3, 3), "bogus")
    with pytest.raises(ValueError, match="Nearest neighbor"):
        image.scale_and_translate(IMG, (3, 3), (0, 1), SCALE, TRANS, "nearest")
    with pytest.raises(TypeError, match="shape must be a sequence of ints"):
        image.resize(IMG, (3.0, 3), "linear")
    # JAX fails an assert on a method that is neither a name nor a ResizeMethod.
    with pytest.raises(TypeError, match="ResizeMethod"):
        image.resize(IMG, (3, 3), 1)
    with pytest.raises(ValueError, match="one entry per spatial dimension"):
        image.scale_and_translate(IMG, (3, 3), (0, 1), SCALE[:1], TRANS, "linear")
    for key in ("bad_len", "bad_method", "st_nearest"):
        assert errors[key].startswith("ValueError"), key
    assert errors["float_shape"].startswith("TypeError")
