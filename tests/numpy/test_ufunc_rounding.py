"""jnp functions whose value and gradient have JAX's bits (Note [logaddexp gradient]):
float32 bit patterns recorded from JAX 0.10.2 on CPU (jit, then vmap of grad)."""
from __future__ import annotations

import numpy as np

import spmdc
import spmdc.numpy as jnp

A = np.array([3.0, 0.5, -2.0, 2.0, 1e-3, -np.inf, np.inf, 7.25], np.float32)
B = np.array([-0.75, 0.25, -2.5, 2.0, -80.0, 1.0, np.inf, 7.0], np.float32)


def _bits(x) -> list[int]:
    return np.asarray(x, np.float32).view(np.uint32).tolist()


def test_logaddexp_value_and_gradient_are_jaxs():
    assert _bits(spmdc.jit(jnp.logaddexp)(A, B)) == [
        1078033627, 1065990242, 3217248626, 1076649094, 981668463, 1065353216, 2139095040,
        1090154008]
    ga, gb = spmdc.jit(spmdc.vmap(spmdc.grad(jnp.logaddexp, argnums=(0, 1))))(A, B)
    # (inf, inf): JAX's softmax rule reads +inf as 0, giving 1 and 1 (no NaN)
    assert _bits(ga) == [1064967718, 1058007757, 1059019135, 1056964608, 1065353216, 0,
                         1065353216, 1058007759]
    assert _bits(gb) == [1018968840, 1054878311, 1052855555, 1056964608, 96451494,
                         1065353216, 1065353216, 1054878314]
