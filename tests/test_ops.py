"""spmdc.ops (jax.ops' segment reductions) against JAX 0.10.2's results, recorded by
`tools/record.py ops` from tests/ops_cases.py in tests/data/ops_reference.json (the ids
with a negative and an out-of-range one, each reduction by mode, bucket size, dtype, its
gradient and its vmap), and JAX's exception types for bad input."""
from __future__ import annotations

import numpy as np
import ops_cases
import oracle
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc import ops
from spmdc.errors import ConcretizationTypeError

RECORDED = oracle.recorded_cases("ops_reference.json")
DATA, IDS, IDATA, NAMES = ops_cases.DATA, ops_cases.IDS, ops_cases.IDATA, ops_cases.NAMES


def _recorded(prefix):
    """The recorded cases named ``prefix.key``, by key."""
    return {name.split(".", 1)[1]: value for name, value in RECORDED.items()
            if name.startswith(prefix + ".")}


def test_every_case_is_recorded():
    assert sorted(ops_cases.cases(spmdc)) == sorted(RECORDED)


@pytest.mark.parametrize("name", NAMES)
def test_values_as_jax(name):
    f, ref = getattr(ops, name), _recorded(name)
    np.testing.assert_allclose(f(DATA, IDS, 4), ref["n4"], rtol=1e-6)
    np.testing.assert_allclose(f(DATA, IDS, 4, mode="clip"), ref["n4_clip"], rtol=1e-6)
    np.testing.assert_allclose(f(DATA, IDS, 4, bucket_size=3), ref["n4_bucket3"],
                               rtol=1e-6)
    out = f(IDATA, IDS)                  # num_segments = max(ids) + 1, read from the ids
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, ref["default_n"])
    np.testing.assert_array_equal(f(IDATA, IDS, 5, indices_are_sorted=False,
                                    unique_indices=False), ref["int_n5"])
    if isinstance(ref["bool_n4"], str):     # JAX raised: "TypeError: ..."
        assert ref["bool_n4"].startswith("TypeError:"), ref["bool_n4"]
        with pytest.raises(TypeError, match="bool"):
            f(IDATA > 2, IDS, 4)
    else:
        np.testing.assert_array_equal(f(IDATA > 2, IDS, 4), ref["bool_n4"])


@pytest.mark.parametrize("name", NAMES)
def test_grad_jit_and_vmap_as_jax(name):
    f, ref = getattr(ops, name), _recorded(name)
    w = ops_cases.W
    # JAX differentiates segment_prod with unique ids only (spmdc with any).
    ids = ops_cases.UNIQUE_IDS if name == "segment_prod" else IDS
    kwargs = {"unique_indices": True} if name == "segment_prod" else {}
    grad = spmdc.jit(spmdc.grad(lambda d: jnp.sum(f(d, ids, 4, **kwargs) * w)))(DATA)
    # Tied maxima (rows 2 and 5 are equal) share the cotangent, as in JAX.
    np.testing.assert_allclose(grad, ref["grad"], rtol=1e-6)
    batched = spmdc.vmap(lambda d: f(d, IDS, 4), in_axes=1, out_axes=1)(DATA)
    np.testing.assert_allclose(batched, ref["vmap"], rtol=1e-6)


def test_segment_prod_grad_with_repeated_ids():
    # JAX raises NotImplementedError here; spmdc's scatter-multiply rule differentiates
    # it: d/dx_i of the segment's product is the product of the other rows.
    data = jnp.array([1., 2., 3., 4., 5., 6.])
    grad = spmdc.grad(lambda d: ops.segment_prod(d, jnp.array([0, 0, 1, 1, 2, 5]),
                                                 3).sum())(data)
    np.testing.assert_allclose(grad, [2., 1., 4., 3., 1., 0.])


def test_bad_input_raises_jaxs_types():
    errors = _recorded("errors")
    with pytest.raises(ConcretizationTypeError):              # JAX: ConcretizationTypeError
        spmdc.jit(ops.segment_sum)(DATA, IDS)
    assert errors["jit_no_n"].startswith("ConcretizationTypeError")
    with pytest.raises(ConcretizationTypeError):
        spmdc.jit(lambda n: ops.segment_sum(DATA, IDS, n))(3)
    with pytest.raises(ValueError, match="num_segments must be non-negative"):
        ops.segment_sum(DATA, IDS, -1)
    with pytest.raises(TypeError, match="integer"):
        ops.segment_sum(DATA, IDS.astype(np.float32), 4)
    with pytest.raises(TypeError, match="requires ndarray or scalar arguments"):
        ops.segment_sum([1., 2.], np.array([0, 1]), 2)
    with pytest.raises(ValueError):
        ops.segment_sum(DATA, IDS[:5], 4)
    with pytest.raises(ValueError, match="mode"):
        ops.segment_sum(DATA, IDS, 4, mode="bogus")
    with pytest.raises(TypeError, match="num_segments"):
        ops.segment_sum(DATA, IDS, 4.0)
    with pytest.raises(TypeError, match="unique_indices"):
        ops.segment_sum(DATA, IDS, 4, unique_indices="yes")
    for key in ("neg_n", "bad_shape", "bad_mode"):
        assert errors[key].startswith("ValueError"), key
    for key in ("float_ids", "list_data", "float_n", "traced_n"):
        assert errors[key].split(":")[0] in ("TypeError", "ConcretizationTypeError"), key
