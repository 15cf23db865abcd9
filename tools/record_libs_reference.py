"""Record JAX 0.10.2's values for spmdc.nn / spmdc.scipy / spmdc.example_libraries tests.

Run once with the ``bench`` extra installed (``python tools/record_libs_reference.py``);
it writes tests/data/libs_reference.npz. The tests read that file and never import jax.
"""
from __future__ import annotations

import pathlib

import jax
import jax.numpy as jnp
import numpy as np

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "data" / "libs_reference.npz"

# Shared with tests/test_nn.py: the inputs the activations are recorded on.
X = np.array([-1e4, -30., -6., -3., -1., -0.5, -1e-3, 0., 1e-3, 0.5, 1., 3., 6., 30., 1e4],
             np.float32)
W = np.linspace(-1.0, 2.0, X.size).astype(np.float32)   # weights for <f(x), w> gradients

UNARY = ["relu", "relu6", "softplus", "sigmoid", "log_sigmoid", "silu", "elu", "selu", "celu",
         "soft_sign", "hard_tanh", "leaky_relu", "hard_sigmoid", "hard_silu", "mish",
         "squareplus", "sparse_plus", "sparse_sigmoid", "softmax", "log_softmax", "standardize"]


def record_nn(out: dict) -> None:
    x = jnp.asarray(X)
    fns = {name: getattr(jax.nn, name) for name in UNARY}
    fns["gelu_tanh"] = lambda v: jax.nn.gelu(v, approximate=True)
    fns["gelu_erf"] = lambda v: jax.nn.gelu(v, approximate=False)
    fns["logsumexp"] = lambda v: jax.nn.logsumexp(v)
    for name, f in fns.items():
        out[f"nn.{name}"] = np.asarray(f(x))
        out[f"nn.{name}.grad"] = np.asarray(jax.grad(lambda v, f=f: jnp.sum(f(v) * W))(x))
    m = np.array([[1., 2., 3., 4.], [0.5, -1., 7., 2.], [3., 3., 3., 3.]], np.float32)
    mask = np.array([[True, False, True, True], [True, True, False, False],
                     [False, False, False, True]])
    out["nn.softmax.axis0"] = np.asarray(jax.nn.softmax(m, axis=0))
    out["nn.softmax.where"] = np.asarray(jax.nn.softmax(m, where=mask))
    out["nn.log_softmax.where"] = np.asarray(jax.nn.log_softmax(m, where=mask))
    out["nn.logsumexp.where"] = np.asarray(jax.nn.logsumexp(m, axis=1, where=mask))
    out["nn.standardize.where"] = np.asarray(jax.nn.standardize(m, axis=1, where=mask))
    out["nn.standardize.stable"] = np.asarray(jax.nn.standardize(m, axis=0, algorithm="stable"))
    out["nn.glu"] = np.asarray(jax.nn.glu(m, axis=1))
    ints = jnp.array([1, 7, -2])
    for name in ["relu", "relu6", "hard_tanh", "elu", "softmax", "log_softmax", "standardize",
                 "leaky_relu", "celu"]:
        out[f"nn.int.{name}"] = np.asarray(getattr(jax.nn, name)(ints))


def main() -> None:
    out: dict = {}
    record_nn(out)
    OUT.parent.mkdir(exist_ok=True)
    np.savez_compressed(OUT, **out)
    print(f"wrote {len(out)} arrays to {OUT}")


if __name__ == "__main__":
    main()
