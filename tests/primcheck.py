"""IR-level checks of one primitive against its NumPy reference.

Each check builds a one-equation Func, so it tests the primitive's rules alone:
- ``check_lowering``: compiled on PJRT == the reference implementation;
- ``check_vmap``: the batching rule == stacking the reference over slices (and the
  batched program also compiles and agrees);
- ``check_grad``: the VJP rule == central finite differences (float64), first order, and
  with ``second_order=True`` also the gradient of <grad, v>; it runs ``check_jvp`` too;
- ``check_jvp``: the JVP rule == central finite differences of every output along a
  random direction, and agrees with the VJP rule (<J v, w> == <v, J^T w>); with
  ``second_order=True`` also the JVP of the VJP program (forward over reverse).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from spmdc.compiler.builder import Builder
from spmdc.compiler.interpreter import evaluate
from spmdc.compiler.ir import Func, TensorType, check
from spmdc.compiler.passes.autodiff import vjp_func
from spmdc.compiler.passes.cleanup import cleanup
from spmdc.compiler.passes.forward import jvp_func
from spmdc.compiler.passes.vmap import BatchAxis, vmap_func
from spmdc.runtime.executable import run_func


def eqn_func(prim: Any, in_types: Sequence[TensorType], params: dict[str, Any]) -> Func:
    b = Builder(prim.name)
    ins = [b.input(t) for t in in_types]
    out = b.bind(prim, *ins, **params)
    return check(b.build(list(out) if prim.multiple_results else [out]))


def _types(args: Sequence[np.ndarray]) -> list[TensorType]:
    return [TensorType(np.shape(a), np.asarray(a).dtype) for a in args]


def assert_close(got: Any, want: Any, rtol: float, atol: float, what: str) -> None:
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} != {want.dtype}"
    if got.dtype.kind in "biu":
        np.testing.assert_array_equal(got, want, err_msg=what)
    else:
        np.testing.assert_allclose(got.astype(np.float64) if got.dtype.kind != "c" else got,
                                   want.astype(np.float64) if want.dtype.kind != "c" else want,
                                   rtol=rtol, atol=atol, err_msg=what, equal_nan=True)


def check_lowering(prim: Any, args: Sequence[np.ndarray], params: dict[str, Any],
                   rtol: float = 1e-5, atol: float = 1e-6) -> None:
    func = eqn_func(prim, _types(args), params)
    want = evaluate(func, *args)
    got = run_func(func, *args)
    for k, (g, w) in enumerate(zip(got, want, strict=True)):
        assert_close(g, w, rtol, atol, f"{prim.name} lowering, output {k}")


def check_vmap(prim: Any, args: Sequence[np.ndarray], params: dict[str, Any],
               in_dims: Sequence[int | None], axis_size: int,
               rtol: float = 1e-5, atol: float = 1e-6, compile: bool = True) -> None:
    """``args[k]`` already carries the batch dimension at ``in_dims[k]`` (if not None)."""
    unbatched = [TensorType(tuple(s for i, s in enumerate(np.shape(a)) if i != d),
                            np.asarray(a).dtype) if d is not None else t
                 for a, d, t in zip(args, in_dims, _types(args), strict=True)]
    func = eqn_func(prim, unbatched, params)
    n_out = len(func.outputs)
    batched = check(vmap_func(func, in_dims, BatchAxis(axis_size), [0] * n_out))
    want = [np.stack([evaluate(func, *[a if d is None else np.take(a, i, axis=d)
                                       for a, d in zip(args, in_dims, strict=True)])[k]
                      for i in range(axis_size)]) for k in range(n_out)]
    got = evaluate(batched, *args)
    for k in range(n_out):
        assert_close(got[k], want[k], rtol, atol, f"{prim.name} vmap (interpreted), output {k}")
    if compile:
        got = run_func(batched, *args)
        for k in range(n_out):
            assert_close(got[k], want[k], rtol, atol, f"{prim.name} vmap (compiled), output {k}")


def _scalarized(func: Func, weights: Sequence[np.ndarray]) -> Func:
    """sum_k <out_k, weights_k>: a scalar function of func's inputs."""
    b = Builder(func.name + "_sum")
    ins = [b.input(t) for t in func.in_types]
    outs = b.inline(func, ins)
    total = None
    for o in outs:
        wv = b.input(o.type)
        term = b.reduce_sum(b.mul(o, wv), axes=tuple(range(o.type.ndim)))
        total = term if total is None else b.add(total, term)
    return b.build([total])


def _numeric_grad(f, xs: list[np.ndarray], k: int, eps: float) -> np.ndarray:
    g = np.zeros_like(xs[k])
    flat = g.reshape(-1)
    for i in range(xs[k].size):
        plus = [x.copy() for x in xs]
        minus = [x.copy() for x in xs]
        plus[k].reshape(-1)[i] += eps
        minus[k].reshape(-1)[i] -= eps
        flat[i] = (f(plus) - f(minus)) / (2 * eps)
    return g


