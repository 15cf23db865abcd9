"""Neural-network layers as ``(init_fun, apply_fun)`` pairs, JAX's
``jax.example_libraries.stax`` on spmdc.

``init_fun(rng, input_shape) -> (output_shape, params)`` and ``apply_fun(params, inputs,
**kwargs) -> outputs``; combinators (``serial``, ``parallel``, ``FanOut`` ...) build
networks from layers. Keys are split as JAX's stax splits them, so the same key gives
JAX's parameters and dropout masks.

Convolution and pooling layers (``GeneralConv``/``Conv``, ``GeneralConvTranspose``/
``ConvTranspose``/``Conv1DTranspose``, ``MaxPool``, ``AvgPool``, ``SumPool``) stand on
``lax.conv_general_dilated``, ``lax.conv_transpose`` and ``lax.reduce_window``.
"""
from __future__ import annotations

import math
from typing import Any

import spmdc.numpy as jnp
from spmdc import lax, random
from spmdc.nn import (
    elu,
    gelu,
    leaky_relu,
    log_softmax,
    relu,
    selu,
    sigmoid,
    softmax,
    softplus,
    standardize,
)
from spmdc.nn.initializers import glorot_normal, normal, ones, zeros

glorot = glorot_normal
randn = normal
logsoftmax = log_softmax


# --- layers -------------------------------------------------------------------------------------

_GLOROT_NORMAL, _NORMAL = glorot_normal(), normal()     # JAX's defaults for Dense


def Dense(out_dim: int, W_init: Any = _GLOROT_NORMAL, b_init: Any = _NORMAL) -> tuple:
    """A fully connected layer: ``inputs @ W + b``."""
    def init_fun(rng, input_shape):
        output_shape = tuple(input_shape[:-1]) + (out_dim,)
        k1, k2 = random.split(rng)
        W, b = W_init(k1, (input_shape[-1], out_dim)), b_init(k2, (out_dim,))
        return output_shape, (W, b)

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        return jnp.dot(inputs, W) + b
    return init_fun, apply_fun


def BatchNorm(axis: Any = (0, 1, 2), epsilon: float = 1e-5, center: bool = True,
              scale: bool = True, beta_init: Any = zeros, gamma_init: Any = ones) -> tuple:
    """Normalise over ``axis`` (the batch statistics), then scale and shift."""
    axis = (axis,) if isinstance(axis, int) else tuple(axis)

    def init_fun(rng, input_shape):
        shape = tuple(d for i, d in enumerate(input_shape) if i not in axis)
        k1, k2 = random.split(rng)
        beta = beta_init(k1, shape) if center else ()
        gamma = gamma_init(k2, shape) if scale else ()
        return input_shape, (beta, gamma)

    def apply_fun(params, x, **kwargs):
        beta, gamma = params
        expand = tuple(None if i in axis else slice(None) for i in range(jnp.ndim(x)))
        z = standardize(x, axis, epsilon=epsilon)
        if center and scale:
            return gamma[expand] * z + beta[expand]
        if center:
            return z + beta[expand]
        if scale:
            return gamma[expand] * z
        return z
    return init_fun, apply_fun


def elementwise(fun: Any, **fun_kwargs: Any) -> tuple:
    """A layer without parameters applying ``fun`` to its inputs."""
    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        return fun(inputs, **fun_kwargs)
    return init_fun, apply_fun


Tanh = elementwise(jnp.tanh)
Relu = elementwise(relu)
Exp = elementwise(jnp.exp)
LogSoftmax = elementwise(log_softmax, axis=-1)
Softmax = elementwise(softmax, axis=-1)
Softplus = elementwise(softplus)
Sigmoid = elementwise(sigmoid)
Elu = elementwise(elu)
LeakyRelu = elementwise(leaky_relu)
Selu = elementwise(selu)
Gelu = elementwise(gelu)


def _flatten() -> tuple:
    def init_fun(rng, input_shape):
        return (input_shape[0], math.prod(input_shape[1:])), ()

    def apply_fun(params, inputs, **kwargs):
        return jnp.reshape(inputs, (inputs.shape[0], -1))
    return init_fun, apply_fun


Flatten = _flatten()        # a layer, not a constructor, as in JAX


def _identity() -> tuple:
    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        return inputs
    return init_fun, apply_fun


Identity = _identity()


def FanOut(num: int) -> tuple:
    """``num`` copies of the input (a list), for ``parallel`` branches."""
    def init_fun(rng, input_shape):
        return [input_shape] * num, ()

    def apply_fun(params, inputs, **kwargs):
        return [inputs] * num
    return init_fun, apply_fun


