"""``spmdc.ad_checkpoint`` (``jax.ad_checkpoint``): rematerialisation.

``checkpoint(f, policy=...)`` (also ``remat``) traces ``f`` to one ``checkpoint`` equation
(compiler/primitives/remat.py, Note [checkpoint]): under ``grad`` its forward pass keeps
only the residuals the policy saves and the backward pass recomputes the others.
``checkpoint_name(x, name)`` labels values for the name-based policies, and
``print_saved_residuals(f, *args)`` lists what the VJP of ``f`` keeps from its forward pass.

A policy is called as ``policy(prim, *in_types, **params)`` for each equation of the
forward pass and answers ``True`` or ``Saveable`` (save its outputs) or ``False`` or
``Recompute``, with spmdc's primitives (their ``name`` is JAX's name: ``dot_general``,
``name``, ...), TensorTypes (``.shape``, ``.dtype``) and spmdc's params
(``dot_general`` has ``contract`` and ``batch``).
"""
from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from types import SimpleNamespace
from typing import Any

import numpy as np

from .compiler.ir import Eqn, Func, Var
from .compiler.passes.autodiff import is_float, vjp_func
from .compiler.passes.residuals import split_vjp, used_inputs
from .compiler.primitives.remat import checkpoint_p, name_p
from .core.tracing import bind, current_trace, trace_function, type_of, where
from .core.tree import keystr, tree_flatten, tree_flatten_with_path, tree_map, tree_unflatten
from .errors import UserSource
from .tracebacks import api_boundary

__all__ = ["checkpoint", "remat", "checkpoint_name", "checkpoint_policies",
           "print_saved_residuals", "saved_residuals", "Recompute", "Saveable"]


# --- policies --------------------------------------------------------------------------------

def everything_saveable(*_: Any, **__: Any) -> bool:
    """Save every value (as without ``checkpoint``)."""
    return True


def nothing_saveable(*_: Any, **__: Any) -> bool:
    """Save nothing but the function's inputs: the backward pass recomputes the rest (the
    default policy of ``checkpoint``)."""
    return False


_DOTS = frozenset({"dot_general", "conv_general_dilated"})


def dots_saveable(prim: Any, *_: Any, **__: Any) -> bool:
    """Save the results of matrix multiplications (and convolutions)."""
    return prim.name in _DOTS


checkpoint_dots = dots_saveable


def dots_with_no_batch_dims_saveable(prim: Any, *_: Any, **params: Any) -> bool:
    """Save the results of matrix multiplications that have no batch dimensions."""
    return prim.name == "dot_general" and params["batch"] == ((), ())


def _names(what: str, names: Sequence[Any]) -> frozenset[str]:
    for n in names:
        if not isinstance(n, str):
            raise TypeError(f"{what} takes names (strings), got {n!r}")
    return frozenset(names)


def save_only_these_names(*names: str) -> Callable[..., bool]:
    """Save only the values named (with ``checkpoint_name``) by one of ``names``."""
    chosen = _names("save_only_these_names", names)

    def policy(prim: Any, *_: Any, **params: Any) -> bool:
        return prim is name_p and params["name"] in chosen
    return policy


def save_any_names_but_these(*names: str) -> Callable[..., bool]:
    """Save only named values, except those named by one of ``names``."""
    excluded = _names("save_any_names_but_these", names)

    def policy(prim: Any, *_: Any, **params: Any) -> bool:
        return prim is name_p and params["name"] not in excluded
    return policy


def save_anything_except_these_names(*names: str) -> Callable[..., bool]:
    """Save every value except those named by one of ``names``."""
    excluded = _names("save_anything_except_these_names", names)

    def policy(prim: Any, *_: Any, **params: Any) -> bool:
        return not (prim is name_p and params["name"] in excluded)
    return policy


def save_from_both_policies(policy_1: Callable[..., bool],
                            policy_2: Callable[..., bool]) -> Callable[..., bool]:
    """Save what either policy saves."""
    def policy(prim: Any, *args: Any, **params: Any) -> bool:
        return _decision(policy_1, policy_1(prim, *args, **params)) or \
            _decision(policy_2, policy_2(prim, *args, **params))
    return policy


checkpoint_policies = SimpleNamespace(
    everything_saveable=everything_saveable, nothing_saveable=nothing_saveable,
    dots_saveable=dots_saveable, checkpoint_dots=checkpoint_dots,
    dots_with_no_batch_dims_saveable=dots_with_no_batch_dims_saveable,
    save_only_these_names=save_only_these_names,
    save_any_names_but_these=save_any_names_but_these,
    save_anything_except_these_names=save_anything_except_these_names,
    save_from_both_policies=save_from_both_policies)


