"""Case sets whose cases are thunks in a tests/*_cases.py module whose values are tables
of plain numbers, run on JAX and written to JSON as they are (ops, image and rotation),
or one array each, written to an .npz archive under the case's name (linalg_lapack).

``cases(jax)`` gives name -> thunk. A thunk's value (arrays, tuples, lists, dicts and
strings, nested) is stored as nested JSON lists (arrays by ``tolist()``); a thunk that
raises is stored as ``"ExceptionType: message"`` (the message cut at 200 characters), so
that the tests can check that spmdc raises JAX's exception type for the same input.
"""
from __future__ import annotations

import types

import numpy as np

from recorders import write_arrays, write_cases_json


def _plain(value):
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    return np.asarray(value).tolist()


def record_values_or_errors(cases: types.ModuleType, paths, mode) -> None:
    import jax
    out = {}
    for name, thunk in cases.cases(jax).items():
        try:
            out[name] = _plain(thunk())
        except Exception as e:      # the exception JAX raises is the recorded answer
            out[name] = f"{type(e).__name__}: {e}"[:200]
    write_cases_json(paths[0], jax.__version__, out)


def record_arrays(cases: types.ModuleType, paths, mode) -> None:
    """``cases(jax)`` gives thunks of one array each, saved with its dtype."""
    import jax

    def run(out: dict) -> None:
        out.update((name, np.asarray(thunk())) for name, thunk in cases.cases(jax).items())
    write_arrays(paths[0], [run])
