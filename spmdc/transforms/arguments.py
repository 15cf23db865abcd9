"""Checks of the arguments users pass to the transformations (jit, pmap, grad, vjp,
device_put): each bad value is a clear error that names the argument and says what is
allowed, raised where the user passed it, instead of a deep failure later or a setting
silently ignored.
"""
from __future__ import annotations

import functools
import inspect
import operator
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..compiler.stablehlo import donation_aliases
from ..core.devices import check_backend, check_device, check_devices
from ..core.tracing import Tracer, type_of, where
from ..core.tree import dict_keys, keystr, tree_flatten, tree_flatten_with_path, tree_unflatten
from ..core.tree_cycles import raise_if_cycle
from ..runtime.array import Array

__all__ = ["index_tuple", "name_tuple", "check_static_argnums", "check_static_argnames",
           "check_argnums", "check_devices", "check_device", "check_mapped_size",
           "check_cotangent", "positional_arity", "check_backend",
           "check_index_in_range", "usable_donations", "donated_leaves", "check_donations",
           "raise_if_deleted", "check_not_generator", "raise_if_not_array_argument",
           "check_array_results", "check_array_arguments", "checking_results",
           "wraps_leniently"]


def index_tuple(op: str, name: str, value: Any) -> tuple[int, ...]:
    """``value`` (an int or a sequence of ints) as a tuple of ints, else a TypeError."""
    values = value if isinstance(value, (tuple, list)) else (value,)
    out = []
    for v in values:
        if isinstance(v, (bool, np.bool_)):
            raise TypeError(f"{op}: {name} must be an int or a sequence of ints, got "
                            f"{value!r}{where()}")
        try:
            out.append(operator.index(v))
        except TypeError:
            raise TypeError(f"{op}: {name} must be an int or a sequence of ints, got "
                            f"{value!r}{where()}") from None
    return tuple(out)


def name_tuple(op: str, name: str, value: Any) -> tuple[str, ...]:
    """``value`` (a str or a sequence of str) as a tuple, else a TypeError."""
    values = (value,) if isinstance(value, str) else value
    if not isinstance(values, (tuple, list)) or not all(isinstance(v, str) for v in values):
        raise TypeError(f"{op}: {name} must be a string or a sequence of strings (parameter "
                        f"names), got {value!r}{where()}")
    return tuple(values)


def positional_arity(fun: Callable[..., Any]) -> tuple[int | None, set[str] | None]:
    """How many positional parameters ``fun`` takes (None with ``*args`` or when it has no
    signature) and its parameter names (None with ``**kwargs`` or no signature)."""
    try:
        params = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        return None, None
    kinds = {p.kind for p in params}
    npos = None if inspect.Parameter.VAR_POSITIONAL in kinds else sum(
        p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)
    names = None if inspect.Parameter.VAR_KEYWORD in kinds else {
        p.name for p in params if p.kind != p.POSITIONAL_ONLY}
    return npos, names


def check_static_argnums(op: str, name: str, fun: Callable[..., Any],
                         nums: tuple[int, ...]) -> None:
    """Every static argument number must name a positional parameter of ``fun``."""
    npos, _ = positional_arity(fun)
    if npos is None:
        return
    bad = [i for i in nums if not -npos <= i < npos]
    if bad:
        raise ValueError(f"{op}: {name}={nums if len(nums) > 1 else nums[0]} is out of range: "
                         f"the function takes {npos} positional argument"
                         f"{'' if npos == 1 else 's'}, so each must be in "
                         f"[{-npos}, {npos}){where()}")


def check_static_argnames(op: str, fun: Callable[..., Any], names: tuple[str, ...],
                          what: str = "static_argnames") -> None:
    _, params = positional_arity(fun)
    if params is None:
        return
    bad = sorted(set(names) - params)
    if bad:
        raise ValueError(f"{op}: {what}={bad} are not parameters of the function "
                         f"(it has {sorted(params)}){where()}")