class RecomputeType:
    """The type of ``Recompute``: a policy's answer that the backward pass recomputes the
    equation's outputs (as False)."""
    __slots__ = ()

    def __repr__(self) -> str:
        return "Recompute"


class SaveableType:
    """The type of ``Saveable``: a policy's answer that the forward pass saves the
    equation's outputs (as True)."""
    __slots__ = ()

    def __repr__(self) -> str:
        return "Saveable"


Recompute, Saveable = RecomputeType(), SaveableType()


def _decision(policy: Any, result: Any) -> bool:
    if isinstance(result, (bool, np.bool_)):
        return bool(result)
    if result is Saveable or result is Recompute:
        return result is Saveable
    raise TypeError(f"Value returned by a remat policy should be a bool or "
                    f"`ad_checkpoint.Recompute`, `ad_checkpoint.Saveable`: the checkpoint "
                    f"policy {_fn_name(policy)} returned {result!r} of type "
                    f"{type(result).__name__}. Offloading to another memory "
                    "(`Offloadable`) is not supported by spmdc")


class _Policy:
    """A policy as the ``checkpoint`` equation holds it (``saves`` and ``ir_text``)."""

    def __init__(self, fn: Callable[..., Any]):
        self.fn = fn

    def saves(self, eqn: Eqn) -> bool:
        return _decision(self.fn, self.fn(eqn.prim, *(a.type for a in eqn.inputs),
                                          **eqn.params))

    def ir_text(self) -> str:
        return _fn_name(self.fn)


def _fn_name(fn: Any) -> str:
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) \
        or type(fn).__name__
    return name.replace(".<locals>", "").replace("<lambda>", "lambda").replace(".", "_")


_DEFAULT_POLICY = _Policy(nothing_saveable)


# --- checkpoint ------------------------------------------------------------------------------

def checkpoint(fun: Callable[..., Any] | None = None, *, prevent_cse: bool = True,
               policy: Callable[..., Any] | None = None,
               static_argnums: int | Sequence[int] = ()) -> Any:
    """``fun`` whose VJP recomputes, in the backward pass, the values ``policy`` does not
    save (default: all but the inputs). ``static_argnums``: positions of arguments that
    are Python values (not traced). ``prevent_cse=False`` lets XLA merge the recomputation
    with the forward pass (useful inside ``scan``, which prevents that already)."""
    if fun is None:
        return functools.partial(checkpoint, prevent_cse=prevent_cse, policy=policy,
                                 static_argnums=static_argnums)
    if not callable(fun):
        raise TypeError(f"checkpoint expects a callable, got {type(fun).__name__}")
    if policy is not None and not callable(policy):
        raise TypeError(f"checkpoint: policy must be a function such as "
                        f"checkpoint_policies.dots_saveable, got {policy!r}")
    if not isinstance(prevent_cse, (bool, np.bool_)):
        raise TypeError(f"checkpoint: prevent_cse must be a bool, got {prevent_cse!r}")
    statics = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
    for i in statics:
        if not isinstance(i, int):
            raise TypeError(f"checkpoint: static_argnums must be ints, got {static_argnums!r}")
    held = _DEFAULT_POLICY if policy is None else _Policy(policy)

    @api_boundary  # See Note [library frames] (errors.py)
    @functools.wraps(fun)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        static = tuple(sorted({_position(i, len(args)) for i in statics}))
        dynamic = [a for k, a in enumerate(args) if k not in static]
        leaves, tree = tree_flatten((dynamic, kwargs))
        sigs = [_leaf_type(v) for v in leaves]
        box: list[Any] = []

        def call(tracers: list[Any]) -> list[Any]:
            dyn, kw = tree_unflatten(tree, tracers)
            it = iter(dyn)
            full = [args[k] if k in static else next(it) for k in range(len(args))]
            out_leaves, out_tree = tree_flatten(fun(*full, **kw))
            box.append(out_tree)
            return out_leaves

        func, out_weak, consts = trace_function(call, [t for t, _ in sigs],
                                                [w for _, w in sigs], _fn_name(fun),
                                                typed_by=leaves, constrain=False)
        outs = bind(checkpoint_p, *leaves, *consts, call=func, policy=held,
                    prevent_cse=bool(prevent_cse), num_residuals=0)
        for o, w in zip(outs, out_weak, strict=True):
            o.weak = w
        return tree_unflatten(box[0], outs)

    return wrapper


remat = checkpoint


def _position(i: int, n: int) -> int:
    if not -n <= i < n:
        raise ValueError(f"checkpoint: static_argnums {i} is out of range for a call with "
                         f"{n} positional arguments{where()}")
    return i % n


def _leaf_type(v: Any) -> Any:
    try:
        return type_of(v)
    except (TypeError, ValueError):
        raise TypeError(f"checkpoint: an argument of type {type(v).__name__} is not an array; "
                        f"mark its position in static_argnums{where()}") from None


