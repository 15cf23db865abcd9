"""spmdc.custom_batching (``jax.custom_batching``): ``custom_vmap``, a function whose
batching rule the user writes, and ``sequential_vmap``, a function that vmap runs as a
loop over the batch (``lax.map``).

Called under a trace, a ``custom_vmap`` function is traced to a Func and emits one
``custom_vmap_call`` equation (compiler/primitives/custom_batching.py) holding it and
the rule; the vmap pass asks the rule, traced once per batch size and batched
arguments, for the batched program (Note [custom vmap] there). Outside any trace the
function just runs. The rule is ``rule(axis_size, in_batched, *args) -> (out,
out_batched)``: ``in_batched`` is a list with one pytree of bools per argument (True
where vmap batches that leaf, its batch dimension first), ``out_batched`` a pytree of
bools with ``out``'s structure.
"""
from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from .compiler.ir import Func, TensorType
from .compiler.primitives.custom_batching import custom_vmap_call_p
from .core.tracing import Tracer, bind, current_trace, trace_function, type_of
from .core.tree import tree_flatten, tree_structure, tree_unflatten
from .lax.control_flow import map_ as _lax_map
from .tracebacks import api_boundary
from .transforms.custom_derivatives import _embed_constants, _name, _positional

__all__ = ["custom_vmap", "sequential_vmap"]


class custom_vmap:                          # noqa: N801  (JAX's name)
    """Wrap ``fun`` so that ``vmap`` batches it with the rule given to ``def_vmap``."""

    def __init__(self, fun: Callable[..., Any]):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.vmap_rule: Callable[..., Any] | None = None

    def def_vmap(self, vmap_rule: Callable[..., Any]) -> Callable[..., Any]:
        """Set the batching rule ``vmap_rule(axis_size, in_batched, *args) -> (out,
        out_batched)``; returns it, so it may be used as a decorator."""
        self.vmap_rule = vmap_rule
        return vmap_rule

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        return self if obj is None else functools.partial(self, obj)

    @api_boundary  # See Note [library frames] (errors.py)
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        name = _name(self.fun)
        if self.vmap_rule is None:
            raise AttributeError(f"No batching rule defined for custom_vmap function {name} "
                                 "using def_vmap.")
        args = _positional(self.fun, args, kwargs, "custom_vmap")
        if current_trace() is None:          # eager: no vmap will batch it
            return self.fun(*args)
        leaves, in_tree = tree_flatten(args)
        types = [type_of(x) for x in leaves]
        out_box: list[Any] = []

        def call(tracers: list[Tracer]) -> list[Any]:
            out_leaves, out_tree = tree_flatten(self.fun(*tree_unflatten(in_tree, tracers)))
            out_box[:] = [out_tree]
            return out_leaves

        call_func, out_weak, consts = trace_function(call, [t for t, _ in types],
                                                     [w for _, w in types], name)
        rule = _VmapRule(self.vmap_rule, name, in_tree, types, out_box[0], call_func)
        outs = bind(custom_vmap_call_p, *leaves, *consts, call=call_func, rule=rule,
                    num_consts=len(consts))
        for o, w in zip(outs, out_weak, strict=True):
            o.weak = w
        return tree_unflatten(out_box[0], outs)


class _VmapRule:
    """The user's rule traced to a Func per (batch size, batched arguments) on first use
    (``get``); the vmap pass calls it (Note [custom vmap])."""

    def __init__(self, rule: Callable[..., Any], fun_name: str, in_tree: Any,
                 types: list[tuple[TensorType, bool]], out_tree: Any, call: Func):
        self.rule, self.name = rule, f"{_name(rule)} (custom_vmap rule of {fun_name})"
        self.in_tree, self.types, self.out_tree, self.call = in_tree, types, out_tree, call
        self._cache: dict[Any, tuple[Func, tuple[bool, ...]]] = {}

    def get(self, size: int, in_batched: tuple[bool, ...]) -> tuple[Func, tuple[bool, ...]]:
        key = (size, in_batched)
        if key not in self._cache:
            self._cache[key] = self._trace(size, in_batched)
        return self._cache[key]

    def _trace(self, size: int, in_batched: tuple[bool, ...]
               ) -> tuple[Func, tuple[bool, ...]]:
        in_types = [TensorType((size, *t.shape), t.dtype) if batched else t
                    for (t, _), batched in zip(self.types, in_batched, strict=True)]
        box: list[tuple[bool, ...]] = []

        def traced(tracers: list[Tracer]) -> list[Any]:
            args = tree_unflatten(self.in_tree, tracers)
            flags = list(tree_unflatten(self.in_tree, list(in_batched)))
            result = self.rule(size, flags, *args)
            if not (isinstance(result, tuple) and len(result) == 2):
                raise TypeError(f"the {self.name} must return a pair (out, out_batched), got "
                                f"{type(result).__name__}")
            out, out_batched = result
            leaves, tree = tree_flatten(out)
            if tree != self.out_tree:
                raise TypeError(f"the {self.name} returned outputs of structure {tree}; the "
                                f"function returns {self.out_tree}")
            flags_out, flags_tree = tree_flatten(out_batched)
            if flags_tree != tree or not all(isinstance(f, bool) for f in flags_out):
                raise TypeError(f"the {self.name} must return out_batched as bools with the "
                                f"outputs' structure {tree}, got {out_batched!r}")
            for leaf, batched, want in zip(leaves, flags_out, self.call.out_types,
                                           strict=True):
                got = type_of(leaf)[0]
                shape = (size, *want.shape) if batched else want.shape
                if got.shape != shape or got.dtype != want.dtype:
                    raise TypeError(
                        f"the {self.name} returned an output of type {got} marked "
                        f"{'batched' if batched else 'unbatched'}; expected "
                        f"{TensorType(shape, want.dtype)}")
            box[:] = [tuple(flags_out)]
            return leaves

        func, _, captured = trace_function(traced, in_types, [w for _, w in self.types],
                                           self.name)
        if captured:
            func = _embed_constants(func, captured, self.name)
        return func, box[0]

    def ir_text(self) -> str:
        return f"@{self.rule.__name__ if hasattr(self.rule, '__name__') else 'rule'}"


def sequential_vmap(f: Callable[..., Any]) -> custom_vmap:
    """``f`` as a custom_vmap function that vmap runs as a loop over the batch
    (``lax.map``), unbatched arguments broadcast to every iteration."""
    wrapped = custom_vmap(f)

    @wrapped.def_vmap
    def rule(axis_size: int, in_batched: list[Any], *args: Any) -> tuple[Any, Any]:
        batched_leaves = tree_flatten(in_batched)[0]
        leaves, tree = tree_flatten(args)
        fixed = {k: x for k, (x, b) in enumerate(zip(leaves, batched_leaves, strict=True))
                 if not b}
        mapped = [x for x, b in zip(leaves, batched_leaves, strict=True) if b]

        def one(xs: list[Any]) -> Any:
            it = iter(xs)
            full = [fixed[k] if k in fixed else next(it) for k in range(len(leaves))]
            return f(*tree_unflatten(tree, full))
        out = _lax_map(one, mapped)
        return out, tree_unflatten(tree_structure(out), [True] * len(tree_flatten(out)[0]))
    return wrapped
