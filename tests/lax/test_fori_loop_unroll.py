"""lax.fori_loop's ``unroll`` keyword (Optax's Muon passes ``unroll=True``): accepted for
concrete bounds with the loop's values unchanged, a ValueError with JAX's words for
traced bounds; values recorded with JAX 0.10.2."""

import numpy as np
import pytest

import spmdc
from spmdc import lax


def test_fori_loop_unroll_with_concrete_bounds():
    doubled = lax.fori_loop(0, 3, lambda i, c: c * 2, 1.0, unroll=True)
    assert float(doubled) == 8.0 and doubled.dtype == np.float32
    summed = spmdc.jit(lambda x: lax.fori_loop(0, 3, lambda i, c: c + i * x, 1, unroll=2))(2)
    assert int(summed) == 7
    grad = spmdc.grad(lambda x: lax.fori_loop(0, 4, lambda i, c: c * x, 1.0, unroll=True))
    np.testing.assert_allclose(grad(2.0), 32.0)        # d x^4 / dx at 2


def test_fori_loop_unroll_with_traced_bounds_is_an_error():
    loop = spmdc.jit(lambda n: lax.fori_loop(0, n, lambda i, c: c + i, 1, unroll=2))
    with pytest.raises(ValueError, match="Can only use `unroll` in `fori_loop` if the loop "
                                         "bounds are statically known"):
        loop(3)
    # unroll=False or 1 is no unrolling, so traced bounds take it (as in JAX)
    assert int(spmdc.jit(lambda n: lax.fori_loop(0, n, lambda i, c: c + i, 1,
                                                 unroll=1))(4)) == 7
