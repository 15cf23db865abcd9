"""jax.image's resize and scale_and_translate, run on spmdc and on JAX 0.10.2
(`tools/record.py image` records JAX's results in tests/data/image_reference.json;
tests/test_image.py compares): resize by every method, with and without antialiasing,
down, up and to the same size; scale_and_translate; gradients with respect to the image,
the scale and the translation; dtypes; and bad input (recorded as JAX's exception)."""
from __future__ import annotations

import importlib

import numpy as np

IMG = np.array([[0.417, 0.7203, 0.0001, 0.3023, 0.1468, 0.0923],
                [0.1863, 0.3456, 0.3968, 0.5388, 0.4192, 0.6852],
                [0.2045, 0.8781, 0.0274, 0.6705, 0.4173, 0.5587],
                [0.1404, 0.1981, 0.8007, 0.9683, 0.3134, 0.6923]], np.float32)
INTS = (IMG * 100).astype(np.int32)
IMG3 = np.array([[[0.103, 0.448], [0.909, 0.294], [0.288, 0.13], [0.019, 0.679]],
                 [[0.212, 0.266], [0.492, 0.053], [0.574, 0.147], [0.589, 0.7]],
                 [[0.102, 0.414], [0.694, 0.414], [0.05, 0.536], [0.664, 0.515]]],
                np.float32)
W = np.array([[0.876, 0.895, 0.085, 0.039], [0.17, 0.878, 0.098, 0.421],
              [0.958, 0.533, 0.692, 0.316], [0.687, 0.835, 0.018, 0.75],
              [0.989, 0.748, 0.28, 0.789]], np.float32)
SCALE = np.array([1.7, 0.6], np.float32)
TRANS = np.array([-0.4, 1.3], np.float32)
METHODS = ["nearest", "linear", "lanczos3", "lanczos5", "cubic", "cubic-pytorch", "area"]
SHAPES = [(3, 9), (7, 2), (4, 6), (1, 13)]
GRAD_METHODS = ["linear", "cubic", "lanczos3", "area", "cubic-pytorch"]


def resize_key(method, antialias, shape):
    return f"{method}|{antialias}|{shape[0]}x{shape[1]}"


def _module(lib, name):
    return importlib.import_module(f"{lib.__name__}.{name}")


def scale_and_translate(lib, key, x, s, t):
    """``key`` is "method|antialias"."""
    image = _module(lib, "image")
    method, antialias = key.split("|")
    return image.scale_and_translate(x, (5, 4), (0, 1), s, t,
                                     image.ResizeMethod.from_string(method),
                                     antialias=antialias == "True")


def grads(lib, method, x, s, t):
    """The gradients of a weighted sum of scale_and_translate's result with respect to the
    image, the scale and the translation, and of resize's with respect to the image."""
    image, jnp = _module(lib, "image"), _module(lib, "numpy")

    def loss(x, s, t):
        return jnp.sum(image.scale_and_translate(x, (5, 4), (0, 1), s, t, method) * W)
    return (lib.grad(loss, argnums=(0, 1, 2))(x, s, t),
            lib.grad(lambda x: jnp.sum(image.resize(x, (5, 4), method) * W))(x))


def errors(lib):
    """Bad input, each raised eagerly."""
    image = _module(lib, "image")
    return {
        "bad_len": lambda: image.resize(IMG, (3,), "linear"),
        "bad_method": lambda: image.resize(IMG, (3, 3), "bogus"),
        "st_nearest": lambda: image.scale_and_translate(IMG, (3, 3), (0, 1), SCALE, TRANS,
                                                        "nearest"),
        "float_shape": lambda: image.resize(IMG, (3.0, 3), "linear"),
        "method_int": lambda: image.resize(IMG, (3, 3), 1),
    }


def cases(lib):
    image = _module(lib, "image")
    out = {}
    for method in METHODS:
        for antialias in (True, False):
            for shape in SHAPES:
                out[f"resize.{resize_key(method, antialias, shape)}"] = (
                    lambda m=method, a=antialias, s=shape: image.resize(IMG, s, m, a))
            if method != "nearest":
                key = f"{method}|{antialias}"
                out[f"st.{key}"] = lambda key=key: scale_and_translate(lib, key, IMG, SCALE,
                                                                       TRANS)
    for method in GRAD_METHODS:
        out[f"grad|{method}"] = lambda m=method: grads(lib, m, IMG, SCALE, TRANS)[0]
        out[f"rgrad|{method}"] = lambda m=method: grads(lib, m, IMG, SCALE, TRANS)[1]
    out["int_nearest"] = lambda: image.resize(INTS, (3, 9), "nearest")
    out["int_linear"] = lambda: (lambda y: (y.dtype.name, y))(
        image.resize(INTS, (3, 9), image.ResizeMethod.LINEAR))
    out["st1"] = lambda: image.scale_and_translate(
        IMG3, (3, 6, 2), (-2,), np.array([1.5], np.float32), np.array([0.25], np.float32),
        "triangle")
    out["chan"] = lambda: image.resize(IMG3, (5, 2, 2), "bicubic")
    for key, call in errors(lib).items():
        out[f"errors.{key}"] = call
    return out
