"""The NumPy oracle: what a program should return, without spmdc's passes or compiler.

Only the straight-line body goes through spmdc, and only through its tracer: the body
is traced to IR once (with the enclosing axis names bound) and run by the reference
interpreters (compiler/interpreter*.py) on each primitive's NumPy implementation. Every
wrapper is re-implemented here, independently of spmdc's passes:

- every function works on *mesh-stacked* arrays: one leading axis per enclosing ``vmap``
  or ``pmap`` (both add an axis to the mesh; the body runs once per mesh position with
  collectives over the named axes, as ``evaluate_spmd`` does);
- ``jit`` is the identity; ``cond``/``while``/``fori``/``scan`` are Python control flow
  (a ``cond`` evaluates both branches and selects per mesh position);
- derivatives are central finite differences of the real-number function (floats held
  in float64). Inside a mapped axis, ``grad`` follows Note [collective transpose]: the
  derivative of the sum over all devices' outputs with respect to one device's copy of
  the input; ``jvp``/``jacfwd`` perturb every device's copy along the tangent. With
  ``kinks`` (the second look, at a small step), a reverse-mode derivative whose
  one-sided slopes differ is NaN, which run.compare leaves unjudged (``_kink``).
"""
from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .program import Program, Wrapper, argnums_of, is_float, total_dtype

Mesh = tuple[tuple[str, int], ...]
Fn = Callable[[Mesh, list[np.ndarray], bool], list[np.ndarray]]


REVERSE = ("grad", "value_and_grad", "jacrev")


class TooCostly(Exception):
    """Finite differences would take too many body evaluations for this program."""


def _np_dtype(name: str) -> np.dtype:
    import ml_dtypes
    return np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)


def _isfloat(x: np.ndarray) -> bool:
    return x.dtype.name in ("float64", "float32", "float16", "bfloat16")


