"""grad, value_and_grad, vjp: reverse mode through the autodiff pass.

Each traces the function into a Func, runs ``vjp_func`` (passes/autodiff.py) and applies
the result: inlined under another transformation, compiled at top level. Values closed
over from an enclosing trace are inputs the pass does not differentiate, which is what
keeps nested derivatives of closures free of perturbation confusion. ``jacrev`` and
``hessian``, built on ``vjp``, are in jacobians.py.
"""
from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..compiler.ir import Func
from ..compiler.passes import run_pass
from ..compiler.passes.autodiff import is_float, vjp_func
from ..compiler.passes.cleanup import cleanup
from ..core import mutable_hi
from ..core.pytree_tracing import fun_name as _fun_name
from ..core.pytree_tracing import trace_pytree
from ..core.tracer_text import TracerView
from ..core.tracing import Tracer, apply_func, current_trace, type_of, where
from ..core.tree import keystr, tree_flatten, tree_leaves, tree_structure, tree_unflatten
from ..core.tree_cycles import raise_if_cycle
from ..runtime.array import Array
from ..tracebacks import api_boundary
from ..tree_util import Partial
from .arguments import (
    check_argnums,
    check_array_arguments,
    check_array_results,
    check_cotangent,
    checking_results,
)
from .forward import float0
from .hi_arguments import mutable_hi_positions, value_and_grad_writing_back
from .jit import Jitted, _display_name, eager_jit
from .mapping import refuse_in_shard_map_body
from .refs import check_no_ref_arguments, refs_as_aux

__all__ = ["grad", "value_and_grad", "vjp"]

# Note [what grad traces]
# JAX's grad differentiates args[argnums] and passes every other argument, and every
# keyword argument, to the function as it is: they may be any Python objects (Equinox's
# filter_grad passes the non-array half of a model, activation functions included, as a
# positional argument after the differentiated one), and a Python number among them
# stays a Python number. So only args[argnums] are traced as the program's inputs (each
# leaf must be an array: _check_input) and differentiated. Of the rest, the array leaves
# (spmdc's Arrays and tracers, NumPy arrays and scalars) are inputs of the program too,
# not differentiated, so that the next call with other values of them runs the same
# program (Note [eager transformations trace every call] in eager.py); every other leaf,
# a Python number included, reaches the function as it is. Likewise the leaves of
# ``has_aux``'s aux that are not traced values (a string, a Python number) come back as
# they are; only its traced leaves are outputs of the program.

_ARRAY_VALUES = (Tracer, Array, np.ndarray, np.generic)


def _argnums(argnums: int | Sequence[int], nargs: int, what: str) -> tuple[int, ...]:
    nums = check_argnums(what, argnums)
    for i in nums:
        if not -nargs <= i < nargs:
            raise ValueError(f"{what}: argnums={argnums} is out of range for a function "
                             f"called with {nargs} positional arguments{where()}")
    return tuple(i % nargs for i in nums)


def _check_input(what: str, holomorphic: bool, allow_int: bool, leaf: Any, path: str) -> None:
    """JAX's rules for a differentiated input of grad/jacrev (``allow_int``: integer and
    bool inputs get float0 gradients; see Note [integer tangents] in forward.py)."""
    t, _ = type_of(leaf)
    if holomorphic and t.dtype.kind != "c":
        raise TypeError(f"{what} with holomorphic=True requires inputs with complex dtype, "
                        f"but got {t.dtype.name} for {path}{where()}")
    if not is_float(t) and not allow_int:
        raise TypeError(f"{what} requires real- or complex-valued inputs (input dtype that "
                        f"is a sub-dtype of np.inexact), but got {t.dtype.name} for {path}. "
                        "If you want to use Boolean- or integer-valued inputs, use vjp or set "
                        "allow_int to True; otherwise differentiate with respect to floating "
                        "point arguments only (argnums), or convert the input with "
                        f".astype(float){where()}")


