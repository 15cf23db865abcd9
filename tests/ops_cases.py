"""jax.ops' segment reductions, run on spmdc and on JAX 0.10.2 (`tools/record.py ops`
records JAX's results in tests/data/ops_reference.json; tests/test_ops.py compares):
each reduction by mode, bucket size and dtype, its gradient and its vmap, and bad input
(recorded as JAX's exception)."""
from __future__ import annotations

import numpy as np

DATA = np.array([[1.764, 0.4, 0.979], [2.241, 1.868, -0.977], [0.95, -0.151, -0.103],
                 [0.411, 0.144, 1.454], [0.761, 0.122, 0.444], [0.95, -0.151, -0.103],
                 [0.313, -0.854, -2.553]], np.float32)   # rows 2 and 5 are equal
IDS = np.array([0, 1, 1, 3, -1, 1, 9], np.int32)        # a negative and an out-of-range id
IDATA = np.array([3, -2, 5, 7, 1, 5, 2], np.int32)
NAMES = ["segment_sum", "segment_prod", "segment_max", "segment_min"]
W = np.arange(12, dtype=np.float32).reshape(4, 3)
# JAX differentiates segment_prod with unique ids only.
UNIQUE_IDS = np.array([2, 0, 1, 3, 9, -1, 7], np.int32)


def _grad(lib, name):
    f = getattr(lib.ops, name)
    ids, kwargs = (UNIQUE_IDS, {"unique_indices": True}) if name == "segment_prod" else (IDS, {})
    return lib.jit(lib.grad(lambda d: lib.numpy.sum(f(d, ids, 4, **kwargs) * W)))(DATA)


def cases(lib):
    out = {}
    for name in NAMES:
        f = getattr(lib.ops, name)
        out[f"{name}.n4"] = lambda f=f: f(DATA, IDS, 4)
        out[f"{name}.n4_clip"] = lambda f=f: f(DATA, IDS, 4, mode="clip")
        out[f"{name}.n4_bucket3"] = lambda f=f: f(DATA, IDS, 4, bucket_size=3)
        out[f"{name}.default_n"] = lambda f=f: f(IDATA, IDS)
        out[f"{name}.int_n5"] = lambda f=f: f(IDATA, IDS, 5, indices_are_sorted=False,
                                               unique_indices=False)
        out[f"{name}.bool_n4"] = lambda f=f: f(IDATA > 2, IDS, 4)
        out[f"{name}.grad"] = lambda name=name: _grad(lib, name)
        out[f"{name}.vmap"] = lambda f=f: lib.vmap(lambda d: f(d, IDS, 4), in_axes=1,
                                                   out_axes=1)(DATA)
    segment_sum = lib.ops.segment_sum
    out["errors.jit_no_n"] = lambda: lib.jit(segment_sum)(DATA, IDS)
    out["errors.traced_n"] = lambda: lib.jit(lambda n: segment_sum(DATA, IDS, n))(3)
    out["errors.neg_n"] = lambda: segment_sum(DATA, IDS, -1)
    out["errors.float_ids"] = lambda: segment_sum(DATA, IDS.astype(np.float32), 4)
    out["errors.list_data"] = lambda: segment_sum([1., 2.], np.array([0, 1]), 2)
    out["errors.bad_shape"] = lambda: segment_sum(DATA, IDS[:5], 4)
    out["errors.bad_mode"] = lambda: segment_sum(DATA, IDS, 4, mode="bogus")
    out["errors.float_n"] = lambda: segment_sum(DATA, IDS, 4.0)
    return out