def usable_donations(in_types: Sequence[Any], out_types: Sequence[Any],
                     donated: Sequence[int],
                     describe: Callable[[Any], str] = str) -> dict[int, int]:
    """``donation_aliases`` (Note [donation] in compiler/stablehlo.py), warning as JAX does
    about donated inputs that no output can reuse. The types are TensorTypes, or any
    hashable stand-ins that ``describe`` shows (the partition form pairs each with its
    layout)."""
    aliases = donation_aliases(in_types, out_types, donated)
    unusable = [describe(in_types[i]) for i in sorted(set(donated)) if i not in aliases]
    if unusable:
        warnings.warn(f"Some donated buffers were not usable: {', '.join(unusable)}"
                      f"{where()}; no output has their shape and dtype (and layout), so "
                      "they are kept", stacklevel=3)
    return aliases


def raise_if_deleted(leaves: Sequence[Any], error: BaseException | None = None) -> None:
    """A clear error for an argument that was deleted (donated to an earlier call), which
    jaxlib reports as a confusing launch error."""
    for x in leaves:
        if type(x) is Array and x.is_deleted():
            try:
                x.check_not_deleted(where())
            except RuntimeError as e:
                raise e from error


def explain_failed_call(args: tuple[Any, ...], kwargs: dict[str, Any],
                        error: BaseException, deleted: bool) -> None:
    """A clear error for a call the C++ dispatcher failed on, where one can be given:
    arguments that contain themselves; with ``deleted``, a deleted (donated) Array among
    them (the ``explain`` of runtime/pjrt/dispatch.py's ``python_path_after``)."""
    raise_if_cycle(args, kwargs, error)
    if deleted:
        raise_if_deleted(tree_flatten((args, kwargs))[0], error)


def run_launcher(launcher: Any, leaves: Sequence[Any], donated: Sequence[int],
                 out_tree: Any) -> Any:
    """Launch a compiled program through its ``launcher`` (runtime/launcher.py), with the
    checks of the call's arguments that name the user's line: an Array donated and also
    passed again (before), a deleted one the launch failed on (after); the results
    rebuilt as the pytree ``out_tree``."""
    if donated:
        check_donations(leaves, donated)
    try:
        results = launcher(leaves)
    except Exception as e:
        raise_if_deleted(leaves, e)
        raise
    return tree_unflatten(out_tree, results)


def check_donations(leaves: Sequence[Any], donated: Sequence[int]) -> None:
    """A donated Array's buffer cannot also be another argument of the same call."""
    given = {id(leaves[i]) for i in donated if type(leaves[i]) is Array}
    for k, x in enumerate(leaves):
        if id(x) in given and k not in donated:
            raise ValueError(
                f"an Array is passed twice to a jitted call, once as a donated argument "
                f"(donate_argnums) and once more (flattened argument {k}){where()}: the "
                "donated buffer is consumed by the call; pass a copy (jnp.array(x)) as the "
                "other argument, or do not donate it")
    if len({id(leaves[i]) for i in donated}) < len(donated):
        raise ValueError(f"the same Array is donated twice in one jitted call{where()}; "
                         "pass a copy (jnp.array(x)) as one of them")


def donated_leaves(statics: Sequence[tuple[Any, Any]], args: tuple[Any, ...],
                   kwargs: dict[str, Any], nums: Sequence[int],
                   names: Sequence[str] = ()) -> tuple[int, ...]:
    """The positions, among the flattened dynamic arguments ``(args, kwargs)``, of the
    leaves of the donated ones: positional arguments numbered ``nums`` (counting the
    static ones, which ``statics`` lists as (position, value)) and keywords in ``names``."""
    if not nums and not names:
        return ()
    static_at = {i for i, _ in statics if isinstance(i, int)}
    positions = (i for i in range(len(args) + len(static_at)) if i not in static_at)
    parts = [(i in nums, a) for i, a in zip(positions, args, strict=False)]
    parts += [(k in names, kwargs[k]) for k in dict_keys(kwargs)]
    out, at = [], 0
    for donate, value in parts:
        n = len(tree_flatten(value)[0])
        if donate:
            out.extend(range(at, at + n))
        at += n
    return tuple(out)