class Reference:
    """``Reference(program)(args)``: the outputs, as the NumPy oracle computes them."""

    def __init__(self, program: Program, step: float = 1e-3, budget: int = 4000,
                 kinks: bool = False):
        self.p, self.step, self.budget, self.kinks = program, step, budget, kinks
        self.evaluations = 0
        self.funcs: dict[Mesh, Any] = {}
        self.fresh = itertools.count()

    def __call__(self, args: list[np.ndarray]) -> list[np.ndarray]:
        # Reverse mode over a while loop is computed like any other derivative: JAX (and
        # spmdc) refuse it only when the loop's result depends on the differentiated input,
        # which run.compare accepts (see reverse_over_while).
        fn: Fn = self.body
        for w in self.p.wrappers:
            fn = self.wrap(w, fn)
        return fn((), [np.asarray(a) for a in args], False)

    # --- the body: traced by spmdc, run by the reference interpreter ---------------------

    def body(self, mesh: Mesh, args: list[np.ndarray], real: bool) -> list[np.ndarray]:
        from spmdc.compiler.interpreter_spmd import evaluate_spmd
        self.evaluations += 1
        if self.evaluations > self.budget:
            raise TooCostly(f"more than {self.budget} body evaluations")
        func, captured = self.trace(mesh)
        sizes = tuple(s for _, s in mesh)
        captured = [np.broadcast_to(np.asarray(c), sizes + np.shape(c)) for c in captured]
        return evaluate_spmd(func, mesh, *args, *captured, real=real)

    def trace(self, mesh: Mesh) -> Any:
        if mesh not in self.funcs:
            from spmdc.compiler.ir import TensorType

            from .program import to_source
            ns: dict[str, Any] = {"__name__": "fuzz_reference"}
            source = to_source(self.p.replace(wrappers=()))
            exec(compile(source.split("\n\nf = body")[0], "<fuzz body>", "exec"), ns)
            body = ns["body"]
            types = [TensorType(i.shape, _np_dtype(i.dtype)) for i in self.p.inputs]
            trace_function = _trace_function()
            func, _, captured = trace_function(lambda xs: list(body(*xs)), types,
                                               [False] * len(types), "body",
                                               {n: s for n, s in mesh if not n.startswith("_")})
            self.funcs[mesh] = (func, captured)
        return self.funcs[mesh]

    # --- wrappers ---------------------------------------------------------------------------

    def wrap(self, w: Wrapper, fn: Fn) -> Fn:
        k = w.kind
        if k == "jit":
            return fn
        if k in ("vmap", "pmap"):
            return self.mapped(w, fn)
        if k in ("grad", "value_and_grad", "jacrev", "jacfwd", "jvp"):
            return self.derivative(w, fn)
        if k == "cond":
            return _cond(fn)
        if k in ("while", "fori"):
            return _loop(fn, w.get("length"))
        if k == "scan":
            return _scan(fn)
        raise ValueError(f"unknown wrapper {k}")

    def mapped(self, w: Wrapper, fn: Fn) -> Fn:
        size, name = w.get("size"), w.get("axis_name") or f"_anon{next(self.fresh)}"

        def g(mesh: Mesh, args: list[np.ndarray], real: bool) -> list[np.ndarray]:
            m = len(mesh)
            inner = []
            for x, ax in zip(args, w.get("in_axes"), strict=True):
                if ax is None:
                    x = np.broadcast_to(np.expand_dims(x, m), x.shape[:m] + (size,) + x.shape[m:])
                else:
                    x = np.moveaxis(x, m + ax % (x.ndim - m), m)
                inner.append(np.ascontiguousarray(x))
            outs = fn(mesh + ((name, size),), inner, real)
            return [np.moveaxis(o, m, m + ax % (o.ndim - m))
                    for o, ax in zip(outs, w.get("out_axes"), strict=True)]
        return g

    def derivative(self, w: Wrapper, fn: Fn) -> Fn:
        nums, kind, step = argnums_of(w), w.kind, self.step

        def g(mesh: Mesh, args: list[np.ndarray], real: bool) -> list[np.ndarray]:
            m = len(mesh)
            # np.asarray: an outer derivative can hand over 0-d results as NumPy scalars,
            # which the finite differences below cannot assign into
            x64 = [np.asarray(a.astype(np.float64) if _isfloat(a) else a) for a in args]

            def at(k: int, x: np.ndarray) -> list[np.ndarray]:
                return fn(mesh, x64[:k] + [x] + x64[k + 1:], True)

            def floats(outs: list[np.ndarray]) -> list[np.ndarray]:
                return [o for o in outs if _isfloat(o)]

            def cast(value: np.ndarray, like: np.ndarray | str) -> np.ndarray:
                if real:
                    return value
                return value.astype(like.dtype if isinstance(like, np.ndarray) else _np_dtype(like))

            base = fn(mesh, args, real)          # the primal outputs, in their own dtypes
            if kind in ("grad", "value_and_grad") and not floats(base):
                # The script's _total sums no float output: the Python int 0, which JAX's
                # (and spmdc's) grad refuses as an integer output.
                raise TypeError(f"{kind} requires a real-valued output; the function has "
                                "no float output (its total is the int 0)")
            if kind in ("grad", "value_and_grad"):
                grads = []
                for k in nums:
                    x = x64[k]
                    grad = np.zeros(x.shape)
                    if self.kinks:
                        s_zero = sum(float(np.sum(o)) for o in floats(at(k, x)))
                    for j in np.ndindex(x.shape):
                        h = step * (1 + abs(x[j]))
                        plus, minus = x.copy(), x.copy()
                        plus[j] += h
                        minus[j] -= h
                        # An output that is NaN whatever the input (take's fill) makes
                        # these NaN where JAX's derivative is 0: run.compare leaves such
                        # elements to the JAX oracle. (Summing around the NaN would lose
                        # the variation of a NaN total that an outer derivative sees.)
                        s_plus = sum(float(np.sum(o)) for o in floats(at(k, plus)))
                        s_minus = sum(float(np.sum(o)) for o in floats(at(k, minus)))
                        grad[j] = (s_plus - s_minus) / (2 * h)
                        if self.kinks and _kink(s_minus, s_zero, s_plus, h):
                            grad[j] = np.nan
                    grads.append(cast(grad, args[k]))
                if kind == "grad":
                    return grads
                shape = base[0].shape[:m] if base else ()
                value = sum((np.sum(o.astype(np.float64).reshape(shape + (-1,)), axis=-1)
                             for o in floats(base)), np.zeros(shape))
                dtypes = [(o.shape, o.dtype.name) for o in floats(base)]
                value_dtype = total_dtype(dtypes) if not real else "float64"
                return [cast(np.asarray(value), value_dtype)] + grads
            if kind == "jacrev":
                outs = []
                for index, o in enumerate(floats(base)):
                    for k in nums:
                        x = x64[k]
                        zero = floats(at(k, x))[index] if self.kinks else None
                        o_shape = o.shape[m:]
                        jac = np.zeros(x.shape[:m] + o_shape + x.shape[m:])
                        for j in np.ndindex(x.shape):
                            h = step * (1 + abs(x[j]))
                            plus, minus = x.copy(), x.copy()
                            plus[j] += h
                            minus[j] -= h
                            o_plus = floats(at(k, plus))[index]
                            o_minus = floats(at(k, minus))[index]
                            d = (o_plus - o_minus) / (2 * h)
                            if self.kinks:
                                d = np.where(_kink(o_minus, zero, o_plus, h), np.nan, d)
                            summed = d.reshape((-1,) + o_shape).sum(axis=0)   # over the mesh
                            jac[j[:m] + (Ellipsis,) + j[m:]] = summed
                        outs.append(cast(jac, args[k]))
                return outs
            if kind == "jacfwd":
                outs = []
                for index, o in enumerate(floats(base)):
                    for k in nums:
                        x = x64[k]
                        inner_shape = x.shape[m:]
                        jac = np.zeros(o.shape + inner_shape)
                        for j in np.ndindex(inner_shape):
                            h = step * (1 + float(np.max(np.abs(x[(Ellipsis,) + j]))))
                            plus, minus = x.copy(), x.copy()
                            plus[(Ellipsis,) + j] += h
                            minus[(Ellipsis,) + j] -= h
                            d = (floats(at(k, plus))[index] - floats(at(k, minus))[index]) / (2 * h)
                            jac[(Ellipsis,) + j] = d
                        outs.append(cast(jac, o))
                return outs
            # jvp: the primal outputs, then the derivative along cos(x)
            tangents = {k: np.cos(x64[k]) for k in nums}
            h = step

            def moved(sign: float) -> list[np.ndarray]:
                xs = list(x64)
                for k in nums:
                    xs[k] = x64[k] + sign * h * tangents[k]
                return floats(fn(mesh, xs, True))
            plus, minus = moved(1.0), moved(-1.0)
            primal = floats(base)
            return primal + [cast((p - q) / (2 * h), o)
                             for p, q, o in zip(plus, minus, primal, strict=True)]
        return g


