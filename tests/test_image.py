"""spmdc.image (jax.image) against JAX 0.10.2's results, recorded by `tools/record.py
image` from tests/image_cases.py in tests/data/image_reference.json: resize by every
method, with and without antialiasing, down, up and to the same size;
scale_and_translate; gradients with respect to the image, the scale and the translation;
dtypes; JAX's exception types for bad input."""
from __future__ import annotations

import image_cases
import numpy as np
import oracle
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc import image

RECORDED = oracle.recorded_cases("image_reference.json")
IMG, SCALE, TRANS = image_cases.IMG, image_cases.SCALE, image_cases.TRANS
METHODS = image_cases.METHODS


def _recorded(prefix):
    """The recorded cases named ``prefix.key``, by key."""
    return {name.split(".", 1)[1]: value for name, value in RECORDED.items()
            if name.startswith(prefix + ".")}


def test_every_case_is_recorded():
    assert sorted(image_cases.cases(spmdc)) == sorted(RECORDED)


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
        np.testing.assert_allclose(got, RECORDED[f"resize.{key}"], rtol=2e-5, atol=2e-6,
                                   err_msg=key)


def test_resize_as_jax():
    # Every method, down and up, with and without antialiasing (the rest: slow).
    _check_resizes([f"{m}|{aa}|{shape}" for m, (aa, shape) in zip(
        METHODS, [("True", "3x9"), ("False", "7x2"), ("True", "7x2"), ("False", "3x9"),
                  ("True", "1x13"), ("False", "7x2"), ("True", "7x2")], strict=True)])


@pytest.mark.slow
def test_every_recorded_resize_as_jax():
    _check_resizes(_recorded("resize"))


def _check_scale_and_translate(keys):
    def run(x, s, t):
        return [image_cases.scale_and_translate(spmdc, key, x, s, t) for key in keys]
    for key, got in zip(keys, spmdc.jit(run)(IMG, SCALE, TRANS), strict=True):
        np.testing.assert_allclose(got, RECORDED[f"st.{key}"], rtol=2e-5, atol=2e-6,
                                   err_msg=key)


def test_scale_and_translate_as_jax():
    img3 = image_cases.IMG3

    def run(x):
        return (image.scale_and_translate(x, (3, 6, 2), (-2,), jnp.array([1.5]),
                                          jnp.array([0.25]), "triangle"),
                image.resize(x, (5, 2, 2), "bicubic"))
    shifted, resized = spmdc.jit(run)(img3)
    np.testing.assert_allclose(shifted, RECORDED["st1"], rtol=2e-5, atol=2e-6)
    np.testing.assert_allclose(resized, RECORDED["chan"], rtol=2e-5, atol=2e-6)


def test_some_scale_and_translate_as_jax():
    _check_scale_and_translate(["lanczos3|True", "cubic-pytorch|False", "area|True"])


@pytest.mark.slow
def test_every_recorded_scale_and_translate_as_jax():
    _check_scale_and_translate(list(_recorded("st")))


def _check_grads(method):
    grads, resize_grad = spmdc.jit(lambda x, s, t: image_cases.grads(spmdc, method, x, s, t))(
        IMG, SCALE, TRANS)
    for got, want in zip(grads, RECORDED["grad|" + method], strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(resize_grad, RECORDED["rgrad|" + method], rtol=1e-4, atol=1e-5)


def test_grads_as_jax():
    _check_grads("lanczos3")


@pytest.mark.slow
@pytest.mark.parametrize("method", ["linear", "cubic", "area", "cubic-pytorch"])
def test_more_grads_as_jax(method):
    _check_grads(method)


def test_dtypes_and_vmap():
    ints = image_cases.INTS
    dtype, want = RECORDED["int_linear"]

    def run(x, y):
        return (image.resize(x, (3, 9), "nearest"),
                image.resize(x, (3, 9), image.ResizeMethod.LINEAR),
                spmdc.vmap(lambda y: image.resize(y, (3, 9), "lanczos3"))(jnp.stack([y, y])))
    nearest, linear, batched = spmdc.jit(run)(ints, IMG)
    assert nearest.dtype == np.int32
    np.testing.assert_array_equal(nearest, RECORDED["int_nearest"])
    assert linear.dtype == np.dtype(dtype)
    np.testing.assert_allclose(linear, want, rtol=2e-5)
    np.testing.assert_allclose(batched[1], RECORDED["resize.lanczos3|True|3x9"], rtol=2e-5,
                               atol=2e-6)


def test_bad_input_raises_jaxs_types():
    errors = _recorded("errors")
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