def check_argnums(op: str, argnums: Any) -> tuple[int, ...]:
    """grad-style argnums: an int or a sequence of distinct ints."""
    nums = index_tuple(op, "argnums", argnums)
    if not nums:
        raise ValueError(f"{op}: argnums is empty; name at least one argument to "
                         f"differentiate{where()}")
    if len(set(nums)) != len(nums):
        raise ValueError(f"{op}: argnums={argnums!r} names an argument twice; each argument "
                         f"can be differentiated once{where()}")
    return nums


def check_mapped_size(op: str, size: int) -> None:
    if size == 0:
        raise ValueError(f"{op}: the mapped axis has size 0; pmap needs at least one "
                         f"device's worth of data (a mapped axis of size >= 1){where()}")


def check_cotangent(op: str, ct: Any, expected: Any, path: str) -> Any:
    """A cotangent leaf for an output of type ``expected``: same shape; same dtype after
    canonicalisation (NumPy float64 becomes float32 unless x64), where a weakly typed
    Python scalar takes the output's dtype. Returns the leaf, converted if weak."""
    t, weak = type_of(ct)
    what = "the cotangent" + (f" {path}" if path else "")
    if t.shape != expected.shape:
        raise ValueError(f"{op}: {what} has shape {t.shape}, but the "
                         f"function's output there has shape {expected.shape}; pass an "
                         f"array of that shape and dtype {expected.dtype.name}{where()}")
    if t.dtype != expected.dtype:
        same_kind = (t.dtype.kind in "fc" or t.dtype.name == "bfloat16") == (
            expected.dtype.kind in "fc" or expected.dtype.name == "bfloat16")
        if weak and same_kind:
            from ..core.operands import asarray
            return asarray(ct).astype(expected.dtype)
        raise ValueError(f"{op}: {what} has dtype {t.dtype.name}, but the "
                         f"function's output there has dtype {expected.dtype.name}; "
                         f"convert it with .astype({expected.dtype.name}){where()}")
    return ct


def check_index_in_range(op: str, name: str, nums: Sequence[int], nargs: int,
                         explain: str) -> None:
    bad = [i for i in nums if not -nargs <= i < nargs]
    if bad:
        raise ValueError(f"{op}: {name}={tuple(nums) if len(nums) > 1 else nums[0]} but the "
                         f"function was called with {nargs} positional argument"
                         f"{'' if nargs == 1 else 's'}; {explain}{where()}")


# --- values that are not arrays ------------------------------------------------------------

def check_not_generator(fun: Callable[..., Any]) -> None:
    """A generator function yields nothing when traced; JAX refuses it up front."""
    if inspect.isgeneratorfunction(fun):
        raise TypeError(f"Expected a function, got a generator function: {fun!r}{where()}. "
                        "A transformed function is traced once for the value it returns; "
                        "return the values instead of yielding them")


def _not_an_array(leaf: Any) -> str | None:
    """What ``leaf`` is when it cannot be traced as an array (None: it can), a phrase
    that follows "is" or "returned"."""
    if type(leaf) is Array or isinstance(leaf, Tracer):
        return None
    try:
        type_of(leaf)
    except TypeError as e:
        if getattr(leaf, "dtype", None) is not None:       # an array of a dtype not taken
            return f"an array of a type spmdc cannot use ({e})"
        return (f"a value of type {type(leaf).__name__}, which is not an array: "
                f"{leaf!r:.60}")
    return None


def raise_if_not_array_argument(what: str, fun_name: str, args: tuple[Any, ...],
                                kwargs: dict[str, Any], static_argnums: Sequence[int],
                                static_argnames: Sequence[str]) -> None:
    """For a TypeError in a call of ``what`` (jit) on ``args``/``kwargs`` (static ones
    included): raise the TypeError that names the first argument, by its path, that is
    not an array; return when every traced argument is one (the caller re-raises)."""
    n = len(args)
    statics = {i % n if -n <= i < n else i for i in static_argnums}
    for path, leaf in tree_flatten_with_path((args, kwargs))[0]:
        top = path[1]
        if (path[0].idx == 0 and top.idx in statics) or \
                (path[0].idx == 1 and top.key in static_argnames):
            continue
        problem = _not_an_array(leaf)
        if problem is not None:
            name = ("args" if path[0].idx == 0 else "kwargs") + keystr(path[1:])
            raise TypeError(
                f"{what}({fun_name}): argument {name} is {problem}{where()}. "
                f"{what} traces its arguments as arrays: pass an array (or a pytree of "
                "arrays), or mark the argument static (static_argnums / static_argnames)")


