"""The checkify transformation: ``check`` binds the ``check`` primitive, ``checkify(f)``
traces ``f``, discharges its checks into an error state (compiler/passes/checks.py, Note
[checks as error values]) and returns it as an ``Error`` value; ``check_error`` turns an
``Error`` back into checks. The public face is spmdc/experimental/checkify.py."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..compiler.passes.checks import discharge_checks
from ..compiler.primitives.checks import CheckSite, check_p
from ..compiler.primitives.logic import eq_p, not_p
from ..core import tracing
from ..core.tracing import Tracer, type_of
from ..core.tree import register_pytree_node_class, tree_flatten, tree_unflatten
from ..errors import (
    CheckifyRuntimeError,
    DivisionByZeroError,
    FailedCheckError,
    JaxException,
    NaNError,
    OOBError,
)
from ..runtime.array import Array
from .jit import eager_jit

__all__ = ["JaxException", "FailedCheckError", "NaNError", "DivisionByZeroError",
           "OOBError", "Error", "check", "debug_check", "check_error", "checkify",
           "user_checks", "nan_checks", "div_checks", "index_checks", "float_checks",
           "automatic_checks", "all_checks"]


user_checks = frozenset({FailedCheckError})
nan_checks = frozenset({NaNError})
div_checks = frozenset({DivisionByZeroError})
index_checks = frozenset({OOBError})
float_checks = nan_checks | div_checks
automatic_checks = float_checks | index_checks
all_checks = automatic_checks | user_checks


@register_pytree_node_class
class Error:
    """What ``checkify(f)`` returns beside ``f``'s result: the first check that failed,
    if any. Its leaves are the error code (-1: none; else the index of the failed site)
    and the payloads of the sites; batched (under vmap) when the code has a shape."""
    __slots__ = ("_code", "_payload", "_sites")

    def __init__(self, code: Any, payload: list[Any], sites: tuple[CheckSite, ...]):
        self._code = code
        self._payload = list(payload)
        self._sites = sites

    def tree_flatten(self) -> tuple[list[Any], Any]:
        return [self._code, *self._payload], self._sites

    @classmethod
    def tree_unflatten(cls, sites: Any, leaves: Any) -> Error:
        leaves = list(leaves)
        return cls(leaves[0], leaves[1:], sites)

    def _site_payload(self, k: int, idx: tuple[int, ...]) -> list[Any]:
        # The message formats arrays, as JAX's (``Array(nan, dtype=float32)`` in a repr).
        start = sum(_payload_count(s) for s in self._sites[:k])
        leaves = self._payload[start:start + _payload_count(self._sites[k])]
        return [x[idx] if idx else x for x in leaves]

    def get(self) -> str | None:
        """The message of the first failed check (with ``at mapped index i:`` per failing
        batch element under vmap), or None when every check passed."""
        code = np.asarray(self._code)
        messages = []
        for idx in np.ndindex(*code.shape):
            k = int(code[idx])
            if k < 0:
                continue
            msg = self._sites[k].message(tree_unflatten, self._site_payload(k, idx))
            messages.append(f"at mapped index {', '.join(map(str, idx))}: {msg}"
                            if code.shape else msg)
        return "\n".join(messages) if messages else None

    def throw(self) -> None:
        """Raise ``JaxRuntimeError`` with the message if a check failed."""
        msg = self.get()
        if msg is not None:
            raise CheckifyRuntimeError(msg)

    def __str__(self) -> str:
        return f"Error({self.get()})"

    __repr__ = __str__


def _payload_count(site: CheckSite) -> int:
    if site.kind == "check":
        return site.fmt_tree.num_leaves
    return 1 if site.kind == "oob" else 0


# --- check ---------------------------------------------------------------------------------

def _is_scalar_pred(pred: Any) -> bool:
    if isinstance(pred, bool):
        return True
    if isinstance(pred, (Array, Tracer)):
        t, _ = type_of(pred)
        return t.shape == () and t.dtype == np.bool_
    return False


def _check(pred: Any, msg: str, debug: bool, fmt_args: tuple[Any, ...],
           fmt_kwargs: dict[str, Any]) -> None:
    if not _is_scalar_pred(pred):
        name = "debug_check" if debug else "check"
        raise TypeError(f"{name} takes a scalar pred as argument, got {pred}")
    leaves, fmt_tree = tree_flatten((fmt_args, fmt_kwargs))
    for x in leaves:
        if not isinstance(x, (Array, Tracer, np.ndarray)):
            raise TypeError("Formatting arguments to checkify.check need to be PyTrees of "
                            f"arrays, but got {x!r} of type {type(x)}.")
    site = CheckSite("check", msg, fmt_tree, debug=debug)
    traced = [x for x in (pred, *leaves) if isinstance(x, Tracer)]
    if tracing.current_trace() is None and not traced:
        if not debug and not bool(pred):            # eagerly: raise now, as JAX
            raise CheckifyRuntimeError(site.message(tree_unflatten, leaves))
        return
    failed = tracing.bind(not_p, pred) if not isinstance(pred, bool) else (not pred)
    tracing.bind(check_p, failed, *leaves, site=site)


def check(pred: Any, msg: str, *fmt_args: Any, debug: bool = False,
          **fmt_kwargs: Any) -> None:
    """Fail with ``msg`` (formatted with ``fmt_args`` / ``fmt_kwargs``, arrays whose
    run-time values fill it) when ``pred`` (a bool scalar) is False. Outside any
    transformation it raises at once; inside one it must be functionalized by
    ``checkify`` (see Note [checks as error values])."""
    _check(pred, msg, debug, fmt_args, fmt_kwargs)


def debug_check(pred: Any, msg: str, *fmt_args: Any, **fmt_kwargs: Any) -> None:
    """A ``check`` that runs only under ``checkify`` and is dropped elsewhere."""
    _check(pred, msg, True, fmt_args, fmt_kwargs)


def check_error(error: Error) -> None:
    """Raise if ``error`` holds a failure: at once outside transformations, else as the
    checks it came from (functionalized again by an enclosing ``checkify``)."""
    if not isinstance(error, Error):
        raise TypeError("check_error takes an Error as argument, got type "
                        f"{type(error)} instead.")
    leaves = [error._code, *error._payload]
    if not any(isinstance(x, Tracer) for x in leaves):
        error.throw()
        return
    code = error._code
    if type_of(code)[0].shape != ():
        raise ValueError("check_error: a batched Error (returned by vmap) cannot be "
                         "checked inside a transformation; check it outside, or call "
                         "check_error inside the vmapped function")
    start = 0
    for k, site in enumerate(error._sites):
        n = _payload_count(site)
        failed = tracing.bind(eq_p, code, np.int32(k))
        tracing.bind(check_p, failed, *error._payload[start:start + n], site=site)
        start += n


# --- checkify ------------------------------------------------------------------------------

def _enabled(errors: Any) -> frozenset[str]:
    kinds = set()
    for e in errors:
        if not (isinstance(e, type) and issubclass(e, JaxException) and e.kind):
            raise TypeError(f"checkify: errors must be a set of error categories "
                            f"(checkify.user_checks, nan_checks, div_checks ...), got {e!r}")
        kinds.add(e.kind)
    return frozenset(kinds)


def _is_dynamic(x: Any) -> bool:
    # As JAX, checkify closes over its arguments: only arrays become the program's
    # inputs; a Python or NumPy value reaches ``f`` as it was passed.
    return isinstance(x, (Tracer, Array))


def checkify(f: Callable[..., Any], errors: Any = user_checks
             ) -> Callable[..., tuple[Error, Any]]:
    """``f`` with its checks (and the automatic ones ``errors`` enables) functionalized:
    the new function returns ``(error, f's result)``. See Note [checks as error values]."""
    enabled = _enabled(errors)

    def checked(*args: Any, **kwargs: Any) -> tuple[Error, Any]:
        leaves, in_tree = tree_flatten((args, kwargs))
        dynamic = [_is_dynamic(x) for x in leaves]

        def run(*values: Any) -> tuple[Error, Any]:
            it = iter(values)
            full = [next(it) if d else x for x, d in zip(leaves, dynamic, strict=True)]
            return _checkify_flat(f, enabled, full, dynamic, in_tree)

        dyn = [x for x, d in zip(leaves, dynamic, strict=True) if d]
        if tracing.current_trace() is None:
            return eager_jit(run)(*dyn)
        return run(*dyn)
    return checked


def _checkify_flat(f: Callable[..., Any], enabled: frozenset[str], full: list[Any],
                   dynamic: list[bool], in_tree: Any) -> tuple[Error, Any]:
    """Trace ``f`` on the leaves ``full`` (traced where ``dynamic``), discharge its checks
    and inline the result into the current trace."""
    values = [x for x, d in zip(full, dynamic, strict=True) if d]
    typed = [type_of(x) for x in values]
    out_tree: list[Any] = []

    def fun(tracers: list[Tracer]) -> list[Any]:
        it = iter(tracers)
        call = [next(it) if d else x for x, d in zip(full, dynamic, strict=True)]
        args, kwargs = tree_unflatten(in_tree, call)
        out_leaves, tree = tree_flatten(f(*args, **kwargs))
        out_tree.append(tree)
        return out_leaves

    func, out_weak, captured = tracing.trace_function(
        fun, [t for t, _ in typed], [w for _, w in typed], "checkify")
    checked, sites = discharge_checks(func, enabled)
    n_extra = len(checked.outputs) - len(func.outputs)
    outs = tracing.apply_func(checked, [*values, *captured], [*out_weak, *[False] * n_extra])
    n_out = len(func.outputs)
    error = Error(outs[n_out], outs[n_out + 1:], tuple(sites))
    return error, tree_unflatten(out_tree[0], outs[:n_out])
