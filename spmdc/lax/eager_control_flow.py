"""Control flow called outside any trace (``lax.scan(f, init, xs)`` at top level): the
call run as one jitted program, traced once per function (Note [eager control flow
traces once per function]), also under ``disable_jit``."""
from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from typing import Any

from ..core.config import disable_jit, disable_jit_enabled
from ..transforms.jit import Jitted

__all__ = ["run_staged", "staged", "staged_per_function"]


def run_staged(jitted: Jitted, *args: Any) -> Any:
    """Outside any trace, run ``jitted(*args)`` as one jitted program, also under
    ``disable_jit``: there a plain ``jit`` would call its function with no trace current,
    which would call the control-flow function again without end (chex's ``fake_jit`` runs
    whole test suites so). The bodies then run traced, where JAX's would run as a Python
    loop: the values are the same, a ``print`` in a body prints when it is traced."""
    if disable_jit_enabled():
        with disable_jit(False):
            return jitted(*args)
    return jitted(*args)


def staged(fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)`` as one jitted program of a fresh trace (see ``run_staged``)."""
    return run_staged(Jitted(fn), *args)


# Note [eager control flow traces once per function]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# Outside any trace, ``lax.scan(f, init, xs)`` (and map, fori_loop, while_loop, cond,
# switch) runs as one jitted program. JAX traces the body once per function and abstract
# arguments (``pe.trace_to_jaxpr`` is a weak-reference LRU cache keyed by the function
# and the avals) and its eager primitive call is cached by the traced body, so calling
# ``lax.scan(step, ...)`` again with the same ``step`` neither traces nor compiles. Here
# the program is a ``Jitted`` kept per function: ``_eager_programs`` maps the body
# function, weakly, to one Jitted per (control-flow function, the other functions
# (weakly), the static parameters with their types), and that Jitted's own cache is
# keyed by the arguments' shapes, dtypes and weak types and the config states (Note
# [shared jit cache] in transforms/jit.py). The Jitted's function holds the user's
# functions by weak reference only, so an entry goes when its function does, and
# ``clear_caches()`` empties it. As in JAX, a value the body reads from a global or a
# closure cell when traced stays in the program until the function object changes (a
# fresh ``lambda`` each call is a new function: it is traced and compiled again). A
# function that cannot be weakly referenced or hashed, or a static parameter that cannot
# be hashed (a concrete array as a fori_loop bound), gets a fresh trace every call.
_eager_programs: weakref.WeakKeyDictionary[Any, dict[Any, Jitted]] = \
    weakref.WeakKeyDictionary()


def staged_per_function(run: Callable[..., Any], funs: Sequence[Callable[..., Any]],
                         statics: tuple[Any, ...], *args: Any) -> Any:
    """``run(*funs, *statics, *args)`` outside any trace as one jitted program, traced
    once per function (Note [eager control flow traces once per function])."""
    try:
        per_fun = _eager_programs.get(funs[0])
        if per_fun is None:
            per_fun = _eager_programs[funs[0]] = {}
        others = tuple(weakref.ref(f) for f in funs[1:])
        key = (run, others, tuple((type(v), v) for v in statics))
        jitted = per_fun.get(key)
    except TypeError:           # not weakly referenceable, or unhashable
        return staged(lambda *a: run(*funs, *statics, *a), *args)
    if jitted is None:
        refs = (weakref.ref(funs[0]), *others)

        def program(*a: Any) -> Any:
            return run(*(r() for r in refs), *statics, *a)
        program.__name__ = run.__name__.strip("_")
        jitted = per_fun[key] = Jitted(program)
    return run_staged(jitted, *args)
