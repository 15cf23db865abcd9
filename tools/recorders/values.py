"""Case sets whose cases are functions in a tests/*_cases.py module, run on JAX, with
the values (the leaves of what each returns) written to JSON: jnp_misc, jnp_more,
lax_gather, fft, complex, grad and ode.

A complex-capable leaf is ``{"shape", "dtype", "real", "imag"}`` (float64 lists); the
real-only layouts of grad and ode are ``{"shape", "values"}`` (grad writes NaN as null).
The tests read them through tests/oracle.py.
"""
from __future__ import annotations

import types

import numpy as np

from recorders import write_cases_json


def _complex_leaf(value) -> dict:
    v = np.asarray(value)
    return {"shape": list(v.shape), "dtype": v.dtype.name,
            "real": np.real(v).astype(np.float64).ravel().tolist(),
            "imag": np.imag(v).astype(np.float64).ravel().tolist()}


def record_tuple_leaves(cases: types.ModuleType, paths, mode) -> None:
    """``cases(jax)`` gives thunks; a thunk's value is one array or a tuple of them."""
    import jax
    out = {}
    for name, thunk in cases.cases(jax).items():
        value = thunk()
        out[name] = [_complex_leaf(v) for v in (value if isinstance(value, tuple) else (value,))]
    write_cases_json(paths[0], jax.__version__, out)


def record_one_leaf(cases: types.ModuleType, paths, mode) -> None:
    """``cases(jax)`` gives thunks of one array each (stored as one leaf, not a list)."""
    import jax
    out = {name: _complex_leaf(thunk()) for name, thunk in cases.cases(jax).items()}
    write_cases_json(paths[0], jax.__version__, out)


def record_tree_leaves(cases: types.ModuleType, paths, mode) -> None:
    """``cases(jax)`` gives thunks of pytrees of complex or real arrays."""
    import jax
    out = {name: [_complex_leaf(v) for v in jax.tree_util.tree_leaves(thunk())]
           for name, thunk in cases.cases(jax).items()}
    write_cases_json(paths[0], jax.__version__, out)


def thunk_names(cases: types.ModuleType, mode) -> list[str]:
    import spmdc
    return sorted(cases.cases(spmdc))


def _real_leaf_or_null(value) -> dict:
    a = np.asarray(value, np.float64)
    return {"shape": list(a.shape),
            "values": [None if np.isnan(v) else float(v) for v in a.ravel()]}


def record_gradients(cases: types.ModuleType, paths, mode) -> None:
    """grad_cases: ``cases(jax, jnp, cumprod)`` gives ``(function, args)`` pairs."""
    import jax
    import jax.numpy as jnp

    def cumprod(x, axis, reverse):
        return jax.lax.cumprod(x, axis=axis, reverse=reverse)

    out = {name: [_real_leaf_or_null(leaf) for leaf in jax.tree_util.tree_leaves(fun(*args))]
           for name, (fun, args) in cases.cases(jax, jnp, cumprod).items()}
    write_cases_json(paths[0], jax.__version__, out)


def gradient_names(cases: types.ModuleType, mode) -> list[str]:
    import spmdc
    return sorted(cases.cases(spmdc, spmdc.numpy, None))


def record_odeint(cases: types.ModuleType, paths, mode) -> None:
    """ode_cases: ``cases(jax, odeint)`` gives ``(function, args)`` pairs."""
    import jax
    from jax.experimental.ode import odeint
    out = {name: [{"shape": list(np.shape(v)), "values": np.asarray(v, np.float64).ravel().tolist()}
                  for v in jax.tree_util.tree_leaves(fun(*args))]
           for name, (fun, args) in cases.cases(jax, odeint).items()}
    write_cases_json(paths[0], jax.__version__, out)


def odeint_names(cases: types.ModuleType, mode) -> list[str]:
    import spmdc
    from spmdc.experimental.ode import odeint
    return sorted(cases.cases(spmdc, odeint))