def check_array_results(what: str, fun: Callable[..., Any], name: str,
                        out: Any) -> None:
    """A TypeError naming the function, its line and the output's path when ``fun``
    traced for ``what`` returned a value that is not an array (as JAX's)."""
    if all(_not_an_array(leaf) is None for leaf in tree_flatten(out)[0]):
        return
    path, problem = next((path, problem) for path, leaf in tree_flatten_with_path(out)[0]
                         if (problem := _not_an_array(leaf)) is not None)
    code = getattr(inspect.unwrap(fun), "__code__", None)
    at = f" at {code.co_filename}:{code.co_firstlineno}" if code is not None else ""
    component = f", at output component {keystr(path)}," if path else ""
    raise TypeError(
        f"function {name}{at} traced for {what} returned{component} {problem}. A "
        f"function transformed by {what} returns arrays, scalars or pytrees of them; "
        f"return other values from outside {what}")


def check_array_arguments(what: str, fun_name: str, named: Sequence[tuple[str, Any]]) -> None:
    """A TypeError naming ``what`` (vmap, grad, jvp, vjp, pmap), the function, the path of
    the first leaf of ``named`` (``(name, tree)`` pairs: ``("primals", primals)``) that is
    not an array, and the user's line, as jit's (Note [arguments that are not arrays])."""
    for name, tree in named:
        for path, leaf in tree_flatten_with_path(tree)[0]:
            problem = _not_an_array(leaf)
            if problem is not None:
                raise TypeError(
                    f"{what}({fun_name}): argument {name}{keystr(path)} is {problem}"
                    f"{where()}. {what} traces its arguments as arrays: pass an array, a "
                    "scalar or a pytree of them")


def checking_results(what: str, fun: Callable[..., Any], name: str,
                     has_aux: bool = False) -> Callable[..., Any]:
    """``fun``, whose result (with ``has_aux``, the first of the pair it returns) must be
    arrays: else check_array_results' TypeError."""
    def checked(*args: Any, **kwargs: Any) -> Any:
        out = fun(*args, **kwargs)
        if not has_aux:
            check_array_results(what, fun, name, out)
        elif isinstance(out, (tuple, list)) and len(out) == 2:   # else has_aux's own error
            check_array_results(what, fun, name, out[0])
        return out
    functools.update_wrapper(checked, fun)
    return checked


# Note [arguments that are not arrays]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# A str, a set, a generator, a function or an object of the user's class passed where a
# transformation traces an array used to reach type_of and say only "cannot use a value
# of type str as an array". JAX names the transformation and the argument ("Argument
# 'abc' of type <class 'str'> is not a valid JAX type", TypeError; InvalidInputException,
# a TypeError too, for vjp), or the result ("Output from batched function ..."). spmdc's
# message names the transformation, the function, the argument's path (``args[0]['w']``,
# ``primals[1]``, ``tangents[0]``) or the result's component, and the user's line. The
# arguments are checked only once a TypeError has been raised (jit, vmap, pmap) or where
# each leaf's type is read anyway (grad, jvp, vjp), so a correct call pays nothing; a
# result is checked where the function returns, a flatten of what it returned.


def wraps_leniently(fun: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``functools.wraps(fun)`` that, like JAX's ``api_util.wraps``, keeps going when an
    attribute of ``fun`` cannot be copied: an Equinox module rebuilt inside a trace is
    callable and its ``__name__`` is Equinox's ``Missing`` marker, not a string."""
    def wrap(wrapper: Callable[..., Any]) -> Callable[..., Any]:
        for attr in functools.WRAPPER_ASSIGNMENTS:
            try:
                setattr(wrapper, attr, getattr(fun, attr))
            except (AttributeError, TypeError):
                pass
        wrapper.__dict__.update(getattr(fun, "__dict__", {}))
        wrapper.__wrapped__ = fun  # type: ignore[attr-defined]
        return wrapper
    return wrap
