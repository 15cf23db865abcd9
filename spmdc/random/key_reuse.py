"""The key-reuse checker (``jax.debug_key_reuse`` / ``jax_debug_key_reuse``): with it on,
a typed key that ``spmdc.random`` has already consumed raises ``KeyReuseError`` when it is
consumed again.

Note [key reuse]
~~~~~~~~~~~~~~~~
JAX's checker gives each primitive a signature (which key operands it consumes, which
outputs are fresh keys, which outputs forward an input key) and checks them eagerly on a
``_consumed`` flag of each key array, and statically over each traced jaxpr. spmdc's
typed keys are not IR values (Note [typed keys] in spmdc/random/keys.py): the IR sees
only their ``uint32[..., 2]`` data, and the random functions are ordinary lax programs.
So the signatures live where the key wrappers do, in ``spmdc.random``:

* every ``PRNGKeyArray`` holds a consumption cell (None until it is first used;
  ``key._consumed`` reads it: a bool, or a bool array where part of the keys is);
* a random function that draws from a key or splits it *consumes* it (``bits``, every
  sampler, ``split``: JAX's ``random_bits``, ``random_gamma`` and ``random_split``);
  ``fold_in``, ``key_data``, ``key_impl`` and ``clone`` do not (``clone`` returns a
  new key array with a fresh cell, as ``random_clone`` is a Source);
* ``keys[i]`` with a static basic index consumes the keys it selects and returns fresh
  ones (JAX's ``slice``); an array index consumes nothing (JAX's ``gather``);
  ``jnp.concatenate``/``jnp.stack`` of several key arrays consume them all;
* the shape functions JAX forwards (``reshape``, ``ravel``, ``squeeze``,
  ``expand_dims``, ``broadcast_to``, ``key.copy()``) return keys whose consumption
  follows their operand's (below); the rest (``transpose``, ``split``'s results ...)
  give keys with a fresh cell.

A consumption is checked where it happens, with JAX's message for the place. Outside
any trace (and in the traces of ``vmap``, ``grad`` and ``jvp`` called outside ``jit``,
which JAX runs op by op) the key's flag is JAX's eager one: "Previously-consumed key
passed to jit-compiled function at index 0" for the samplers JAX jits, naming the
primitive (``random_bits``, ``random_split``, ``slice``) for the others and under
``disable_jit``; an eager forward copies the flag, as JAX's eager signatures do. While
a ``jit`` (or a loop body, a ``cond`` branch) is traced, the check applies to keys whose
data is a tracer of the trace being recorded (made in it or given to it as arguments)
and the message is JAX's static one ("In random_bits, argument 0 is already
consumed.", "In jit, ..." for a jitted sampler); forwards share the flag. Keys from an
enclosing scope (a concrete key closed over by a jitted function, an outer tracer
closed over by a ``cond`` branch or a loop body) are neither checked nor marked there:
whether they are consumed depends on how often the inner program runs, which the
wrapper does not know. So spmdc reports no reuse JAX would not; the reuses JAX reports
and spmdc does not are those that need signatures of whole programs: an eager key
consumed by a ``jit``-compiled function of the user's (JAX's "Previously-consumed key
passed to jit-compiled function" at the second call), a key constant consumed in a
``scan``/``while_loop`` body ("... leads to key reuse when repeatedly executed"), and
consumption through ``jax.tree.map`` or pytree round trips (a rebuilt key array gets a
fresh flag). ``jax.experimental.key_reuse`` (its signature objects and
``check_key_reuse``) is not provided.

The cost while the option is off is one read of the option per random call; key
arrays carry their cell always (one slot), so turning the option on mid-program
checks from then on.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..core.config import disable_jit_enabled
from ..core.tracing import Tracer, current_trace
from ..errors import KeyReuseError
from ..runtime.config_states import debug_key_reuse

__all__ = ["ConsumptionCell", "checking", "consumed", "consume", "consume_all", "forward",
           "use_slice", "NOT_CONSUMING"]

# The functions of spmdc.random that take a key and do not consume it.
NOT_CONSUMING = frozenset({"fold_in", "key_data", "key_impl", "clone"})
# JAX's primitive that consumes the key, by function of spmdc.random (the rest draw bits:
# random_bits). JAX's bits and split bind it directly; every other sampler is a jitted
# function of JAX's, which its messages name ("jit-compiled function" eagerly, "jit"
# while tracing) unless jit is disabled.
_PRIMITIVES = {"slice": "slice", "bits": "random_bits", "split": "random_split",
               "gamma": "random_gamma", "loggamma": "random_gamma",
               "concatenate": "concatenate", "stack": "concatenate"}
_DIRECT = frozenset({"bits", "split", "slice"})


class ConsumptionCell:
    """What of a key array has been consumed: ``consumed`` is a bool or a bool array of
    the keys' shape; ``parent`` is the cell of the key array this one forwards while
    tracing (a reshape, a copy), whose consumption it shares. See Note [key reuse]."""
    __slots__ = ("consumed", "parent")

    def __init__(self, consumed: bool | np.ndarray = False,
                 parent: ConsumptionCell | None = None):
        self.consumed = consumed
        self.parent = parent

    def chain(self) -> list[ConsumptionCell]:
        cells, cell = [], self
        while cell is not None:
            cells.append(cell)
            cell = cell.parent
        return cells

    def __repr__(self) -> str:
        return f"ConsumptionCell(consumed={self.consumed!r})"


def checking() -> bool:
    """Whether the key-reuse checker is on (``jax_debug_key_reuse``)."""
    return debug_key_reuse.value


def _scope(data: Any) -> bool | None:
    """None: a key of an enclosing scope, neither checked nor marked here (See Note [key
    reuse]); else whether JAX would check it eagerly (True: outside any trace, or in
    traces of vmap/grad/jvp called outside jit, which JAX runs op by op) or statically
    (False: under jit, in a loop body ...)."""
    trace = current_trace()
    if not isinstance(data, Tracer):
        return True if trace is None else None
    if data._trace is not trace:
        return None
    while trace is not None:            # concrete traces: eager transformations' own
        if trace.sources is None and (trace.view is None or
                                      trace.view.kind not in ("vmap", "grad", "jvp")):
            return False
        trace = trace.parent
    return True


def consumed(cell: ConsumptionCell | None) -> Any:
    """JAX's ``key._consumed``: a bool, or a bool array where part of the keys is."""
    if cell is None:
        return np.False_
    if cell.parent is None:
        return np.asarray(cell.consumed) if isinstance(cell.consumed, np.ndarray) \
            else np.bool_(cell.consumed)
    return np.bool_(any(np.any(c.consumed) for c in cell.chain()))