def _check_output(what: str, holomorphic: bool, t: Any) -> None:
    """JAX's rules for the differentiated output of grad/jacrev."""
    if holomorphic:
        if t.dtype.kind != "c":
            raise TypeError(f"{what} with holomorphic=True requires outputs with complex "
                            f"dtype, but got {t.dtype.name}{where()}")
    elif t.dtype.kind == "c":
        raise TypeError(f"{what} requires real-valued outputs (output dtype that is a "
                        f"sub-dtype of np.floating), but got {t.dtype.name}. For holomorphic "
                        "differentiation, pass holomorphic=True. For differentiation of "
                        "non-holomorphic functions involving complex outputs, use vjp "
                        f"directly{where()}")
    elif not is_float(t):
        raise TypeError(f"{what} requires real-valued outputs (output dtype that is a "
                        f"sub-dtype of np.floating), but got {t.dtype.name}. For "
                        "differentiation of functions with integer outputs, use vjp "
                        f"directly{where()}")


def _no_reduce_axes(what: str, reduce_axes: Any) -> None:
    if reduce_axes:
        raise NotImplementedError(f"{what}: reduce_axes is not supported (JAX deprecated "
                                  "it); leave it empty")


def _with_float0_leaves(tree_of: Any, float_grads: Sequence[Any]) -> Any:
    """``tree_of``'s structure with the computed gradients at its float leaves and float0
    zeros at its integer and bool leaves (Note [integer tangents] in forward.py)."""
    leaves, tree = tree_flatten(tree_of)
    it = iter(float_grads)
    full = [next(it) if is_float(type_of(v)[0]) else np.zeros(np.shape(v), float0)
            for v in leaves]
    return tree_unflatten(tree, full)


def _pruned(func: Func, keep: Sequence[bool]) -> Func:
    """``func`` with only the outputs marked in ``keep``, after DCE and CSE.

    A VJP rule may recompute a forward value (``tanh`` for its derivative); CSE merges it
    with the forward copy. Dropping outputs the caller discards (the value, for ``grad``)
    lets DCE remove what only they needed, so the inlined program is already clean."""
    outputs = tuple(a for a, k in zip(func.outputs, keep, strict=True) if k)
    return run_pass("cleanup", cleanup, Func(func.name, func.inputs, func.eqns, outputs))


def _grad_view(primals: Any) -> TracerView:
    """Every input of ``vjp`` is differentiated (Note [tracer text])."""
    return TracerView("grad", (0,) * len(tree_leaves(primals)))


def _top_level(fn: Callable[..., Any]) -> Callable[..., Any]:
    """At top level run ``fn`` through jit (one compiled program); inside a trace, inline."""
    jitted: list[Jitted] = []

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if current_trace() is None:
            if not jitted:
                jitted.append(eager_jit(wrapper))
            return jitted[0](*args, **kwargs)
        return fn(*args, **kwargs)
    return wrapper


def value_and_grad(fun: Callable[..., Any], argnums: int | Sequence[int] = 0,
                   has_aux: bool = False, holomorphic: bool = False, allow_int: bool = False,
                   reduce_axes: Sequence[Any] = ()) -> Callable[..., Any]:
    """``(fun(*args), d fun / d args[argnums])`` for a scalar-valued ``fun``.

    As in JAX: ``holomorphic=True`` differentiates a complex function of complex inputs
    (the cotangent is 1, no conjugation); ``allow_int=True`` accepts integer and bool
    arguments, whose gradients are float0 zeros. Refs ``fun`` closes over and writes are
    updated (Note [refs as threaded state] in core/refs.py)."""
    if not callable(fun):
        raise TypeError(f"value_and_grad expects a callable, got {type(fun).__name__}")

    def unpack(r: Any) -> tuple[Any, list[Any]]:
        (value, (aux, finals)), g = r
        return (((value, aux), g) if has_aux else (value, g)), finals

    def value_and_grad_fn(*args: Any, **kwargs: Any) -> Any:
        # See Note [mutable hi values through jit]; the call this makes is allowed to
        # flatten them and takes the plain path
        if not mutable_hi.flatten_allowed() and mutable_hi_positions((args, kwargs)):
            what = "grad" if getattr(fun, "_spmdc_grad_only", False) else "value_and_grad"
            return value_and_grad_writing_back(
                fun, _argnums(argnums, len(args), what), has_aux, args, kwargs,
                lambda f: value_and_grad(f, argnums, True, holomorphic, allow_int,
                                         reduce_axes), what)
        return refs_as_aux(fun, has_aux, lambda f, aux: _value_and_grad(
            f, argnums, aux, holomorphic, allow_int, reduce_axes)(*args, **kwargs), unpack)
    return api_boundary(functools.wraps(fun)(value_and_grad_fn))


