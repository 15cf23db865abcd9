"""Gradients at zeros, ties and kinks, written once for spmdc and for JAX.

``cases(jax, jnp, cumprod)`` returns ``{name: (function, args)}``; each function returns
a pytree of gradients. `tools/record.py grad` runs them on JAX 0.10.2 and writes
tests/data/grad_reference.json; tests/transforms/test_grad_reference.py runs them on spmdc and
compares. ``cumprod(x, axis, reverse)`` is passed in because the two spell it
differently.
"""
from __future__ import annotations

import numpy as np

F32 = np.float32
ONE_ZERO = np.array([1.0, 0.0, 3.0, 2.0], F32)
TWO_ZEROS = np.array([0.0, 2.0, 0.0], F32)
GRID = np.array([[0.0, 2.0, 0.0], [1.0, 4.0, 5.0], [2.0, 0.0, 3.0]], F32)
TIES = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]], F32)
SMALL = np.array([1.0, 2.0, 3.0, 4.0, 5.0], F32)
WEIGHTS = np.arange(1.0, 6.0, dtype=F32)
VEC2 = np.array([0.3, -1.2], F32)
VEC3 = np.array([1.5, 0.5, -2.0], F32)
MAT23 = np.array([[0.1, 0.2, 0.3], [-1.0, 2.0, 0.5]], F32)
TREE = {"a": VEC2, "b": MAT23}


