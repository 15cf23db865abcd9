"""jnp.vectorize (NumPy's generalised ufunc signatures, by ``vmap``), ``apply_along_axis``
and ``apply_over_axes``: the spmdc.numpy names built on the transformations.

Part of spmdc.numpy, which re-exports every name defined here."""
from __future__ import annotations

import functools
import operator
import re
from collections.abc import Callable, Collection
from typing import Any

import numpy as np

from ..core.tracing import where as _where
from ..transforms.vmap import vmap
from .core import asarray
from .shape_ops import expand_dims, squeeze

__all__ = ["vectorize", "apply_along_axis", "apply_over_axes"]


# --- vectorize ---------------------------------------------------------------------------------

_DIM = r"\w+"
_CORE_DIMS = f"(?:{_DIM}(?:,{_DIM})*)?"
_ARGUMENT = rf"\({_CORE_DIMS}\)"
_ARGUMENTS = f"{_ARGUMENT}(?:,{_ARGUMENT})*"
_SIGNATURE = f"^{_ARGUMENTS}->{_ARGUMENTS}$"


def _parse_signature(signature: str) -> tuple[list[tuple[str, ...]], list[tuple[str, ...]]]:
    if not re.match(_SIGNATURE, signature.replace(" ", "")):
        raise ValueError(f"vectorize: not a valid gufunc signature: {signature!r} (e.g. "
                         f"'(n),(n)->()'){_where()}")
    ins, outs = ([tuple(re.findall(_DIM, arg)) for arg in re.findall(_ARGUMENT, part)]
                 for part in signature.replace(" ", "").split("->"))
    return ins, outs


def _core_sizes(sizes: dict[str, int], shape: tuple[int, ...], core: tuple[str, ...],
                context: str, is_input: bool) -> None:
    if is_input and len(shape) < len(core):
        raise ValueError(f"vectorize: an input of shape {shape} has too few dimensions for "
                         f"its core dimensions {core} {context}")
    if not is_input and len(shape) != len(core):
        raise ValueError(f"vectorize: an output of shape {shape} does not match its core "
                         f"dimensions {core} {context}")
    for dim, size in zip(core, shape[len(shape) - len(core):], strict=True):
        if sizes.setdefault(dim, size) != size:
            raise ValueError(f"vectorize: inconsistent size for core dimension {dim!r}: "
                             f"{size} vs {sizes[dim]} {context}")


def _without(func: Callable[..., Any], excluded: Collection[int | str], args: list[Any],
             kwargs: dict[str, Any]) -> tuple[Callable[..., Any], list[Any], dict[str, Any]]:
    """``func`` with the excluded arguments bound, and the remaining arguments."""
    if not excluded:
        return func, args, kwargs
    static = [(i, args[i]) for i in sorted(e for e in excluded if isinstance(e, int))
              if i < len(args)]
    static_kw = {k: v for k, v in kwargs.items() if k in excluded}
    dynamic = [a for i, a in enumerate(args) if i not in excluded]
    dynamic_kw = {k: v for k, v in kwargs.items() if k not in excluded}

    def bound(*a: Any, **k: Any) -> Any:
        full = list(a)
        for i, v in static:
            full.insert(i, v)
        return func(*full, **k, **static_kw)
    return bound, dynamic, dynamic_kw