def _value_and_grad(fun: Callable[..., Any], argnums: int | Sequence[int],
                    has_aux: bool, holomorphic: bool, allow_int: bool,
                    reduce_axes: Sequence[Any]) -> Callable[..., Any]:
    name = _fun_name(fun)
    what = "grad" if getattr(fun, "_spmdc_grad_only", False) else "value_and_grad"
    shown = _display_name(fun)     # See Note [arguments that are not arrays]
    _no_reduce_axes(what, reduce_axes)

    def float_grads(nums: tuple[int, ...], rest: list[Any], rest_tree: Any,
                    arrays_at: list[int], aux_box: list[Any], diff: tuple[Any, ...],
                    arrays: list[Any]) -> Any:
        """(value, traced leaves of aux, gradients of the float leaves of ``diff``): one
        program. ``diff`` are the arguments at ``nums``; the others, and the keyword
        arguments, are ``rest_tree`` over the leaves ``rest``, of which those at
        ``arrays_at`` are the program's inputs ``arrays`` (Note [what grad traces]).
        ``aux_box`` gets aux's leaves, treedef and where its traced leaves are."""
        def wrapped(d: tuple[Any, ...], r: list[Any]) -> Any:
            leaves = list(rest)
            for k, x in zip(arrays_at, r, strict=True):
                leaves[k] = x
            full, kw = tree_unflatten(rest_tree, leaves)
            for i, x in zip(nums, d, strict=True):
                full[i] = x
            out = fun(*full, **kw)
            if has_aux:
                if not (isinstance(out, (tuple, list)) and len(out) == 2):
                    raise TypeError(f"{what} with has_aux=True expects the function to return "
                                    f"a pair (output, aux), but it returned "
                                    f"{type(out).__name__}{where()}")
                check_array_results(what, fun, shown, out[0])
                aux_leaves, aux_tree = tree_flatten(out[1])
                traced = [k for k, v in enumerate(aux_leaves) if isinstance(v, Tracer)]
                aux_box[:] = [_untraced(aux_leaves, traced), aux_tree, traced]
                return out[0], [aux_leaves[k] for k in traced]
            check_array_results(what, fun, shown, out)
            return out, None

        n_diff = len(tree_leaves(diff))
        view = TracerView("grad", (0,) * n_diff + (None,) * len(arrays))   # Note [tracer text]
        func, out_weak, captured, out_tree, leaves = trace_pytree(wrapped, (diff, arrays), {},
                                                                  name, concrete=True, view=view)
        main = func.out_types[0] if func.outputs else None
        if out_tree.num_leaves == 0 or main is None:
            raise TypeError(f"{what} requires a function returning a scalar array")
        main_tree = tree_structure(tree_unflatten(out_tree, list(range(out_tree.num_leaves)))[0])
        is_leaf = main_tree == tree_structure(0)
        n_diff = len(leaves) - len(arrays)
        wrt = [k < n_diff and is_float(type_of(v)[0]) for k, v in enumerate(leaves)]
        if not is_leaf or main.shape != ():
            # JAX differentiates while it traces: a rule that refuses the program (a
            # library's nondifferentiable primitive) speaks before this check does.
            run_pass("grad", vjp_func, func, [*wrt, *([False] * len(captured))])
            got = f"an output of shape {main.shape}" if is_leaf else f"a pytree {main_tree}"
            raise TypeError(f"{what} requires a function returning a scalar (shape ()), but "
                            f"{name} returned {got}. Reduce it (e.g. "
                            f".sum()) or use vjp/jacrev for non-scalar outputs{where()}")
        _check_output(what, holomorphic, main)
        n_out = len(func.outputs)
        refuse_in_shard_map_body("grad")
        grad_func = run_pass("grad", vjp_func, func, [*wrt, *([False] * len(captured))],
                             [True] + [False] * (n_out - 1))
        # grad discards the value: drop it, so that nothing only it needs survives.
        keep_value = what != "grad"
        grad_func = _pruned(grad_func, [keep_value] + [True] * (len(grad_func.outputs) - 1))
        one = np.ones((), main.dtype)
        outs = apply_func(grad_func, [*leaves, *captured, one],
                          [*(out_weak if keep_value else out_weak[1:]),
                           *(w for w, m in zip((type_of(v)[1] for v in leaves), wrt,
                                               strict=True) if m)])
        if not keep_value:
            outs.insert(0, None)
        value, aux = tree_unflatten(out_tree, outs[:n_out])
        return value, aux, outs[n_out:]

    def value_and_grad_fn(*args: Any, **kwargs: Any) -> Any:
        nums = _argnums(argnums, len(args), what)
        for i in nums:                      # See Note [refs as threaded state] (core/refs.py)
            check_no_ref_arguments(what, args[i], lambda path, i=i: f"args[{i}]{keystr(path)}")
            try:
                leaves = tree_flatten(args[i])[0]
            except ValueError as e:       # a cycle: named by the argument's path
                raise_if_cycle(args, kwargs, e)
                raise
            try:
                for leaf in leaves:
                    _check_input(what, holomorphic, allow_int, leaf, f"args[{i}]")
            except TypeError:
                check_array_arguments(what, shown, [(f"args[{i}]", args[i])])
                raise
        diff = tuple(args[i] for i in nums)
        try:
            rest, rest_tree = tree_flatten(
                ([None if i in nums else a for i, a in enumerate(args)], kwargs))
        except ValueError as e:           # a cycle: named by the argument's path
            raise_if_cycle(args, kwargs, e)
            raise
        arrays_at = [k for k, v in enumerate(rest) if isinstance(v, _ARRAY_VALUES)]

        aux_box: list[Any] = []

        def run(d: tuple[Any, ...], arrays: list[Any]) -> Any:
            return float_grads(nums, rest, rest_tree, arrays_at, aux_box, d, arrays)
        run.__name__ = run.__qualname__ = name      # the program's name
        if current_trace() is None:       # at top level: one program, through jit
            run = eager_jit(run)          # (traced every call, so aux_box is this call's)
        value, aux, grads_flat = run(diff, [rest[k] for k in arrays_at])
        if has_aux:                       # its leaves that are not traced pass through
            aux_leaves, aux_tree, traced = aux_box
            aux_leaves = list(aux_leaves)
            for k, v in zip(traced, aux, strict=True):
                aux_leaves[k] = v
            aux = tree_unflatten(aux_tree, aux_leaves)
        # float0 zeros cannot enter a program: they are added here, outside it.
        grads, pos = [], 0
        for x in diff:
            n = sum(is_float(type_of(v)[0]) for v in tree_flatten(x)[0])
            grads.append(_with_float0_leaves(x, grads_flat[pos:pos + n]))
            pos += n
        g = grads[0] if isinstance(argnums, int) else tuple(grads)
        return ((value, aux), g) if has_aux else (value, g)

    # See Note [library frames] (errors.py)
    return api_boundary(functools.wraps(fun)(value_and_grad_fn))


