"""float0 arrays (the tangents and cotangents of integer inputs) through jit: as an
argument, a closed-over constant and a result, as JAX 0.10.2 takes them (Note [array
nodes] in spmdc/core/tree.py: to transformations a float0 array is structure)."""
import numpy as np

import spmdc
import spmdc.numpy as jnp
from spmdc.dtypes import float0


def test_float0_arguments_constants_and_results_of_jit():
    z = np.zeros((3,), float0)
    passed = spmdc.jit(lambda x, t: (x * 2, t))
    out, t = passed(1.5, z)
    assert float(out) == 3.0 and t.dtype == float0 and t.shape == (3,)
    closed = spmdc.jit(lambda x: (x, np.zeros((2, 1), float0)))
    assert closed(1.0)[1].dtype == float0 and closed(1.0)[1].shape == (2, 1)
    _, tangent = spmdc.jit(lambda a, b: spmdc.jvp(lambda x: x * 2, (a,), (b,)))(
        jnp.arange(3), z)
    assert tangent.dtype == float0 and tangent.shape == (3,)
    # the shape is part of the signature; to users a float0 array stays one leaf
    assert passed(1.5, np.zeros((4,), float0))[1].shape == (4,)
    assert spmdc.tree.leaves({"t": z})[0] is z
    assert spmdc.tree.map(lambda a, b: a, z, z) is z