def vectorize(pyfunc: Callable[..., Any], *, excluded: Collection[int | str] = frozenset(),
              signature: str | None = None) -> Callable[..., Any]:
    """``pyfunc`` mapped over its arguments' leading (broadcast) dimensions by ``vmap``;
    ``signature`` (e.g. ``'(n),(n)->()'``) names the trailing core dimensions each
    argument and result keeps; ``excluded`` positions or names are passed through."""
    if any(not isinstance(e, (str, int)) for e in excluded):
        raise TypeError(f"vectorize: excluded may hold only argument positions (ints) and "
                        f"names (strs), got {excluded!r}{_where()}")
    if any(isinstance(e, int) and e < 0 for e in excluded):
        raise ValueError(f"vectorize: excluded={excluded!r} holds a negative position"
                         f"{_where()}")

    @functools.wraps(pyfunc)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        context = f"(vectorize with excluded={excluded!r} and signature={signature!r})"
        func, args, kwargs = _without(pyfunc, excluded, list(args), kwargs)
        if signature is not None:
            in_core, out_core = _parse_signature(signature)
        else:
            in_core, out_core = [()] * len(args), None
        nones = {i for i, a in enumerate(args) if a is None}
        if nones:
            if any(in_core[i] for i in nones):
                raise ValueError(f"vectorize: None passed for arguments {sorted(nones)}, "
                                 f"which have core dimensions {context}")
            func, args, _ = _without(func, nones, args, {})
            in_core = [c for i, c in enumerate(in_core) if i not in nones]
        args = [asarray(a) for a in args]
        if len(args) != len(in_core):
            raise TypeError(f"vectorize: expected {len(in_core)} positional arguments, got "
                            f"{len(args)} {context}")
        sizes: dict[str, int] = {}
        loop_shapes = []
        for a, core in zip(args, in_core, strict=True):
            _core_sizes(sizes, a.shape, core, context, is_input=True)
            loop_shapes.append(a.shape[:a.ndim - len(core)])
        try:
            loop = np.broadcast_shapes(*loop_shapes)
        except ValueError:
            raise ValueError(f"vectorize: the arguments' loop dimensions {loop_shapes} do "
                             f"not broadcast {context}") from None
        checked = func if out_core is None else _checking_outputs(func, sizes, out_core,
                                                                   context)
        squeezed, reversed_shapes = [], []
        for a, core in zip(args, in_core, strict=True):
            outer = a.shape[:a.ndim - len(core)]
            reversed_shapes.append(((1,) * (len(loop) - len(outer)) + outer)[::-1])
            squeezed.append(squeeze(a, axis=tuple(i for i, s in enumerate(outer)
                                                      if s == 1)))
        mapped, expand = checked, []
        for negdim, dim_sizes in enumerate(zip(*reversed_shapes, strict=True)):
            in_axes = tuple(None if s == 1 else 0 for s in dim_sizes)
            if all(ax is None for ax in in_axes):
                expand.append(len(loop) - 1 - negdim)
            else:
                mapped = vmap(mapped, in_axes)
        result = mapped(*squeezed, **kwargs) if kwargs else mapped(*squeezed)
        if not expand:
            return result
        if isinstance(result, tuple):
            return tuple(expand_dims(r, axis=tuple(expand)) for r in result)
        return expand_dims(result, axis=tuple(expand))
    return wrapped


def _checking_outputs(func: Callable[..., Any], sizes: dict[str, int],
                      out_core: list[tuple[str, ...]], context: str) -> Callable[..., Any]:
    def checked(*args: Any, **kwargs: Any) -> Any:
        out = func(*args, **kwargs)
        outs = out if isinstance(out, tuple) else (out,)
        if len(out_core) > 1 and not isinstance(out, tuple):
            raise TypeError(f"vectorize: the function must return a tuple of "
                            f"{len(out_core)} outputs {context}")
        if len(outs) != len(out_core):
            raise TypeError(f"vectorize: expected {len(out_core)} outputs, got {len(outs)} "
                            f"{context}")
        known = dict(sizes)
        for o, core in zip(outs, out_core, strict=True):
            _core_sizes(known, np.shape(o), core, context, is_input=False)
        return out
    return checked


# --- applying along axes ------------------------------------------------------------------------

def apply_along_axis(func1d: Callable[..., Any], axis: int, arr: Any, *args: Any,
                     **kwargs: Any) -> Any:
    """``func1d`` applied to each 1-d slice of ``arr`` along ``axis`` (by ``vmap``); the
    dimensions of its result take the place of ``axis``."""
    arr = asarray(arr)
    ndim = arr.ndim
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"apply_along_axis: axis {axis} is out of bounds for an array of "
                         f"dimension {ndim}{_where()}")
    axis %= ndim

    def func(x: Any) -> Any:
        return func1d(x, *args, **kwargs)
    for i in range(1, ndim - axis):
        func = vmap(func, in_axes=i, out_axes=-1)
    for _ in range(axis):
        func = vmap(func, in_axes=0, out_axes=0)
    return func(arr)


def apply_over_axes(func: Callable[[Any, int], Any], a: Any, axes: Any) -> Any:
    """``func(a, axis)`` applied over each of ``axes`` in turn; a result with one dimension
    less gets it back (size 1), so the rank stays."""
    a = asarray(a)
    for axis in [axes] if isinstance(axes, int) else axes:
        b = func(a, axis)
        a = b if b.ndim == a.ndim else expand_dims(b, axis)
    return a