def grad(fun: Callable[..., Any], argnums: int | Sequence[int] = 0,
         has_aux: bool = False, holomorphic: bool = False, allow_int: bool = False,
         reduce_axes: Sequence[Any] = ()) -> Callable[..., Any]:
    """The gradient of a scalar-valued ``fun`` with respect to ``args[argnums]``
    (``holomorphic``, ``allow_int``: see value_and_grad)."""
    if not callable(fun):
        raise TypeError(f"grad expects a callable, got {type(fun).__name__}")

    @functools.wraps(fun)
    def marked(*args: Any, **kwargs: Any) -> Any:
        return fun(*args, **kwargs)
    marked._spmdc_grad_only = True       # error messages say "grad"
    vg = value_and_grad(marked, argnums, has_aux, holomorphic, allow_int, reduce_axes)

    @functools.wraps(fun)
    def grad_fn(*args: Any, **kwargs: Any) -> Any:
        if has_aux:
            (_, aux), g = vg(*args, **kwargs)
            return g, aux
        return vg(*args, **kwargs)[1]
    return api_boundary(grad_fn)


# Note [vjp_fn is a Partial]
# As in JAX, the ``vjp_fn`` that ``vjp`` returns is a ``tree_util.Partial`` whose children
# are the residuals the pullback needs: a pytree that can cross jit or be a custom_vjp
# residual, and is rebuilt with new leaves on the other side. Our residuals are the primal
# leaves (the pullback replays the forward function on them) and, outside a trace, the
# values the forward trace captured; the function, the aux data, holds everything else.