def cases(jax, jnp, cumprod):
    grad, hessian = jax.grad, jax.hessian
    w3 = np.arange(1.0, 4.0, dtype=F32)
    w4 = np.arange(1.0, 5.0, dtype=F32)

    def both(f):
        return grad(f, argnums=(0, 1))

    return {
        # reduce_prod: the product of the others, also at one or several zeros
        "prod_one_zero": (grad(jnp.prod), (ONE_ZERO,)),
        "prod_two_zeros": (grad(jnp.prod), (TWO_ZEROS,)),
        "prod_axis0": (grad(lambda x: (jnp.prod(x, axis=0) * w3).sum()), (GRID,)),
        "prod_axis1_keepdims": (grad(lambda x: (jnp.prod(x, axis=1, keepdims=True)
                                                * w3[:, None]).sum()), (GRID,)),
        "prod_all_axes_of_3d": (grad(lambda x: jnp.prod(x, axis=(0, 2))[1]),
                                (GRID.reshape(3, 3, 1) * np.ones((1, 1, 2), F32),)),
        "prod_method": (grad(lambda x: x.prod(axis=1).sum()), (GRID,)),
        "prod_of_squares": (grad(lambda x: jnp.prod(x ** 2)), (ONE_ZERO,)),
        "prod_grad_of_grad": (grad(lambda x: grad(jnp.prod)(x).sum()), (ONE_ZERO,)),
        "prod_hessian": (hessian(jnp.prod), (ONE_ZERO,)),
        "prod_no_zero": (grad(jnp.prod), (np.array([1.5, -2.0, 0.5], F32),)),
        # cumprod
        "cumprod_one_zero": (grad(lambda x: (cumprod(x, 0, False) * w4).sum()), (ONE_ZERO,)),
        "cumprod_reverse": (grad(lambda x: (cumprod(x, 0, True) * w4).sum()), (ONE_ZERO,)),
        "cumprod_axis1": (grad(lambda x: (cumprod(x, 1, False) * w3).sum()), (GRID,)),
        "cumprod_grad_of_grad": (grad(lambda x: grad(
            lambda v: (cumprod(v, 0, False) * w4).sum())(x).sum()), (ONE_ZERO,)),
        # extrema and kinks
        "max_ties": (grad(lambda x: (jnp.max(x, axis=1) * w3[:2]).sum()), (TIES,)),
        "min_ties_all": (grad(jnp.min), (np.array([1.0, 1.0, 2.0], F32),)),
        "maximum_tie": (grad(lambda x: jnp.maximum(x, 3.0).sum()), (TIES,)),
        "minimum_tie": (grad(lambda x: jnp.minimum(x, 2.0).sum()), (TIES,)),
        "abs_at_zero": (grad(lambda x: jnp.abs(x).sum()),
                        (np.array([0.0, -0.0, 1.0, -1.0], F32),)),
        "clip_at_bounds": (grad(lambda x: jnp.clip(x, 1.0, 3.0).sum()), (GRID,)),
        "pow_at_zero": (grad(lambda x: (x ** 2.0 + x ** 3).sum()), (ONE_ZERO,)),
        # x.at[...].min / .max: ties share the cotangent
        "at_min_scalar": (both(lambda x, y: (x.at[1].min(y) * WEIGHTS).sum()),
                          (SMALL, F32(0.5))),
        "at_min_tie": (both(lambda x, y: (x.at[1].min(y) * WEIGHTS).sum()), (SMALL, F32(2.0))),
        "at_max_vector": (both(lambda x, y: (x.at[jnp.array([0, 2, 4])].max(y)
                                             * WEIGHTS).sum()),
                          (SMALL, np.array([0.0, 7.0, 5.0], F32))),
        "at_max_repeated": (both(lambda x, y: (x.at[jnp.array([1, 1, 3])].max(y)
                                               * WEIGHTS).sum()),
                            (SMALL, np.array([6.0, 9.0, 1.0], F32))),
        "at_max_repeated_ties": (both(lambda x, y: (x.at[jnp.array([1, 1, 3])].max(y)
                                                    * WEIGHTS).sum()),
                                 (SMALL, np.array([6.0, 6.0, 4.0], F32))),
        "at_min_slice": (both(lambda x, y: (x.at[1:4].min(y) * WEIGHTS).sum()),
                         (SMALL, np.array([0.0, 3.0, 9.0], F32))),
        "at_max_out_of_bounds": (both(lambda x, y: (x.at[jnp.array([7, -1, 0])].max(y)
                                                    * WEIGHTS).sum()),
                                 (SMALL, np.array([0.0, 9.0, 0.0], F32))),
        "at_max_grad_of_grad": (grad(lambda x: grad(
            lambda v: (v.at[1].max(v[0]) ** 2).sum())(x).sum()), (SMALL,)),
        # forward mode through the same rules
        "jacfwd_at_max_repeated_ties": (jax.jacfwd(
            lambda x, y: x.at[jnp.array([1, 1, 3])].max(y), argnums=(0, 1)),
            (SMALL, np.array([6.0, 6.0, 4.0], F32))),
        "jacfwd_at_min_tie": (jax.jacfwd(lambda x: x.at[1].min(2.0)), (SMALL,)),
        "jacfwd_cumprod_one_zero": (jax.jacfwd(lambda x: cumprod(x, 0, False)), (ONE_ZERO,)),
        "jacfwd_prod_two_zeros": (jax.jacfwd(jnp.prod), (TWO_ZEROS,)),
        # jacrev / jacobian / hessian of pytree inputs and outputs
        "jacrev_pytree_output_two_argnums": (jax.jacrev(
            lambda x, y: {"p": x * y[0], "q": (jnp.sin(x).sum(), y ** 2)}, argnums=(0, 1)),
            (VEC2, VEC3)),
        "jacrev_dict_input_list_output": (jax.jacrev(
            lambda d: [d["a"] ** 2, jnp.tanh(d["b"]).sum(axis=0)]), (TREE,)),
        "jacobian_argnums_tuple": (jax.jacobian(
            lambda x, y: jnp.sin(x)[:, None] * y, argnums=(0, 1)), (VEC2, MAT23)),
        "jacrev_scalar_output": (jax.jacrev(lambda x: jnp.sum(x ** 3)), (VEC3,)),
        "jacrev_has_aux": (jax.jacrev(lambda x: (x ** 2, {"s": x.sum()}), has_aux=True),
                           (VEC3,)),
        "jacrev_empty_output": (jax.jacrev(lambda x: x[:0] * 2.0), (VEC3,)),
        "hessian_dict_input": (hessian(
            lambda d: (d["a"] ** 2).sum() * jnp.cos(d["b"]).sum()), (TREE,)),
        "hessian_has_aux": (hessian(lambda x: ((x ** 3).sum(), x * 2.0), has_aux=True),
                            (VEC2,)),
        "hessian_argnums_tuple": (hessian(lambda x, y: (x ** 2).sum() * (y ** 3).sum(),
                                          argnums=(0, 1)), (VEC2, VEC3)),
    }
