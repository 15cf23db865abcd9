"""Complex operands of the ordered operations (Note [complex order] in
spmdc/compiler/primitives/complex_order.py): max/min and their reductions and scans, sort,
sign, and spmdc.numpy's comparisons, against JAX 0.10.2's values (recorded on CPU,
inline below); clip, quantile, top_k and argmax reject complex operands as JAX does. Each
primitive's lowering is also checked against its NumPy reference."""

import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc import lax
from spmdc.compiler.primitives.cumulative import cummax_p, cummin_p
from spmdc.compiler.primitives.elementwise import max_p, min_p, sign_p
from spmdc.compiler.primitives.reductions import reduce_max_p, reduce_min_p
from spmdc.compiler.primitives.sorting import sort_p
from tests.primcheck import check_lowering

X = np.array([1 + 2j, 1 - 1j, -3 + 0j, 1 + 2j, 0 + 5j, 2 - 7j], np.complex64)
Y = np.array([1 + 3j, 1 - 2j, -3 + 0j, 0 + 9j, 0 + 5j, 2 + 7j], np.complex64)
NAN = complex(np.nan, 0)

# Recorded with JAX 0.10.2 (jax.numpy / jax.lax on X and Y above).
JAX = {
    "max": 2 - 7j, "min": -3 + 0j,
    "sort": [-3 + 0j, 5j, 1 - 1j, 1 + 2j, 1 + 2j, 2 - 7j],
    "argsort": [2, 4, 1, 0, 3, 5],
    "maximum": [1 + 3j, 1 - 1j, -3 + 0j, 1 + 2j, 5j, 2 + 7j],
    "minimum": [1 + 2j, 1 - 2j, -3 + 0j, 9j, 5j, 2 - 7j],
    "greater": [False, True, False, True, False, False],
    "less": [True, False, False, False, False, True],
    "greater_equal": [False, True, True, True, True, False],
    "less_equal": [True, False, True, False, True, True],
    "cummax": [1 + 2j, 1 + 2j, 1 + 2j, 1 + 2j, 1 + 2j, 2 - 7j],
    "ptp": 5 - 7j,
    "searchsorted": [5, 2, 0, 2, 1, 6],
    "unique": [-3 + 0j, 5j, 1 - 1j, 1 + 2j, 2 - 7j],
    "grad_max": [0, 0, 0, 0, 0, 1],
    # NaN loses every comparison, so the other operand wins (unlike real max)
    "max_nan": 2 + 0j, "max_ties": 1 + 3j,
    "maximum_nan": [1 + 0j, complex(1, np.nan)],
    "sign": [0j, 0.6 + 0.8j],
}


def _program(x, y):
    return {
        "max": jnp.max(x), "min": jnp.min(x), "sort": jnp.sort(x),
        "argsort": jnp.argsort(x), "lexsort": jnp.lexsort([x]),
        "maximum": jnp.maximum(x, y), "minimum": jnp.minimum(x, y),
        "lax_max": lax.max(x, y), "fmax": jnp.fmax(x, y),
        "greater": x > y, "less": jnp.less(x, y), "greater_equal": x >= y,
        "less_equal": jnp.less_equal(x, y), "cummax": lax.cummax(x), "ptp": jnp.ptp(x),
        "searchsorted": jnp.searchsorted(jnp.sort(x), y), "unique": jnp.unique(x, size=5),
        "grad_max": spmdc.grad(lambda z: jnp.max(z).real)(x),
        "max_nan": jnp.max(jnp.array([1 + 1j, NAN, 2 + 0j], jnp.complex64)),
        "max_ties": jnp.max(jnp.array([1 + 1j, 1 + 3j, 1 - 2j], jnp.complex64)),
        "maximum_nan": jnp.maximum(jnp.array([NAN, 1 + 1j], jnp.complex64),
                                   jnp.array([1 + 0j, complex(1, np.nan)], jnp.complex64)),
        "sign": jnp.sign(jnp.array([0j, 3 + 4j], jnp.complex64)),
        "vmap_max": spmdc.vmap(jnp.max)(jnp.stack([x, y])),
    }


def test_complex_order_matches_jax():
    got = spmdc.jit(_program)(X, Y)
    for name, want in JAX.items():
        np.testing.assert_allclose(np.asarray(got[name]), np.asarray(want), rtol=1e-6,
                                   equal_nan=True, err_msg=name)
    assert got["max"].dtype == np.complex64 and got["sort"].dtype == np.complex64
    np.testing.assert_array_equal(got["lexsort"], JAX["argsort"])
    np.testing.assert_array_equal(got["lax_max"], JAX["maximum"])
    np.testing.assert_array_equal(got["fmax"], JAX["maximum"])
    np.testing.assert_array_equal(got["vmap_max"], [2 - 7j, 2 + 7j])


@pytest.mark.parametrize("prim, params", [
    (max_p, {}), (min_p, {}), (sign_p, {}),
    (reduce_max_p, {"axes": (1,)}), (reduce_min_p, {"axes": (0, 1)}),
    (cummax_p, {"axis": 1, "reverse": False}), (cummin_p, {"axis": 1, "reverse": True}),
    (sort_p, {"dimension": 1, "is_stable": True, "num_keys": 1}),
])
def test_complex_lowering_matches_reference(prim, params):
    a = np.stack([X, Y, np.array([NAN, 1, complex(1, np.nan), 0, -1j, 1], np.complex64)])
    args = [a, a[::-1].copy()] if prim in (max_p, min_p) else [a]
    check_lowering(prim, args, params)


def test_complex_rejected_as_in_jax():
    with pytest.raises(ValueError, match="Clip received a complex value"):
        jnp.clip(X, 0, 1)
    with pytest.raises(ValueError, match="Clip received a complex value"):
        jnp.clip(X.real, 0j, 1)
    with pytest.raises(ValueError, match="does not support complex input"):
        jnp.median(X)
    with pytest.raises(ValueError, match="top_k is not compatible with complex inputs"):
        lax.top_k(X, 2)
    with pytest.raises(TypeError):
        jnp.argmax(X)
    with pytest.raises(TypeError):
        lax.lt(X, Y)
