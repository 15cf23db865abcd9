"""The conv case set: JAX 0.10.2's convolutions, conv transposes, patches, reduce_window,
jnp.convolve/correlate and stax's conv and pooling layers, recorded into
tests/data/conv_reference.npz for tests/lax/test_conv.py, tests/lax/test_windowed.py and
tests/example_libraries/test_stax.py (which replay the cases on spmdc and never import jax).
Each case stores its inputs, its keyword arguments (as JSON, under ``NAME.kwargs``), its
output and the gradients of ``sum(out * weights)``.
"""
from __future__ import annotations

import json
import types

import numpy as np

from recorders import write_arrays

CONV = {   # name: (lhs shape, rhs shape, kwargs of conv_general_dilated)
    "nchw_valid": ((2, 3, 6, 5), (4, 3, 3, 2), dict(window_strides=(1, 1), padding="VALID")),
    "nhwc_same_stride": ((2, 7, 6, 3), (3, 3, 3, 4), dict(
        window_strides=(2, 2), padding="SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))),
    "same_lower_rhs_dilation": ((1, 2, 7, 6), (3, 2, 3, 2), dict(
        window_strides=(1, 2), padding="SAME_LOWER", rhs_dilation=(2, 1))),
    "pairs_lhs_dilation": ((2, 2, 4, 5), (2, 2, 2, 3), dict(
        window_strides=(1, 1), padding=((1, 2), (-1, 1)), lhs_dilation=(2, 2))),
    "feature_groups": ((2, 4, 5, 5), (6, 2, 2, 2), dict(
        window_strides=(1, 1), padding="SAME", feature_group_count=2)),
    "batch_groups": ((4, 3, 5, 4), (6, 3, 2, 2), dict(
        window_strides=(1, 1), padding="VALID", batch_group_count=2)),
    "conv1d_nwc": ((2, 9, 3), (3, 3, 2), dict(
        window_strides=(2,), padding="SAME", dimension_numbers=("NWC", "WIO", "NWC"))),
    "conv3d": ((1, 2, 4, 4, 3), (2, 2, 2, 2, 2), dict(window_strides=(1, 2, 1),
                                                      padding="SAME")),
    "mixed_layout": ((5, 2, 3, 4), (3, 3, 3, 2), dict(
        window_strides=(1, 1), padding="SAME", dimension_numbers=("HNCW", "IHWO", "CWNH"))),
    "dimension_numbers_object": ((2, 5, 6, 3), (2, 2, 3, 4), dict(
        window_strides=(1, 1), padding="VALID", dimension_numbers=[[0, 3, 1, 2], [3, 2, 0, 1],
                                                                   [0, 3, 1, 2]])),
}

CONV_TRANSPOSE = {
    "same": ((2, 4, 5, 3), (3, 3, 3, 2), dict(strides=(2, 2), padding="SAME")),
    "valid": ((2, 4, 5, 3), (3, 2, 3, 2), dict(strides=(2, 1), padding="VALID")),
    "pairs": ((1, 4, 4, 2), (3, 3, 2, 2), dict(strides=(2, 2), padding=((1, 2), (2, 1)))),
    "transpose_kernel": ((2, 4, 5, 3), (3, 3, 2, 3), dict(strides=(2, 2), padding="SAME",
                                                          transpose_kernel=True)),
    "consistent": ((1, 4, 4, 2), (3, 3, 2, 2), dict(strides=(2, 2), padding=((1, 1), (0, 1)),
                                                    use_consistent_padding=True)),
    "rhs_dilation": ((1, 5, 4, 2), (2, 3, 2, 3), dict(strides=(1, 2), padding="SAME",
                                                      rhs_dilation=(2, 1))),
}

REDUCE_WINDOW = {   # name: (operand shape, kind, kwargs)
    "max_2x2": ((2, 6, 5, 3), "max", dict(window_dimensions=(1, 2, 2, 1),
                                          window_strides=(1, 2, 2, 1), padding="VALID")),
    "max_same": ((2, 5, 5, 2), "max", dict(window_dimensions=(1, 3, 3, 1),
                                           window_strides=(1, 2, 2, 1), padding="SAME")),
    "sum_pairs": ((3, 7), "sum", dict(window_dimensions=(2, 3), window_strides=(1, 2),
                                      padding=((1, 0), (1, 2)))),
    "min_same_lower": ((6, 5), "min", dict(window_dimensions=(3, 2), window_strides=(2, 1),
                                           padding="SAME_LOWER")),
    "sum_dilations": ((5, 6), "sum", dict(window_dimensions=(2, 2), window_strides=(1, 1),
                                          padding=((0, 1), (1, 1)), base_dilation=(2, 1),
                                          window_dilation=(1, 2))),
    "max_window_dilation": ((7, 6), "max", dict(window_dimensions=(2, 3), window_strides=(1, 1),
                                                padding="VALID", window_dilation=(2, 2))),
    "prod_general": ((4, 6), "prod", dict(window_dimensions=(2, 2), window_strides=(1, 2),
                                          padding="VALID")),
}

PATCHES = {   # conv_general_dilated_patches: name: (operand shape, kwargs)
    "patches_nchw": ((2, 3, 5, 6), dict(filter_shape=(2, 3), window_strides=(1, 2),
                                        padding="SAME")),
    "patches_nhwc": ((1, 6, 5, 2), dict(filter_shape=(3, 2), window_strides=(2, 1),
                                        padding="VALID", rhs_dilation=(1, 2),
                                        dimension_numbers=("NHWC", "HWIO", "NHWC"))),
}

CONVOLVE = ((7, 3), (4, 6), (5, 5), (1, 3))   # jnp.convolve / correlate: (len(a), len(v))
CONVOLVE_MODES = ("full", "same", "valid")

STAX_LAYERS = {   # name: (stax constructor, its arguments, its keywords, input shape)
    "conv": ("Conv", (4, (3, 3)), dict(padding="SAME"), (2, 6, 6, 3)),
    "conv_strided": ("Conv", (5, (2, 3)), dict(strides=(2, 1), padding="VALID"), (1, 7, 6, 2)),
    "conv_nchw": ("GeneralConv", (("NCHW", "OIHW", "NCHW"), 3, (2, 2)), {}, (2, 2, 5, 5)),
    "conv_transpose": ("ConvTranspose", (3, (3, 3)), dict(strides=(2, 2), padding="SAME"),
                       (2, 4, 4, 2)),
    "conv1d_transpose": ("Conv1DTranspose", (2, (3,)), dict(padding="VALID"), (2, 5, 3)),
    "max_pool": ("MaxPool", ((2, 2),), dict(strides=(2, 2)), (2, 6, 6, 3)),
    "max_pool_same": ("MaxPool", ((3, 3),), dict(strides=(2, 2), padding="SAME"), (2, 5, 5, 2)),
    "avg_pool": ("AvgPool", ((2, 2),), {}, (2, 5, 5, 3)),
    "avg_pool_same": ("AvgPool", ((3, 3),), dict(strides=(2, 2), padding="SAME"), (1, 5, 6, 2)),
    "sum_pool": ("SumPool", ((2, 3),), dict(strides=(1, 2)), (2, 5, 6, 2)),
    "max_pool_nchw": ("MaxPool", ((2, 2),), dict(spec="NCHW"), (2, 3, 4, 4)),
}


def _grads(f, args):
    import jax
    import jax.numpy as jnp
    out = f(*args)
    weights = np.linspace(-1.0, 1.5, np.size(out)).reshape(np.shape(out)).astype(out.dtype)
    grads = jax.grad(lambda *a: jnp.sum(f(*a) * weights), argnums=tuple(range(len(args))))(*args)
    return np.asarray(out), weights, [np.asarray(g) for g in grads]


def _record_conv(out: dict) -> None:
    import jax.numpy as jnp
    from jax import lax
    rng = np.random.default_rng(0)
    for table, fn in (("conv", lax.conv_general_dilated), ("conv_transpose", lax.conv_transpose)):
        for name, (xs, ws, kwargs) in (CONV if table == "conv" else CONV_TRANSPOSE).items():
            x = rng.normal(size=xs).astype(np.float32)
            w = rng.normal(size=ws).astype(np.float32)
            kw = dict(kwargs)
            if name == "dimension_numbers_object":
                kw["dimension_numbers"] = lax.ConvDimensionNumbers(*map(tuple, kw[
                    "dimension_numbers"]))
            value, weights, (gx, gw) = _grads(lambda a, b, kw=kw: fn(a, b, **kw), (x, w))
            key = f"{table}.{name}"
            out.update({f"{key}.x": x, f"{key}.w": w, f"{key}.out": value,
                        f"{key}.weights": weights, f"{key}.gx": gx, f"{key}.gw": gw,
                        f"{key}.kwargs": np.array(json.dumps(kwargs))})
    # conv_general_dilated_patches
    for name, (xs, kwargs) in PATCHES.items():
        x = rng.normal(size=xs).astype(np.float32)
        out[f"patches.{name}.x"] = x
        out[f"patches.{name}.kwargs"] = np.array(json.dumps(kwargs))
        out[f"patches.{name}.out"] = np.asarray(lax.conv_general_dilated_patches(x, **kwargs))
    # preferred_element_type: int8 operands accumulating in int32
    x = rng.integers(-100, 100, (1, 2, 5, 5)).astype(np.int8)
    w = rng.integers(-100, 100, (3, 2, 3, 3)).astype(np.int8)
    out["conv.int8_preferred.x"], out["conv.int8_preferred.w"] = x, w
    out["conv.int8_preferred.out"] = np.asarray(lax.conv_general_dilated(
        x, w, (1, 1), "SAME", preferred_element_type=jnp.int32))


def _record_reduce_window(out: dict) -> None:
    import jax.numpy as jnp
    from jax import lax
    rng = np.random.default_rng(1)
    for name, (shape, kind, kwargs) in REDUCE_WINDOW.items():
        x = rng.normal(size=shape).astype(np.float32)
        if kind == "max":
            def f(a, kw=kwargs):
                return lax.reduce_window(a, -jnp.inf, lax.max, **kw)
        elif kind == "min":
            def f(a, kw=kwargs):
                return lax.reduce_window(a, jnp.inf, lax.min, **kw)
        elif kind == "sum":
            def f(a, kw=kwargs):
                return lax.reduce_window(a, 0.0, lax.add, **kw)
        else:
            def f(a, kw=kwargs):
                return lax.reduce_window(a, 1.0, lax.mul, **kw)
        key = f"reduce_window.{name}"
        value = np.asarray(f(x))
        out.update({f"{key}.x": x, f"{key}.out": value, f"{key}.kind": np.array(kind),
                    f"{key}.kwargs": np.array(json.dumps(kwargs))})
        if kind in ("sum", "max", "min") and not (kind != "sum" and "window_dilation" in kwargs):
            value, weights, (g,) = _grads(f, (x,))
            out.update({f"{key}.weights": weights, f"{key}.gx": g})


def _record_convolve(out: dict) -> None:
    import jax.numpy as jnp
    rng = np.random.default_rng(2)
    for n, m in CONVOLVE:
        a = rng.normal(size=n).astype(np.float32)
        v = rng.normal(size=m).astype(np.float32)
        for mode in CONVOLVE_MODES:
            key = f"convolve.{n}.{m}.{mode}"
            out[f"{key}.a"], out[f"{key}.v"] = a, v
            out[f"{key}.convolve"] = np.asarray(jnp.convolve(a, v, mode=mode))
            out[f"{key}.correlate"] = np.asarray(jnp.correlate(a, v, mode=mode))


def _record_stax(out: dict) -> None:
    import jax
    from jax.example_libraries import stax
    key = jax.random.PRNGKey(0)
    rng = np.random.default_rng(3)
    for name, (constructor, args, kwargs, shape) in STAX_LAYERS.items():
        init, apply = getattr(stax, constructor)(*args, **kwargs)
        out_shape, params = init(key, shape)
        x = rng.normal(size=shape).astype(np.float32)
        y = apply(params, x)
        out[f"stax.{name}.x"] = x
        out[f"stax.{name}.out_shape"] = np.array(out_shape)
        out[f"stax.{name}.y"] = np.asarray(y)
        for k, p in enumerate(jax.tree_util.tree_leaves(params)):
            out[f"stax.{name}.param{k}"] = np.asarray(p)


def record_conv(cases: types.ModuleType, paths, mode) -> None:
    write_arrays(paths[0], [_record_conv, _record_reduce_window, _record_convolve, _record_stax])


def conv_names(cases: types.ModuleType, mode) -> list[str]:
    return ([f"conv.{name}" for name in CONV]
            + [f"conv_transpose.{name}" for name in CONV_TRANSPOSE]
            + [f"patches.{name}" for name in PATCHES] + ["conv.int8_preferred"]
            + [f"reduce_window.{name}" for name in REDUCE_WINDOW]
            + [f"convolve.{n}.{m}.{how}" for n, m in CONVOLVE for how in CONVOLVE_MODES]
            + [f"stax.{name}" for name in STAX_LAYERS])
