"""experimental.sparse.linalg.lobpcg_standard (Note [JAX's LOBPCG] in
spmdc/experimental/sparse/lobpcg.py): the top eigenpairs of a symmetric matrix and of a
function applying one, in the iterations JAX 0.10.2 takes, to its values (recorded)."""
from __future__ import annotations

import numpy as np
import pytest

from spmdc.experimental.sparse import BCOO
from spmdc.experimental.sparse.linalg import lobpcg_standard

N = 40
_rng = np.random.default_rng(0)
_Q, _ = np.linalg.qr(_rng.normal(size=(N, N)))
A = ((_Q * np.linspace(1, 10, N)) @ _Q.T).astype(np.float32)
X0 = _rng.normal(size=(N, 3)).astype(np.float32)


@pytest.mark.slow           # one LOBPCG program: a few seconds to compile on a busy host
def test_top_eigenpairs_as_jaxs():
    theta, U, i = lobpcg_standard(A, X0, m=100)
    assert int(i) == 20                                          # JAX's count
    np.testing.assert_allclose(theta, [9.999999046325684, 9.769227981567383,
                                       9.53846263885498], rtol=2e-6)
    np.testing.assert_allclose(theta, np.linalg.eigvalsh(A.astype(np.float64))[::-1][:3],
                               rtol=2e-6)
    np.testing.assert_allclose(np.abs(np.asarray(U)[:3, 0]),
                               [0.18256857991218567, 0.24712662398815155,
                                0.023489153012633324], atol=3e-6)
    np.testing.assert_allclose(A @ np.asarray(U), np.asarray(U) * np.asarray(theta),
                               atol=2e-3)     # JAX's tolerance: eps * 10 n (|Ax| + lambda)


@pytest.mark.slow
def test_an_operator_and_m_as_jaxs():
    sparse_a = BCOO.fromdense(A)
    theta, _, i = lobpcg_standard(lambda x: sparse_a @ x, X0, m=5)
    assert int(i) == 5
    np.testing.assert_allclose(theta, [9.818984985351562, 9.684556007385254,
                                       9.315801620483398], rtol=2e-6)


def test_bad_input_is_jaxs_value_error():
    with pytest.raises(ValueError, match="must have search dim > 0, got 0"):
        lobpcg_standard(A, X0[:, :0])
    with pytest.raises(ValueError, match=r"expected search dim \* 5 < matrix dim"):
        lobpcg_standard(A, np.ones((N, 8), np.float32))
    with pytest.raises(ValueError, match="A, X must have same dtypes"):
        lobpcg_standard(A, X0.astype(np.float16))
    with pytest.raises(TypeError, match="A must be an"):
        lobpcg_standard(3, X0)
