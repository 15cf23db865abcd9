"""``jax_debug_nans`` and ``jax_debug_infs``: the checks of computed values for nan and
inf, and the search for the operation that made one.

Note [finding the operation that made a nan]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
With ``debug_nans`` (or ``debug_infs``) on, JAX checks the outputs of every computation
it runs. An operation run eagerly that gives a nan raises ``FloatingPointError: invalid
value (nan) encountered in log`` (the primitive's name) from inside the user's code. A
jitted computation's outputs are checked as a whole; on a nan JAX prints "Invalid nan
value encountered in the output of a jax.jit function. Calling the de-optimized
version." and calls the Python function again without jit, so the eager check above
names the operation, with a traceback through the user's lines. If the de-optimized
call makes no nan (XLA's rewrites made it, or a nan constant is returned), the error
says so.

spmdc does the same: every primitive run eagerly (transforms/eager.py) goes through
``check_primitive``, whose message names the primitive and the user's line; a top-level
``jit`` call's outputs go through ``check_call``, which calls the function again without
jit. Two cases differ, because spmdc runs them as one compiled program where JAX runs op
by op: an eager transformation (``grad(f)(x)`` outside jit) and pmap. For the first,
``check_call`` gets ``locate``, which replays the traced program equation by equation
with the eager primitives (``replay``): the forward and the backward pass, each
equation's message naming its primitive and the user's line that made it (the IR keeps
it). pmap's outputs raise naming the function, as JAX's pmap does. Only the values a
program returns are checked, as in JAX: under jit a nan that a ``where`` discards is no
error.
"""
from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..compiler.ir import Var
from ..errors import at_line, where
from ..runtime.array import is_concrete
from ..runtime.config_states import debug_infs, debug_nans
from .tree import tree_leaves

__all__ = ["checking", "invalid_kind", "check_primitive", "check_call", "replay"]

_local = threading.local()      # the source of the equation replay runs, if any


def checking() -> bool:
    return debug_nans.value or debug_infs.value


def invalid_kind(out: Any) -> str | None:
    """'nan' or 'inf' if a floating leaf of ``out`` holds one that is being checked."""
    nans, infs = debug_nans.value, debug_infs.value
    for leaf in tree_leaves(out):
        if not is_concrete(leaf) or leaf.dtype.kind not in "fc":
            continue
        value = np.asarray(leaf)
        if nans and np.isnan(value).any():
            return "nan"
        if infs and np.isinf(value).any():
            return "inf"
    return None


def check_primitive(name: str, out: Any) -> None:
    """The check of one eagerly run primitive's outputs (See Note [finding the operation
    that made a nan])."""
    kind = invalid_kind(out)
    if kind is not None:
        source = getattr(_local, "source", None)
        raise FloatingPointError(f"invalid value ({kind}) encountered in {name}"
                                 f"{at_line(source) if source else where()}")


def check_call(kind: str, name: str, out: Any, locate: Callable[[], Any]) -> None:
    """The check of a top-level call's outputs: on a nan (inf), ``locate()`` runs the call
    op by op, whose eager checks raise naming the operation; if none does, the error
    says so (See Note [finding the operation that made a nan])."""
    found = invalid_kind(out)
    if found is None:
        return
    if kind == "pmap":
        raise FloatingPointError(f"invalid value ({found}) encountered in {name}{where()}")
    sys.stdout.write(f"Invalid {found} value encountered in the output of a jax.jit "
                     "function. Calling the de-optimized version.\n")
    try:
        locate()
    except (FloatingPointError, ZeroDivisionError) as e:
        raise e from None
    raise FloatingPointError(
        f"invalid value ({found}) encountered in {kind}({name}){where()}. Because "
        "jax_config.debug_nans.value and/or config.jax_debug_infs is set, the de-optimized "
        "function (i.e., the function as if the `jit` decorator were removed) was called "
        "in an attempt to get a more precise error message. However, the de-optimized "
        "function did not produce invalid values during its execution. This behavior can "
        "result from `jit` optimizations causing the invalid value to be produced. It may "
        "also arise from having nan/inf literals as inputs or outputs, like "
        "`jax.jit(lambda ...: jax.numpy.nan)(...)`.\n\nIt may be possible to avoid the "
        "invalid value by removing the `jit` decorator, at the cost of losing "
        "optimizations.") from None


def replay(func: Any, inputs: Sequence[Any], run_eagerly: Callable[..., Any]) -> None:
    """Run the IR function ``func`` on ``inputs`` equation by equation with the eager
    primitives (``run_eagerly(prim, args, params, weak)``), whose checks raise naming the
    equation's primitive and its user's line (See Note [finding the operation that made
    a nan])."""
    env: dict[Any, Any] = dict(zip(func.inputs, inputs, strict=True))

    def read(a: Any) -> Any:
        return env[a] if isinstance(a, Var) else np.asarray(a.value, a.type.dtype)

    previous = getattr(_local, "source", None)
    try:
        for eqn in func.eqns:
            _local.source = eqn.source
            out = run_eagerly(eqn.prim, [read(a) for a in eqn.inputs], eqn.params, False)
            env.update(zip(eqn.outputs, out if eqn.prim.multiple_results else [out],
                           strict=True))
    finally:
        _local.source = previous