def vjp(fun: Callable[..., Any], *primals: Any, has_aux: bool = False) -> Any:
    """``(fun(*primals), vjp_fn)`` where ``vjp_fn(ct)`` pulls a cotangent back to primals
    (refs ``fun`` closes over and writes are updated: Note [refs as threaded state])."""
    check_no_ref_arguments("vjp", primals, lambda path: f"primals{keystr(path)}")

    def unpack(r: Any) -> tuple[Any, list[Any]]:
        out, vjp_fn, (aux, finals) = r
        return ((out, vjp_fn, aux) if has_aux else (out, vjp_fn)), finals
    return refs_as_aux(fun, has_aux, lambda f, aux: _vjp(f, primals, aux), unpack)


def _vjp(fun: Callable[..., Any], primals: tuple[Any, ...], has_aux: bool) -> Any:
    name, shown = _fun_name(fun), _display_name(fun)
    fun = checking_results("vjp", fun, shown, has_aux)   # Note [arguments that are not arrays]
    if current_trace() is None:
        try:
            return _eager_vjp(fun, primals, has_aux, name)
        except TypeError:
            check_array_arguments("vjp", shown, [("primals", primals)])
            raise

    def forward(*a: Any) -> Any:
        return fun(*a)

    out = _top_level(forward)(*primals)
    if has_aux:
        if not (isinstance(out, (tuple, list)) and len(out) == 2):
            raise TypeError("vjp with has_aux=True expects the function to return a pair "
                            f"(output, aux), but it returned {type(out).__name__}")
        out, aux = out
    main_fun = (lambda *a: fun(*a)[0]) if has_aux else fun

    def pullback(primals_: tuple[Any, ...], ct_leaves: list[Any]) -> Any:
        """The cotangents of the float leaves of ``primals_`` (one program)."""
        func, _, captured, out_tree, leaves = trace_pytree(
            main_fun, primals_, {}, name, concrete=True, view=_grad_view(primals_))
        ct_leaves = [check_cotangent("vjp", c, t, f"[{k}]" if len(ct_leaves) > 1 else "")
                     for k, (c, t) in enumerate(zip(ct_leaves, func.out_types, strict=True))]
        wrt = [is_float(type_of(v)[0]) for v in leaves]
        refuse_in_shard_map_body("vjp")
        grad_func = run_pass("grad", vjp_func, func, [*wrt, *([False] * len(captured))],
                             primal_effects=False)     # See Note [effects] (cleanup.py)
        n_out = len(func.outputs)
        grad_func = _pruned(grad_func, [False] * n_out + [True] * (len(grad_func.outputs) - n_out))
        return apply_func(grad_func, [*leaves, *captured, *ct_leaves],
                          [type_of(v)[1] for v, w in zip(leaves, wrt, strict=True) if w])

    pull = _top_level(pullback)
    out_leaves, out_tree = tree_flatten(out)
    primal_tree = tree_flatten(tuple(primals))[1]

    def pull_back(residuals: list[Any], ct: Any) -> tuple[Any, ...]:
        ct_leaves, ct_tree = tree_flatten(ct)
        if ct_tree != out_tree:
            raise TypeError(f"vjp: the cotangent has structure {ct_tree}, but the function's "
                            f"output has structure {out_tree}")
        # An integer or bool output's cotangent may be float0 (Note [integer tangents] in
        # forward.py); it cannot enter the program, and such an output has no derivative.
        ct_leaves = [np.zeros(np.shape(c), type_of(o)[0].dtype)
                     if getattr(c, "dtype", None) == float0 and not is_float(type_of(o)[0])
                     else c for c, o in zip(ct_leaves, out_leaves, strict=True)]
        return _with_float0_leaves(tuple(primals), pull(
            tree_unflatten(primal_tree, residuals), ct_leaves))

    # See Note [vjp_fn is a Partial]
    vjp_fn = Partial(pull_back, tree_flatten(tuple(primals))[0])
    return (out, vjp_fn, aux) if has_aux else (out, vjp_fn)


def _untraced(leaves: list[Any], traced: list[int]) -> list[Any]:
    """``leaves`` with None at the positions ``traced``: what an aux box keeps while the
    trace ends, so the leak check does not find the traced leaves there (they come back
    as the program's outputs)."""
    at = set(traced)
    return [None if k in at else v for k, v in enumerate(leaves)]


