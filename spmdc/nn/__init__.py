"""``spmdc.nn``: activation functions, softmax and friends, dot-product attention,
block-scaled products and ``initializers`` (JAX's ``jax.nn``)."""
from spmdc.nn import initializers
from spmdc.nn.attention import dot_product_attention
from spmdc.nn.functions import (
    celu,
    elu,
    gelu,
    glu,
    hard_sigmoid,
    hard_silu,
    hard_swish,
    hard_tanh,
    identity,
    leaky_relu,
    log1mexp,
    log_sigmoid,
    log_softmax,
    logmeanexp,
    mish,
    one_hot,
    relu,
    relu6,
    selu,
    sigmoid,
    silu,
    soft_sign,
    softmax,
    softplus,
    sparse_plus,
    sparse_sigmoid,
    squareplus,
    standardize,
    swish,
)
from spmdc.nn.scaled_matmul import (
    get_scaled_dot_general_config,
    scaled_dot_general,
    scaled_matmul,
)
from spmdc.numpy import tanh
from spmdc.numpy.reductions import logsumexp

__all__ = ["initializers", "tanh", "logsumexp", "dot_product_attention",
           "celu", "elu", "gelu", "glu", "hard_sigmoid", "hard_silu", "hard_swish",
           "hard_tanh", "identity", "leaky_relu", "log1mexp", "log_sigmoid", "log_softmax",
           "logmeanexp", "mish", "one_hot", "relu", "relu6", "selu", "sigmoid", "silu",
           "soft_sign", "softmax", "softplus", "sparse_plus", "sparse_sigmoid", "squareplus",
           "standardize", "swish", "get_scaled_dot_general_config", "scaled_dot_general",
           "scaled_matmul"]
