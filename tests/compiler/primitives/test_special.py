"""The special-function primitives of compiler/primitives/special.py (erfc, bessel_i0e,
bessel_i1e): lowering vs the SciPy reference, batching, and VJPs vs finite differences."""
from __future__ import annotations

import numpy as np
import pytest
from primcheck import check_grad, check_lowering, check_vmap

from spmdc.compiler.primitives.core import registry

X = np.array([-40., -8.5, -8., -3., -0.5, -1e-9, 0., 1e-9, 0.7, 5., 8., 9., 100., 700.])


@pytest.mark.parametrize("name", ["erfc", "bessel_i0e", "bessel_i1e"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_lowering_matches_scipy(name, dtype):
    rtol = 3e-6 if dtype == np.float32 else 1e-13
    check_lowering(registry[name], [X.astype(dtype)], {}, rtol=rtol, atol=1e-30)


@pytest.mark.parametrize("name", ["erfc", "bessel_i0e", "bessel_i1e"])
def test_half_precision_computed_in_float32(name):
    check_lowering(registry[name], [X[:9].astype(np.float16)], {}, rtol=2e-3, atol=1e-4)


@pytest.mark.parametrize("name", ["erfc", "bessel_i0e", "bessel_i1e"])
def test_vmap(name):
    check_vmap(registry[name], [np.linspace(-3, 3, 12).reshape(4, 3).astype(np.float32)], {},
               [1], 3)


@pytest.mark.parametrize("name", ["erfc", "bessel_i0e", "bessel_i1e"])
def test_grad_first_and_second_order(name):
    check_grad(registry[name], [np.array([-9.5, -3., -0.5, 0.3, 2., 9.5])], {},
               second_order=True)


def test_i1e_gradient_at_zero_is_one_half():
    import spmdc
    from spmdc.lax import bessel_i1e
    assert float(spmdc.grad(bessel_i1e)(0.)) == 0.5
    assert float(spmdc.grad(bessel_i1e)(1e-30)) == 0.5
