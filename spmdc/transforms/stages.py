"""``jit(f).trace(*args)`` and ``jit(f).eval_shape(*args)``: the ahead-of-time stages
before lowering, as JAX's ``jax.stages.Traced``.

``Traced`` holds the traced program (``.jaxpr``, a ClosedJaxpr printing our IR, as
``make_jaxpr`` gives it), its input and output abstract values and pytrees, and
``.lower()``, which gives the same ``Lowered`` as ``jit(f).lower(*args)`` without
tracing again (``.as_text()`` StableHLO, ``.compile()``).
"""
from __future__ import annotations

from typing import Any

from ..compiler.ir import Func, check
from ..compiler.passes import checks_enabled, recording, run_pass
from ..compiler.passes.cleanup import cleanup
from ..compiler.stablehlo import PLATFORMS
from ..core.abstract import ShapedArray, ShapeDtypeStruct
from ..core.tracing import type_of
from ..core.tree import tree_flatten, tree_unflatten
from .jit import Jitted, Lowered, _device_of
from .make_jaxpr import ClosedJaxpr

__all__ = ["Traced", "trace", "eval_shape"]


class Traced:
    """``jit(f).trace(*args)``: the traced program, not yet lowered."""

    def __init__(self, jitted: Jitted, func: Func, out_weak: list[bool], consts: list[Any],
                 in_tree: Any, out_tree: Any, leaves: list[Any], device: Any,
                 recorded: list[tuple[str, Any]]):
        self.fun_name = getattr(jitted, "__name__", "fun")
        self.in_tree, self.out_tree = in_tree, out_tree
        n = len(leaves)
        self.in_avals = [ShapedArray(t.shape, t.dtype, type_of(x)[1])
                         for t, x in zip(func.in_types[:n], leaves, strict=True)]
        self.out_avals = [ShapedArray(t.shape, t.dtype, w)
                          for t, w in zip(func.out_types, out_weak, strict=True)]
        self.jaxpr = ClosedJaxpr(func, consts, list(self.in_avals), list(self.out_avals))
        self._func, self._out_weak, self._consts = func, out_weak, consts
        self._n_args, self._device, self._recorded = n, device, recorded

    @property
    def out_info(self) -> Any:
        """The outputs' pytree of ShapeDtypeStructs."""
        return tree_unflatten(self.out_tree, [ShapeDtypeStruct(a.shape, a.dtype,
                                                               weak_type=a.weak_type)
                                              for a in self.out_avals])

    def lower(self, *, lowering_platforms: tuple[str, ...] | None = None) -> Lowered:
        """The cleaned-up program and its StableHLO (see ``jit(f).lower``), for the
        client's platform, or for the one platform in ``lowering_platforms`` ('cpu' or
        'cuda'), which needs no device of that kind: its ``as_text()`` is the module that
        platform would compile (Note [lowering per platform] in compiler/stablehlo.py)."""
        platform = None
        if lowering_platforms is not None:
            names = tuple(lowering_platforms)
            if len(names) != 1 or names[0] not in PLATFORMS:
                raise ValueError(f"lowering_platforms: spmdc lowers for one platform, one of "
                                 f"{', '.join(PLATFORMS)}; got {names!r}")
            platform = names[0]
        with recording() as stages:
            func = run_pass("cleanup", cleanup, self._func)
        return Lowered(func, [self._device], self._consts, self._out_weak, self.out_tree,
                       self._n_args, recorded=[*self._recorded, *stages], platform=platform)

    def __repr__(self) -> str:
        return f"Traced({self.fun_name})"


def trace(jitted: Jitted, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Traced:
    statics, args, kwargs = jitted._split(args, kwargs)
    in_leaves, in_tree = tree_flatten((args, kwargs))
    with recording() as stages:
        func, out_weak, consts, out_tree, leaves = jitted._trace(statics, args, kwargs)
    if checks_enabled():
        check(func)
    return Traced(jitted, func, out_weak, consts, in_tree, out_tree, leaves,
                  _device_of(in_leaves), stages)


def eval_shape(jitted: Jitted, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """The outputs of ``jitted(*args, **kwargs)`` as ShapeDtypeStructs (nothing runs)."""
    return trace(jitted, args, kwargs).out_info
