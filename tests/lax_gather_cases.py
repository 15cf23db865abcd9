"""lax.gather / lax.scatter* with JAX's dimension numbers and modes, run on spmdc and on
JAX 0.10.2 (`tools/record.py lax_gather` records JAX's results in
tests/data/lax_gather_reference.json; tests/lax/test_slicing.py compares)."""
from __future__ import annotations

import numpy as np

X = np.arange(24, dtype=np.float32).reshape(4, 6)
IDX = np.array([[0, 1], [3, 4], [2, 5], [-1, 0], [1, 3]], np.int32)
U = np.ones((5, 2), np.float32) * np.arange(1, 6, dtype=np.float32)[:, None]


def cases(lib):
    lax = lib.lax
    dn = lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,),
                                    start_index_map=(0, 1))
    sdn = lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                      scatter_dims_to_operand_dims=(0, 1))
    batched = lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(1,),
                                         start_index_map=(1,), operand_batching_dims=(0,),
                                         start_indices_batching_dims=(0,))
    out = {
        "gather_default": lambda: lax.gather(X, IDX, dn, (1, 2)),
        "gather_clip": lambda: lax.gather(X, IDX, dn, (1, 2), mode="clip"),
        "gather_fill": lambda: lax.gather(X, IDX, dn, (1, 2),
                                          mode=lax.GatherScatterMode.FILL_OR_DROP),
        "gather_fill_value": lambda: lax.gather(X, IDX, dn, (1, 2), mode="fill",
                                                fill_value=-7),
        "gather_int_fill": lambda: lax.gather(np.arange(12).reshape(3, 4).astype(np.int32),
                                              IDX, dn, (1, 2), mode="fill"),
        "gather_batching": lambda: lax.gather(
            X[:, :, None].repeat(2, 2), np.array([[1], [4], [0], [2]], np.int32), batched,
            (1, 1, 2)),
        "scatter": lambda: lax.scatter(X, IDX[:3], U[:3], sdn),
        "scatter_add_clip": lambda: lax.scatter_add(X, IDX, U, sdn, mode="clip"),
        "grad_gather": lambda: lib.grad(lambda x: (lax.gather(x, IDX, dn, (1, 2), mode="clip")
                                                   ** 2).sum())(X),
        "grad_scatter_add": lambda: lib.grad(lambda u: (lax.scatter_add(X, IDX, u, sdn)
                                                        ** 2).sum())(U),
        "vmap_gather": lambda: lib.vmap(lambda x: lax.gather(x, IDX, dn, (1, 2)))(
            np.stack([X, X + 1])),
    }
    for name in ("scatter_add", "scatter_sub", "scatter_mul", "scatter_min", "scatter_max"):
        out[name] = lambda name=name: getattr(lax, name)(X, IDX, U, sdn)
    return out
