"""Eager execution: of single primitives, and the rule that eager transformations follow.

A primitive bound with no trace current runs at once, through a cached jit of its one
equation (Note [eager execution] in core/tracing.py, which says why this module installs
itself there). A transformation called outside jit (grad, vjp, jvp, vmap) traces its
function every call and runs the program compiled for an equal one: Note [eager
transformations trace every call] below, which jit.py's ``_call_eager`` implements."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..core import tracing
from ..core.config import checked_primitive, runtime_checks
from .jit import Jitted

__all__ = ["apply_primitive"]

_eager: dict[Any, Jitted] = {}


# Note [eager transformations trace every call]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# Outside jit, JAX runs grad, value_and_grad, vjp, jvp and vmap eagerly: every call runs
# the Python function again, so a ``print`` in it prints every call, a global or a
# closure cell rebound between calls is seen, and an error points to the user's line at
# every call. Training loops in Optax's and Flax's docs rely on it, and they make a fresh
# wrapper every step (``jax.value_and_grad(loss)(params)``, often with a lambda closing
# over the batch), so nothing that hangs off the wrapper object can be reused.
#
# spmdc runs such a call as one compiled program (Note [concrete values while tracing] in
# core/concrete.py). Its outermost Jitted (``eager_jit``) keeps no per-signature cache and
# grants no C++ launch: every call traces the function, runs the transformation's pass
# and cleans the program up, exactly as a first call would, so every Python effect
# happens and the program is the one a fresh trace gives. Only the compile is reused: the
# executable is looked up by the program's structure (``program_key``, Note [programs
# equal by structure] in runtime/executable.py) with the device, the donated arguments,
# x64 mode and the default precision, in jit.py's ``_compiled``, shared by every eager
# transformation and every wrapper. Values the function captures (a closed-over batch)
# are arguments of the program, not constants in it, so a new batch, or a closure cell
# rebound to a new array, runs the same executable with the new value; a captured Python
# scalar is a literal of the program, so a new one is a new program. A program whose
# structure cannot be compared (a host callback, a custom rule object in a parameter)
# is compiled for its call alone, as is one with a sharding constraint. Over sharded
# arguments the compiled entry holds its captured values, so only a program that
# captures nothing is reused there; one that closes over an array compiles per call.
#
# The cost per call is then the trace, the pass and the cleanup (about 1 ms for a small
# MLP's gradient), where a fresh compile costs tens of milliseconds; JAX's own eager
# gradient pays its op-by-op dispatch instead. ``_compiled`` keeps the 256 programs used
# last, so a loop that makes a new program every step (a captured Python scalar that
# changes) does not keep every one alive.


def apply_primitive(prim: Any, args: Sequence[Any], params: dict[str, Any],
                    weak: bool) -> Any:
    """Run one primitive on concrete values, through a cached one-equation jit."""
    try:
        key = (prim, tuple(params.items()), weak)
        fn = _eager.get(key)
    except TypeError:                       # unhashable params: no caching
        key, fn = None, None
    if fn is None:
        fn = Jitted(lambda *xs: tracing.bind(prim, *xs, weak=weak, **params))
        fn.__name__ = prim.name
        if key is not None:
            _eager[key] = fn
    if runtime_checks:      # See Note [config on the hot path] in core/config.py
        # Under disable_jit a jit runs its Python function, which would bind this
        # primitive eagerly again, forever: one primitive is run compiled regardless.
        return checked_primitive(prim.name, lambda: fn._call(args, {})[0])
    return fn(*args)


tracing.set_eager_runner(apply_primitive)