def _fan_in_sum() -> tuple:
    def init_fun(rng, input_shape):
        return input_shape[0], ()

    def apply_fun(params, inputs, **kwargs):
        return sum(inputs)
    return init_fun, apply_fun


FanInSum = _fan_in_sum()


def FanInConcat(axis: int = -1) -> tuple:
    """Concatenate a list of inputs along ``axis``."""
    def init_fun(rng, input_shape):
        ax = axis % len(input_shape[0])
        concat_size = sum(shape[ax] for shape in input_shape)
        out_shape = tuple(input_shape[0][:ax]) + (concat_size,) + tuple(input_shape[0][ax + 1:])
        return out_shape, ()

    def apply_fun(params, inputs, **kwargs):
        return jnp.concatenate(inputs, axis)
    return init_fun, apply_fun


def Dropout(rate: float, mode: str = "train") -> tuple:
    """Keep each input with probability ``rate`` (scaled by ``1/rate``) in ``'train'``
    mode; the identity in any other mode. ``apply_fun`` needs ``rng=``."""
    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.get("rng", None)
        if rng is None:
            raise ValueError("Dropout layer requires apply_fun to be called with a PRNG key "
                             "argument. That is, instead of `apply_fun(params, inputs)`, call "
                             "it like `apply_fun(params, inputs, rng)` where `rng` is a PRNG "
                             "key (e.g. from `jax.random.key`).")
        if mode == "train":
            keep = random.bernoulli(rng, rate, inputs.shape)
            return jnp.where(keep, inputs / rate, 0)
        return inputs
    return init_fun, apply_fun


# --- combinators --------------------------------------------------------------------------------

def serial(*layers: tuple) -> tuple:
    """Layers applied one after another."""
    nlayers = len(layers)
    init_funs, apply_funs = zip(*layers, strict=True) if layers else ((), ())

    def init_fun(rng, input_shape):
        params = []
        for init in init_funs:
            rng, layer_rng = random.split(rng)
            input_shape, param = init(layer_rng, input_shape)
            params.append(param)
        return input_shape, params

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.pop("rng", None)
        rngs = random.split(rng, nlayers) if rng is not None else (None,) * nlayers
        for fun, param, layer_rng in zip(apply_funs, params, rngs, strict=True):
            inputs = fun(param, inputs, rng=layer_rng, **kwargs)
        return inputs
    return init_fun, apply_fun


def parallel(*layers: tuple) -> tuple:
    """Layers applied to the matching elements of a list of inputs (see ``FanOut``)."""
    nlayers = len(layers)
    init_funs, apply_funs = zip(*layers, strict=True) if layers else ((), ())

    def init_fun(rng, input_shape):
        rngs = random.split(rng, nlayers)
        outs = [init(r, shape) for init, r, shape in zip(init_funs, rngs, input_shape,
                                                         strict=True)]
        return zip(*outs, strict=True)

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.pop("rng", None)
        rngs = random.split(rng, nlayers) if rng is not None else (None,) * nlayers
        return [f(p, x, rng=r, **kwargs)
                for f, p, x, r in zip(apply_funs, params, inputs, rngs, strict=True)]
    return init_fun, apply_fun


def shape_dependent(make_layer: Any) -> tuple:
    """A layer built from the input's shape by ``make_layer(shape)``."""
    def init_fun(rng, input_shape):
        return make_layer(input_shape)[0](rng, input_shape)

    def apply_fun(params, inputs, **kwargs):
        return make_layer(inputs.shape)[1](params, inputs, **kwargs)
    return init_fun, apply_fun


# --- convolution and pooling ----------------------------------------------------------------------

_CONV_BIAS_INIT = normal(1e-6)                 # JAX's default bias initialiser for convs


