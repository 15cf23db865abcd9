"""lax.scatter_apply (Note [scatter_apply by counting] in spmdc/lax/scatter_apply.py):
func applied once per update reaching an element (duplicates: several times), with the
modes, windows and vmap, against JAX 0.10.2's results (recorded)."""
from __future__ import annotations

import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc import lax

DN = lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                 scatter_dims_to_operand_dims=(0,))
X = np.arange(6, dtype=np.float32)
IDX = np.array([[1], [3], [3], [9]], np.int32)      # 3 twice, 9 out of bounds


def test_duplicates_apply_func_again_and_the_modes_as_jaxs():
    @spmdc.jit
    def run(x, i):
        def f(v):
            return v * 2 + 1
        return (lax.scatter_apply(x, i, f, DN, update_shape=(4,)),
                lax.scatter_apply(x, i, f, DN, update_shape=(4,), mode="clip"),
                lax.scatter_apply(x, i, jnp.sin, DN, update_shape=(4,), mode="clip"))
    default, clipped, sines = run(X, IDX)
    assert default.tolist() == [0.0, 3.0, 2.0, 15.0, 4.0, 5.0]
    assert clipped.tolist() == [0.0, 3.0, 2.0, 15.0, 4.0, 11.0]
    assert sines.tolist() == [0.0, 0.8414709568023682, 2.0, 0.14065207540988922, 4.0,
                              -0.9589242935180664]


def test_windows_and_vmap_as_jaxs():
    dn = lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                     scatter_dims_to_operand_dims=(0,))
    rows = lax.scatter_apply(np.arange(12, dtype=np.int32).reshape(3, 4),
                             np.array([[0], [2], [0]]), lambda v: v - 100, dn,
                             update_shape=(3, 4))
    assert rows.tolist() == [[-200, -199, -198, -197], [4, 5, 6, 7], [-92, -91, -90, -89]]
    mapped = spmdc.vmap(lambda x: lax.scatter_apply(x, IDX[:2], lambda v: -v, DN,
                                                    update_shape=(2,)))(np.stack([X, X + 1]))
    assert mapped.tolist() == [[0.0, -1.0, 2.0, -3.0, 4.0, 5.0], [1.0, -2.0, 3.0, -4.0, 5.0, 6.0]]


def test_bad_input_is_jaxs_exception():
    with pytest.raises(TypeError, match="updates"):         # update_shape missing the batch
        lax.scatter_apply(X, IDX, lambda v: v, DN)
    with pytest.raises(TypeError, match="func must be a unary function"):
        lax.scatter_apply(X, IDX, 3, DN, update_shape=(4,))
