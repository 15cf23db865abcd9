"""JAX's rule tables as views that install spmdc's rules: ``RuleTable``, and the running
of a JAX rule inside a pass (``run_rule``).

Note [JAX's rule tables]
~~~~~~~~~~~~~~~~~~~~~~~~
A library registers a primitive's rules by assigning into JAX's dicts:
``ad.primitive_jvps[p] = jvp``, ``ad.primitive_transposes[p] = t``,
``batching.primitive_batchers[p] = rule``, ``mlir.register_lowering(p, rule)``. spmdc's
passes own their own tables, with spmdc's signatures (docs/ARCHITECTURE.md, "Rule
tables"): ``jvp_rules`` (passes/forward.py), ``vjp_rules`` (passes/autodiff.py),
``batch_rules`` (passes/vmap.py), ``lower_rules`` (compiler/stablehlo.py). There is one
adapter between them, not a second interpreter: each of JAX's tables is a ``RuleTable``,
a dict that keeps the library's rule (reading it back gives what was stored, as in JAX)
and, on every write, installs into the pass's table a rule with the pass's signature
that calls the library's (and removes it on delete). The adapters run the library's
rule on values: a trace current for the call emits what the rule binds into the pass's
own Builder (Note [rules on values] in core/tracing.py). So a primitive from a library
goes through jit, vmap, grad, jvp, linearize, pmap, shard_map and control flow exactly
as a built-in one does, by the same passes. Reverse mode is JAX's too: the VJP that
spmdc's reverse pass asks for is the library's JVP rule, traced with symbolic tangents
and transposed (Note [linearize and transpose] in spmdc/interpreters/ad.py).

Errors from a library's rule name the primitive and the rule (``run_rule`` adds a note
to whatever the rule raises), and what a rule returns is checked against the types the
pass expects.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from ..compiler.ir import TensorType
from ..core.abstract import ShapedArray

__all__ = ["RuleTable", "run_rule", "aval_of_type"]


def aval_of_type(t: TensorType) -> ShapedArray:
    """The ShapedArray JAX's rules see for a value of IR type ``t``."""
    return ShapedArray(t.shape, t.dtype)


class RuleTable(dict):
    """One of JAX's rule tables: ``table[prim] = rule`` stores the rule and calls
    ``install(prim, rule)``, which puts the adapter into the pass's table; ``del``
    calls ``uninstall(prim)``. See Note [JAX's rule tables]."""

    def __init__(self, name: str, install: Callable[[Any, Any], None],
                 uninstall: Callable[[Any], None]):
        super().__init__()
        self.name = name
        self._install = install
        self._uninstall = uninstall

    def __setitem__(self, prim: Any, rule: Any) -> None:
        if not callable(rule):
            raise TypeError(f"{self.name}[{prim}]: a rule must be callable, got "
                            f"{type(rule).__name__}")
        super().__setitem__(prim, rule)
        self._install(prim, rule)

    def __delitem__(self, prim: Any) -> None:
        super().__delitem__(prim)
        self._uninstall(prim)

    def update(self, *args: Any, **kwargs: Any) -> None:
        for prim, rule in dict(*args, **kwargs).items():
            self[prim] = rule

    def setdefault(self, prim: Any, rule: Any = None) -> Any:
        if prim not in self:
            self[prim] = rule
        return self[prim]

    def pop(self, prim: Any, *default: Any) -> Any:
        if prim not in self and default:
            return default[0]
        rule = self[prim]
        del self[prim]
        return rule

    def popitem(self) -> tuple[Any, Any]:
        if not self:
            raise KeyError(f"popitem(): {self.name} is empty")
        prim = next(reversed(self))
        return prim, self.pop(prim)

    def clear(self) -> None:
        for prim in list(self):
            del self[prim]

    def __repr__(self) -> str:
        return f"{self.name}({dict.__repr__(self)})"


@contextmanager
def run_rule(what: str) -> Iterator[None]:
    """Around a call of a library's rule: what it raises says which rule it was."""
    try:
        yield
    except Exception as e:
        note = f"(raised by {what})"
        if note not in getattr(e, "__notes__", ()):
            e.add_note(note)
        raise