def _conv_layer(transpose: bool):
    def layer(dimension_numbers: Any, out_chan: int, filter_shape: Any, strides: Any = None,
              padding: Any = "VALID", W_init: Any = None, b_init: Any = _CONV_BIAS_INIT
              ) -> tuple:
        lhs_spec, rhs_spec, out_spec = dimension_numbers
        one = (1,) * len(filter_shape)
        strides = strides or one
        W_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))

        def init_fun(rng, input_shape):
            sizes = iter(filter_shape)
            kernel_shape = [out_chan if c == "O" else input_shape[lhs_spec.index("C")]
                            if c == "I" else next(sizes) for c in rhs_spec]
            shape_of = lax.conv_transpose_shape_tuple if transpose else \
                lax.conv_general_shape_tuple
            output_shape = shape_of(input_shape, kernel_shape, strides, padding,
                                    dimension_numbers)
            bias_shape = [out_chan if c == "C" else 1 for c in out_spec]
            k1, k2 = random.split(rng)
            return output_shape, (W_init(k1, kernel_shape), b_init(k2, bias_shape))

        def apply_fun(params, inputs, **kwargs):
            W, b = params
            if transpose:
                return lax.conv_transpose(inputs, W, strides, padding,
                                          dimension_numbers=dimension_numbers) + b
            return lax.conv_general_dilated(inputs, W, strides, padding, one, one,
                                            dimension_numbers=dimension_numbers) + b
        return init_fun, apply_fun
    return layer


GeneralConv = _conv_layer(transpose=False)
GeneralConv.__doc__ = "A convolution layer with the given dimension numbers (spec strings)."
GeneralConvTranspose = _conv_layer(transpose=True)
GeneralConvTranspose.__doc__ = "A transposed-convolution layer (lax.conv_transpose)."


def Conv(out_chan: int, filter_shape: Any, strides: Any = None, padding: Any = "VALID",
         W_init: Any = None, b_init: Any = _CONV_BIAS_INIT) -> tuple:
    """A 2-d convolution layer over NHWC inputs with an HWIO kernel."""
    return GeneralConv(("NHWC", "HWIO", "NHWC"), out_chan, filter_shape, strides, padding,
                       W_init, b_init)


def ConvTranspose(out_chan: int, filter_shape: Any, strides: Any = None,
                  padding: Any = "VALID", W_init: Any = None,
                  b_init: Any = _CONV_BIAS_INIT) -> tuple:
    """A 2-d transposed-convolution layer over NHWC inputs with an HWIO kernel."""
    return GeneralConvTranspose(("NHWC", "HWIO", "NHWC"), out_chan, filter_shape, strides,
                                padding, W_init, b_init)


def Conv1DTranspose(out_chan: int, filter_shape: Any, strides: Any = None,
                    padding: Any = "VALID", W_init: Any = None,
                    b_init: Any = _CONV_BIAS_INIT) -> tuple:
    """A 1-d transposed-convolution layer over NHC inputs with an HIO kernel."""
    return GeneralConvTranspose(("NHC", "HIO", "NHC"), out_chan, filter_shape, strides,
                                padding, W_init, b_init)


def _pooling_layer(reducer: Any, init_val: float, average: bool = False):
    def PoolingLayer(window_shape: Any, strides: Any = None, padding: Any = "VALID",
                     spec: Any = None) -> tuple:
        spatial_window = tuple(window_shape)
        spatial_strides = tuple(strides or (1,) * len(spatial_window))
        non_spatial = (0, len(spatial_window) + 1) if spec is None else \
            (spec.index("N"), spec.index("C"))
        dims, steps = spatial_window, spatial_strides
        for i in sorted(non_spatial):
            dims = dims[:i] + (1,) + dims[i:]
            steps = steps[:i] + (1,) + steps[i:]

        def init_fun(rng, input_shape):
            pads = lax.padtype_to_pads(input_shape, dims, steps, padding) \
                if isinstance(padding, str) else padding
            return lax.reduce_window_shape_tuple(input_shape, dims, steps, pads), ()

        def apply_fun(params, inputs, **kwargs):
            out = lax.reduce_window(inputs, init_val, reducer, dims, steps, padding)
            if not average:
                return out
            # Divide by the number of input elements in each window (padding excluded).
            spatial = tuple(d for i, d in enumerate(inputs.shape) if i not in non_spatial)
            sizes = lax.reduce_window(jnp.ones(spatial, inputs.dtype), 0.0, lax.add,
                                      spatial_window, spatial_strides, padding)
            for i in sorted(non_spatial):
                sizes = jnp.expand_dims(sizes, i)
            return out / sizes
        return init_fun, apply_fun
    return PoolingLayer


MaxPool = _pooling_layer(lax.max, -math.inf)
MaxPool.__doc__ = "Max pooling over spatial windows (NHWC unless ``spec`` says otherwise)."
SumPool = _pooling_layer(lax.add, 0.0)
SumPool.__doc__ = "Sum pooling over spatial windows."
AvgPool = _pooling_layer(lax.add, 0.0, average=True)
AvgPool.__doc__ = "Average pooling over spatial windows (the padding is not counted)."