def check_grad(prim: Any, args: Sequence[np.ndarray], params: dict[str, Any],
               wrt: Sequence[int] | None = None, eps: float = 1e-6, rtol: float = 1e-4,
               atol: float = 1e-6, second_order: bool = False, seed: int = 0) -> None:
    """Gradients of sum(out * w) for random w, in float64, against finite differences."""
    args = [np.asarray(a) for a in args]
    wrt = [k for k, a in enumerate(args) if a.dtype.kind == "f"] if wrt is None else list(wrt)
    func = eqn_func(prim, _types(args), params)
    rng = np.random.default_rng(seed)
    weights = [rng.normal(size=t.shape).astype(t.dtype) for t in func.out_types]
    scalar = check(_scalarized(func, weights))
    n = len(args)
    mask = [k in wrt for k in range(n)]

    def value(xs: list[np.ndarray]) -> float:
        return float(evaluate(scalar, *xs, *weights)[0])

    grad_func = check(cleanup(vjp_func(scalar, mask + [False] * len(weights))))
    one = np.ones((), scalar.out_types[0].dtype)
    got = evaluate(grad_func, *args, *weights, one)[1:]
    for g, k in zip(got, wrt, strict=True):
        want = _numeric_grad(value, list(args), k, eps)
        assert_close(g, want.astype(g.dtype), rtol, atol, f"{prim.name} grad wrt input {k}")
    check_jvp(prim, args, params, wrt, eps, rtol, atol, seed=seed, weights=weights,
              grads=got)
    if second_order:
        # Forward over reverse: the JVP of the gradient program, by finite differences.
        check_jvp_of(grad_func, [*args, *weights, one], wrt, eps, rtol * 10, atol * 10,
                     f"{prim.name} jvp of grad", seed)
    if not second_order:
        return
    # d/dx <grad(x), v>
    vs = [rng.normal(size=args[k].shape).astype(args[k].dtype) for k in wrt]
    b = Builder("hvp")
    ins = [b.input(t) for t in grad_func.in_types[:-1]]
    outs = b.inline(grad_func, [*ins, b.input(grad_func.in_types[-1])])
    # the seed cotangent is the last input; keep it an input for simplicity
    seed_in = b.inputs[-1]
    total = None
    for g in outs[1:]:
        v = b.input(g.type)
        term = b.reduce_sum(b.mul(g, v), axes=tuple(range(g.type.ndim)))
        total = term if total is None else b.add(total, term)
    hvp = check(b.build([total]))
    n_in = len(hvp.inputs)
    hmask = [k in wrt for k in range(n)] + [False] * (n_in - n)
    hgrad = check(cleanup(vjp_func(hvp, hmask)))
    fixed = [*weights, one, *vs]
    got2 = evaluate(hgrad, *args, *fixed, one)[1:]

    def value2(xs: list[np.ndarray]) -> float:
        return float(evaluate(hvp, *xs, *fixed)[0])

    for g, k in zip(got2, wrt, strict=True):
        want = _numeric_grad(value2, list(args), k, eps)
        assert_close(g, want.astype(g.dtype), rtol * 10, atol * 10,
                     f"{prim.name} second-order grad wrt input {k}")
    _ = seed_in


def _directions(args: Sequence[np.ndarray], wrt: Sequence[int], seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed + 1)
    return [rng.normal(size=np.shape(args[k])).astype(np.asarray(args[k]).dtype) for k in wrt]


def check_jvp_of(func: Func, args: Sequence[np.ndarray], wrt: Sequence[int], eps: float,
                 rtol: float, atol: float, what: str, seed: int = 0) -> list[np.ndarray]:
    """The JVP program of ``func`` along random directions of ``args[wrt]`` == central
    finite differences (float64) of each float output. Returns the tangents."""
    args = [np.asarray(a) for a in args]
    mask = [k in wrt for k in range(len(args))]
    vs = _directions(args, wrt, seed)
    jf = check(cleanup(jvp_func(func, mask)))
    n = len(func.outputs)
    outs = evaluate(jf, *args, *vs)
    tangents = outs[n:]

    def at(step: float) -> list[np.ndarray]:
        moved = list(args)
        for k, v in zip(wrt, vs, strict=True):
            moved[k] = args[k] + step * v
        return evaluate(func, *moved)

    plus, minus = at(eps), at(-eps)
    floats = [k for k, t in enumerate(func.out_types) if t.dtype.kind in "fc"]
    assert len(floats) == len(tangents), what
    for t, k in zip(tangents, floats, strict=True):
        want = (np.asarray(plus[k], np.float64) - np.asarray(minus[k], np.float64)) / (2 * eps)
        assert_close(t, want.astype(t.dtype), rtol, atol, f"{what}, output {k}")
    return tangents


def check_jvp(prim: Any, args: Sequence[np.ndarray], params: dict[str, Any],
              wrt: Sequence[int] | None = None, eps: float = 1e-6, rtol: float = 1e-4,
              atol: float = 1e-6, seed: int = 0, weights: Sequence[np.ndarray] | None = None,
              grads: Sequence[np.ndarray] | None = None) -> None:
    """The JVP rule against finite differences; given the VJP's ``grads`` of
    sum(out * weights), also <J v, weights> == <v, grads>."""
    args = [np.asarray(a) for a in args]
    wrt = [k for k, a in enumerate(args) if a.dtype.kind == "f"] if wrt is None else list(wrt)
    func = eqn_func(prim, _types(args), params)
    tangents = check_jvp_of(func, args, wrt, eps, rtol, atol, f"{prim.name} jvp", seed)
    if weights is None or grads is None:
        return
    floats = [k for k, t in enumerate(func.out_types) if t.dtype.kind in "fc"]
    lhs = sum(float(np.sum(t * weights[k])) for t, k in zip(tangents, floats, strict=True))
    rhs = sum(float(np.sum(v * g)) for v, g in zip(_directions(args, wrt, seed), grads,
                                                    strict=True))
    np.testing.assert_allclose(lhs, rhs, rtol=max(rtol, 1e-9) * 10, atol=atol * 10,
                               err_msg=f"{prim.name}: <J v, w> != <v, J^T w>")