def _error(eager: bool, name: str, index: int) -> KeyReuseError:
    primitive = _PRIMITIVES.get(name, "random_bits")
    jitted = name not in _DIRECT and not disable_jit_enabled()
    if not eager:
        where = "jit" if jitted and primitive != "concatenate" else primitive
        return KeyReuseError(f"In {where}, argument {index} is already consumed.")
    where = "jit-compiled function" if jitted else primitive
    return KeyReuseError(f"Previously-consumed key passed to {where} at index {index}")


def consume(name: str, data: Any, cell: ConsumptionCell | None,
            index: int = 0) -> ConsumptionCell | None:
    """``spmdc.random.<name>`` (or ``jnp.<name>`` of keys) is given the key array with
    data ``data`` and cell ``cell`` as its argument ``index``: raise ``KeyReuseError``
    if any of it was consumed, else mark it all consumed. Returns the key's cell (a new
    one if it had none). Call only while ``checking()``."""
    eager = _scope(data)
    if eager is None:
        return cell
    if cell is None:
        return ConsumptionCell(True)
    if any(np.any(c.consumed) for c in cell.chain()):
        raise _error(eager, name, index)
    for c in cell.chain():
        c.consumed = True
    return cell


def consume_all(name: str, keys: list[Any]) -> None:
    """``keys`` (key arrays) are the operands of one operation that consumes them all
    (``concatenate``): each is checked before any is marked, as JAX checks a signature."""
    for i, key in enumerate(keys):
        if _scope(key._base) is not None and key._cell is not None and \
                any(np.any(c.consumed) for c in key._cell.chain()):
            raise _error(_scope(key._base), name, i)
    for key in keys:
        if _scope(key._base) is not None:
            key._cell = key._cell or ConsumptionCell()
            for c in key._cell.chain():
                c.consumed = True


def forward(data: Any, cell: ConsumptionCell | None
            ) -> tuple[ConsumptionCell | None, ConsumptionCell | None]:
    """``(the operand's cell, the result's)`` for a key array made from keys with data
    ``data`` and cell ``cell`` by an operation JAX forwards (reshape, squeeze,
    expand_dims, broadcast, copy): eagerly the result's is a copy of the operand's
    consumption, as JAX's eager signatures copy the flag; while tracing it shares the
    operand's, as JAX's static analysis follows forwarded values."""
    eager = _scope(data)
    if eager is None:
        return cell, None
    if eager:
        return cell, ConsumptionCell(True) if np.any(consumed(cell)) else None
    cell = ConsumptionCell() if cell is None else cell
    return cell, ConsumptionCell(False, cell)


def use_slice(data: Any, cell: ConsumptionCell | None, shape: tuple[int, ...],
              index: Any) -> ConsumptionCell | None:
    """``keys[index]`` with a static (basic) ``index`` consumes the keys it selects, as
    JAX's ``slice`` signature does; the keys it returns are fresh. Returns the parent's
    cell (a new one if it had none)."""
    eager = _scope(data)
    if eager is None or not _static(index):
        return cell             # a dynamic index: JAX's gather forwards, consuming nothing
    mask = np.zeros(shape, dtype=bool)
    try:
        mask[index] = True
    except (IndexError, TypeError, ValueError):
        return cell             # a bad index: the indexing itself says what is wrong
    if cell is None:
        cell = ConsumptionCell()
    reused = np.any(np.logical_and(cell.consumed, mask)) if np.shape(cell.consumed) in (
        (), shape) else np.any(cell.consumed)
    if reused or any(np.any(c.consumed) for c in cell.chain()[1:]):
        raise _error(eager, "slice", 0)
    if not np.all(mask):
        cell.consumed = np.logical_or(cell.consumed, mask) \
            if np.shape(cell.consumed) in ((), shape) else True
    else:
        cell.consumed = True
    for c in cell.chain()[1:]:
        if np.shape(c.consumed) == shape:
            c.consumed = np.logical_or(c.consumed, mask)
    return cell


def _static(index: Any) -> bool:
    """Whether ``index`` is a basic index known while tracing: ints, slices of ints,
    None and Ellipsis (JAX's ``slice``; an array index is its ``gather``)."""
    parts = index if isinstance(index, tuple) else (index,)
    return all(p is None or p is Ellipsis or (isinstance(p, (int, np.integer))
                                              and not isinstance(p, bool))
               or (isinstance(p, slice) and all(
                   b is None or isinstance(b, (int, np.integer))
                   for b in (p.start, p.stop, p.step)))
               for p in parts)