def _kink(minus: Any, zero: Any, plus: Any, h: float) -> Any:
    """Whether the one-sided slopes at a point differ by more than curvature explains at
    a small step: a kink exactly there. Ties between independent copies are the usual
    cause (``pmin`` of an input ``pmap`` broadcasts with ``in_axes=None``: one device's
    copy raised leaves the minimum, lowered moves it), where the derivative is a matter of
    convention (spmdc splits the cotangent among ties; the central difference averages
    the slopes). The reference leaves such elements unjudged (NaN; run.compare)."""
    forward, backward = (plus - zero) / h, (zero - minus) / h
    return np.abs(forward - backward) > 1e-3 * (1 + np.abs(forward) + np.abs(backward))


def _trace_function() -> Any:
    # The tracer's entry point; the frontend is being split into packages, so look for it
    # where it lives now.
    import importlib
    for module in ("spmdc.core.tracing",):
        try:
            return importlib.import_module(module).trace_function
        except (ImportError, AttributeError):
            continue
    raise ImportError("spmdc's trace_function was not found")


# --- control flow at mesh level ----------------------------------------------------------------

def _per_position(x: np.ndarray, m: int) -> np.ndarray:
    return x.reshape(x.shape[:m] + (-1,))


def _cond(fn: Fn) -> Fn:
    def g(mesh: Mesh, args: list[np.ndarray], real: bool) -> list[np.ndarray]:
        m = len(mesh)
        a0 = args[0]
        total = _per_position(a0.astype(np.float64 if _isfloat(a0) else np.int64), m).sum(-1)
        pred = total > 0
        outs = fn(mesh, args, real)
        neg = [o if o.dtype == bool else -o for o in outs]
        return [np.where(pred.reshape(pred.shape + (1,) * (t.ndim - m)), t, f)
                for t, f in zip(outs, neg, strict=True)]
    return g


def _bump(args: list[np.ndarray], i: int) -> list[np.ndarray]:
    # np.asarray: a 0-d product is a NumPy scalar, which finite differences cannot index
    return [np.asarray(x * np.asarray(np.float32(1 + 0.25 * i)).astype(x.dtype))
            if _isfloat(x) else x for x in args]


def _acc(acc: list[np.ndarray], new: list[np.ndarray]) -> list[np.ndarray]:
    with np.errstate(over="ignore"):
        return [a | b if a.dtype == bool else (a + b).astype(a.dtype)
                for a, b in zip(acc, new, strict=True)]


def _loop(fn: Fn, n: int) -> Fn:
    def g(mesh: Mesh, args: list[np.ndarray], real: bool) -> list[np.ndarray]:
        acc = fn(mesh, args, real)
        for i in range(n):
            acc = _acc(acc, fn(mesh, _bump(args, i), real))
        return acc
    return g


def _scan(fn: Fn) -> Fn:
    def g(mesh: Mesh, args: list[np.ndarray], real: bool) -> list[np.ndarray]:
        m = len(mesh)
        xs, rest = args[0], args[1:]
        n = xs.shape[m]
        step = [fn(mesh, [np.take(xs, i, axis=m)] + rest, real) for i in range(n)]
        carry = fn(mesh, [np.take(xs, 0, axis=m)] + rest, real)
        for y in step:
            carry = _acc(carry, y)
        return carry + [np.stack(ys, axis=m) for ys in zip(*step, strict=True)]
    return g


def estimate_cost(p: Program) -> int:
    """A rough count of body evaluations (to skip programs finite differences can't afford)."""
    cost = 1
    sizes = [math.prod(i.shape) for i in p.inputs]
    elements = max(sizes + [1])
    for w in p.wrappers:
        if w.kind in ("grad", "value_and_grad", "jacrev"):
            cost = cost * (2 * elements + 1)
        elif w.kind == "jacfwd":
            cost *= 2 * elements + 1
        elif w.kind == "jvp":
            cost *= 3
        elif w.kind in ("while", "fori", "scan"):
            cost *= w.get("length") + 1 + (w.kind == "scan")
        elif w.kind == "cond":
            cost *= 1
        elif w.kind in ("vmap", "pmap"):
            elements *= w.get("size")
    return cost


__all__ = ["Reference", "TooCostly", "estimate_cost", "is_float"]
