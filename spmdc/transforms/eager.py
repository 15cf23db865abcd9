"""Eager execution: of single primitives, of library functions, and the rule that eager
transformations follow.

A primitive bound with no trace current runs at once, through a cached jit of its one
equation (Note [eager execution] in core/tracing.py, which says why this module installs
itself there). A library function (``jnp.linalg.det``, ``scipy.special.zeta`` ...) called
with no trace current runs as one jitted program, as JAX's ``@jit``-decorated functions
do: ``library_jit`` below, Note [library functions run as one program]. A transformation
called outside jit (grad, vjp, jvp, vmap) traces its function every call and runs the
program compiled for an equal one: Note [eager transformations trace every call] below,
which jit.py's ``_call_eager`` implements."""
from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..core import tracing
from ..core.config import checked_primitive, runtime_checks
from ..runtime.array import Array
from .jit import Jitted

__all__ = ["apply_primitive", "library_jit"]

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
# changes) does not keep every one alive. An output that is an argument passed through is
# that argument's Array itself, as JAX's op-by-op transformations give it back
# (``vmap(lambda x: x)(y) is y``; jit's ``_forwarding_inputs``).


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


# Note [library functions run as one program]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# JAX decorates most of its composite library functions with ``jit``, so an eager call
# of one is one cached executable, where running its body op by op would compile and
# launch every primitive it binds (a 3x3 ``det`` binds a dozen, ``wofz`` fifty).
# ``library_jit(static_argnames=...)`` does the same for the spmdc functions JAX jits:
# jnp.linalg's cholesky, qr, svd, eigh, eigvalsh, solve, inv, slogdet, det, pinv, norm,
# matrix_power, matrix_rank, cond and lstsq (without numpy_resid); scipy.special's
# gammasgn, logit, xlogy, xlog1py, poch, sici, expn, erfcx, dawsn, wofz, hyp1f1, hyp2f1,
# owens_t and bessel_jn; scipy.stats' betabinom.logpmf, poisson.entropy, mode and
# rankdata. (expi is a jit of its own, and spmdc.random's samplers jit their bodies
# after checking the key, in random/.) truncnorm's functions, which JAX jits, run op by
# op: XLA takes 2-3 s of CPU to compile each one's program, several times what their
# primitives cost one by one, and the five share those primitives' programs. The
# public function stays a plain function (its name, docstring and signature are the
# body's; a custom_jvp one keeps its rule, which applies under the transformations), and
#
# - with no trace current, and every argument that is not static an array, a NumPy
#   array or scalar, a Python number or None, it calls one ``Jitted`` of the body made
#   when the module is imported. The static arguments are JAX's static_argnames for that
#   function: the ones that choose the program (``ord``, ``axis``, ``mode``, ``UPLO``,
#   ``full_matrices``, an exponent ``n``); every array-valued parameter (``rcond``,
#   ``rtol``) is traced, as in JAX. So the cache is jit's own (Note [shared jit cache] in
#   jit.py): it is keyed by the arguments' shapes, dtypes and weak types, the static
#   values, x64 mode, the promotion and rank-promotion modes, the default precision and
#   the config states jit keys on; the C++ dispatcher launches a repeated call.
# - under any trace (jit, vmap, grad, scan bodies, an eager transformation's trace) it
#   calls the body directly, so nothing changes under transformations: the body emits
#   its equations into the enclosing trace exactly as before, and an eager
#   transformation may still read concrete values in it.
# - any other call (a list or a string where an array goes, an unhashable static
#   argument such as ``axis=[0, 1]``) also calls the body directly, op by op, so its
#   conversions and its error are the ones the body gives.
#
# Errors keep JAX's types and name the user's line: the body raises them while being
# traced, and ``user_source`` skips spmdc's frames (jit's and this wrapper's among them).
# A body that reads a value (``int(rank)`` in lstsq's ``numpy_resid=True``) must not be
# wrapped for that case; lstsq keeps that case out, as JAX does.

_VALUE_TYPES = (np.ndarray, np.generic, bool, int, float, complex)


def _is_value(x: Any) -> bool:
    """``x`` is traced by jit as it would be used by the body: an array or a number."""
    if x is None or type(x) is Array:
        return True
    if isinstance(x, np.ndarray):
        return x.dtype.kind not in "OSUMm"
    return isinstance(x, _VALUE_TYPES) and not isinstance(x, (np.str_, np.bytes_, np.void))


def _is_static(x: Any) -> bool:
    try:
        hash(x)
    except TypeError:
        return False
    return True


def library_jit(fun: Callable[..., Any] | None = None, *,
                static_argnames: Sequence[str] = ()) -> Any:
    """``fun`` run as one jitted program when called with no trace current (Note [library
    functions run as one program]); ``static_argnames`` name the parameters that choose
    the program."""
    if fun is None:
        return functools.partial(library_jit, static_argnames=static_argnames)
    jitted = Jitted(fun, static_argnames=tuple(static_argnames))
    positions = frozenset(i for i in jitted.static_argnums if i >= 0)
    names = frozenset(jitted.static_argnames)

    @functools.wraps(fun)
    def call(*args: Any, **kwargs: Any) -> Any:
        if tracing._state.current is None:
            for i, x in enumerate(args):
                if not (_is_static(x) if i in positions else _is_value(x)):
                    return fun(*args, **kwargs)
            for k, x in kwargs.items():
                if not (_is_static(x) if k in names else _is_value(x)):
                    return fun(*args, **kwargs)
            return jitted(*args, **kwargs)
        return fun(*args, **kwargs)
    return call