def _check_aux_pair(out: Any) -> Any:
    if not (isinstance(out, (tuple, list)) and len(out) == 2):
        raise TypeError("vjp with has_aux=True expects the function to return a pair "
                        f"(output, aux), but it returned {type(out).__name__}")
    return out


def _eager_vjp(fun: Callable[..., Any], primals: tuple[Any, ...], has_aux: bool,
               name: str) -> Any:
    """``vjp`` outside any trace: ``fun`` runs once, here, as in JAX; the forward program
    and every ``vjp_fn`` call replay the Func that trace gave (compiled once per structure:
    Note [eager transformations trace every call] in eager.py), so ``vjp_fn`` pulls back
    through the very function ``vjp`` ran, whatever changes later."""
    aux_box: list[Any] = []

    def traced(*a: Any) -> Any:
        """``fun``, whose aux's leaves that are not traced values stay out of the program
        (Note [what grad traces]): they are kept in ``aux_box``."""
        out = fun(*a)
        if not has_aux:
            return out
        out, aux = _check_aux_pair(out)
        aux_leaves, aux_tree = tree_flatten(aux)
        at = [k for k, v in enumerate(aux_leaves) if isinstance(v, Tracer)]
        aux_box[:] = [_untraced(aux_leaves, at), aux_tree, at]
        return out, [aux_leaves[k] for k in at]

    func, out_weak, captured, out_tree, leaves = trace_pytree(
        traced, primals, {}, name, concrete=True, view=_grad_view(primals))

    def forward(*a: Any) -> Any:
        return tree_unflatten(out_tree, apply_func(func, [*tree_flatten(a)[0], *captured],
                                                   out_weak))

    out = _top_level(forward)(*primals)
    aux = None
    if has_aux:
        out, aux_values = out
        aux_leaves, aux_tree, at = aux_box
        aux_leaves = list(aux_leaves)
        for k, v in zip(at, aux_values, strict=True):
            aux_leaves[k] = v
        aux = tree_unflatten(aux_tree, aux_leaves)
    out_leaves, main_tree = tree_flatten(out)
    n_main = len(out_leaves)
    wrt = [is_float(type_of(v)[0]) for v in leaves]
    grad_func: list[Func] = []          # made on the first vjp_fn call, then kept

    def pullback(primal_leaves: list[Any], captured: list[Any], ct_leaves: list[Any]) -> Any:
        if not grad_func:
            main = Func(func.name, func.inputs, func.eqns, func.outputs[:n_main])
            refuse_in_shard_map_body("vjp")
            pulled = run_pass("grad", vjp_func, main, [*wrt, *([False] * len(captured))],
                              primal_effects=False)   # See Note [effects] (cleanup.py)
            grad_func.append(_pruned(pulled, [False] * n_main + [True] * (
                len(pulled.outputs) - n_main)))
        return apply_func(grad_func[0], [*primal_leaves, *captured, *ct_leaves],
                          [type_of(v)[1] for v, w in zip(leaves, wrt, strict=True) if w])

    pull = _top_level(pullback)

    def pull_back(residuals: tuple[list[Any], list[Any]], ct: Any) -> tuple[Any, ...]:
        primal_leaves, captured_now = residuals
        ct_leaves, ct_tree = tree_flatten(ct)
        if ct_tree != main_tree:
            raise TypeError(f"vjp: the cotangent has structure {ct_tree}, but the function's "
                            f"output has structure {main_tree}")
        # An integer or bool output's cotangent may be float0 (Note [integer tangents] in
        # forward.py); it cannot enter the program, and such an output has no derivative.
        ct_leaves = [np.zeros(np.shape(c), type_of(o)[0].dtype)
                     if getattr(c, "dtype", None) == float0 and not is_float(type_of(o)[0])
                     else c for c, o in zip(ct_leaves, out_leaves, strict=True)]
        ct_leaves = [check_cotangent("vjp", c, t, f"[{k}]" if n_main > 1 else "")
                     for k, (c, t) in enumerate(zip(ct_leaves, func.out_types[:n_main],
                                                    strict=True))]
        return _with_float0_leaves(tuple(primals), pull(primal_leaves, captured_now,
                                                          ct_leaves))

    # See Note [vjp_fn is a Partial]
    vjp_fn = Partial(pull_back, (list(leaves), list(captured)))
    return (out, vjp_fn, aux) if has_aux else (out, vjp_fn)