def checkpoint_name(x: Any, name: str) -> Any:
    """``x`` (a pytree) itself, its values named ``name`` for the checkpoint policies."""
    if not isinstance(name, str):
        raise TypeError(f"checkpoint_name: the name must be a string, got {name!r}")
    if current_trace() is None:
        return x
    return tree_map(lambda v: bind(name_p, v, name=name), x)


# --- saved residuals -------------------------------------------------------------------------

def saved_residuals(f: Callable[..., Any], *args: Any, **kwargs: Any) -> list[tuple[Any, str]]:
    """What the VJP of ``f`` at these arguments keeps from its forward pass: a list of
    (type, where it comes from)."""
    leaves_with_paths, tree = tree_flatten_with_path((args, kwargs))
    leaves = [v for _, v in leaves_with_paths]
    names = _argument_names(f, args, [p for p, _ in leaves_with_paths])
    sigs = [type_of(v) for v in leaves]
    box: list[Any] = []

    def call(tracers: list[Any]) -> list[Any]:
        a, kw = tree_unflatten(tree, tracers)
        out_leaves, out_tree = tree_flatten(f(*a, **kw))
        box.append(out_tree)
        return out_leaves

    func, _, consts = trace_function(call, [t for t, _ in sigs], [w for _, w in sigs],
                                     _fn_name(f))
    names += ["a constant"] * len(consts)
    wrt = [is_float(v.type) for v in func.inputs[:len(leaves)]] + [False] * len(consts)
    seeded = [isinstance(a, Var) and is_float(a.type) for a in func.outputs]
    vjp = vjp_func(func, wrt, seeded)
    split = split_vjp(vjp, len(func.inputs), len(func.outputs), lambda eqn: True)
    reads = used_inputs(split.backward)
    out = [(v.type, f"from the argument {names[k]}" if k < len(leaves) else "from a constant")
           for k, (v, r) in enumerate(zip(split.forward.inputs, reads, strict=False)) if r]
    n_out = len(func.outputs)
    residuals = list(zip(split.residuals, split.forward.outputs[n_out:], strict=True))
    # See Note [residuals in JAX's order]
    first = {}
    for k, eqn in enumerate(split.forward.eqns):
        first.setdefault(id(eqn.source), k)
    order = {id(eqn): k for k, eqn in enumerate(split.forward.eqns)}
    residuals.sort(key=lambda r: (first.get(id(r[0].source), order.get(id(r[0]), 0)),
                                  order.get(id(r[0]), 0)))
    for eqn, var in residuals:
        out.append((var.type, _describe(eqn, eqn.outputs.index(var))))
    return out


# Note [residuals in JAX's order]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# ``print_saved_residuals`` lists the arguments the backward pass reads, then the values
# it keeps, in JAX's order: JAX linearizes equation by equation, so what the derivative
# of one user operation keeps (``cos`` for a ``sin``) comes right after that operation,
# before the next one's. spmdc's forward program computes the derivatives' values after
# the primal ones; every equation a pass emits for a user operation carries that
# operation's source (one object per traced operation), so the residuals are ordered by
# the first equation of their operation, then by their own position. Each is named as
# JAX names it: ``file:line:column (function)`` (``UserSource.located`` in errors.py).


def print_saved_residuals(f: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
    """Print what the VJP of ``f`` keeps from its forward pass, one value a line."""
    for t, src in saved_residuals(f, *args, **kwargs):
        print(f"{t} {src}")


def _describe(eqn: Eqn, index: int) -> str:
    if eqn.prim is checkpoint_p:          # a checkpoint's residual: say what it saved
        call: Func = eqn.params["call"]
        inner = call.outputs[index]
        if isinstance(inner, Var):
            for e in call.eqns:
                if inner in e.outputs:
                    return _describe(e, e.outputs.index(inner))
    src = eqn.source or "an unknown location"
    if isinstance(src, UserSource):
        src = src.located()
    if eqn.prim is name_p:
        return f"named {eqn.params['name']!r} from {src}"
    return f"output of {eqn.prim.name} from {src}"


def _argument_names(f: Callable[..., Any], args: tuple[Any, ...],
                    paths: list[Any]) -> list[str]:
    try:
        params = list(inspect.signature(f).parameters)
    except (TypeError, ValueError):
        params = []
    names = []
    for path in paths:
        top, k = path[0], path[1]               # (args or kwargs, position or key)
        rest = keystr(path[2:])
        key = getattr(k, "idx", getattr(k, "key", k))
        if getattr(top, "idx", 0) == 0:
            base = params[key] if isinstance(key, int) and key < len(params) else f"args[{key}]"
        else:
            base = str(key)
        names.append(base + rest)
    return names
