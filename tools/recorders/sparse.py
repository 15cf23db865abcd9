"""The sparse case set: jax.experimental.sparse programs (tests/sparse_cases.py) recorded
as each result's printed form and buffers into tests/data/sparse_reference.json."""
from __future__ import annotations

import types

import numpy as np

from recorders import write_cases_json


def record_sparse(cases: types.ModuleType, paths, mode) -> None:
    import jax
    import jax.experimental.sparse  # noqa: F401  (jax.experimental.sparse for the cases)
    out = {}
    for name, thunk in cases.cases(jax).items():
        out[name] = [v if isinstance(v, str) else
                     {"dtype": str(np.asarray(v).dtype), "shape": list(np.shape(v)),
                      "values": np.asarray(v).ravel().tolist()} for v in thunk()]
    write_cases_json(paths[0], jax.__version__, out)


def sparse_names(cases: types.ModuleType, mode) -> list[str]:
    import spmdc
    import spmdc.experimental.sparse  # noqa: F401
    return sorted(cases.cases(spmdc))
