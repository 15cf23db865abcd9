"""The reference SPMD interpreter: a per-device program run as a loop over the devices.

``evaluate_spmd(func, mesh, *args)`` runs ``func`` once per device of ``mesh`` (an ordered
tuple of ``(axis name, size)`` pairs, see passes/collectives.py), all devices in lockstep,
one equation at a time. Ordinary equations run each device's values through the
primitive's NumPy reference; a collective (a primitive in ``varying_rules``) stacks the
operands of each replica group's members and calls its reference once per group. It is
the oracle that pmap (compiled) and vmap with ``axis_name`` (batched) are tested against.

Each argument carries the mesh as leading axes: for the mesh ``(('i', 2), ('j', 4))`` an
argument of per-device type ``f32[3]`` is passed as an array of shape ``(2, 4, 3)``, and
results come back the same way. ``real=True`` holds floating-point values in float64, as
``evaluate`` does (see compiler/interpreter.py). Sub-functions in params (loop bodies) run
with the plain
interpreter, so collectives inside them are not supported here (an error says so).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .interpreter import apply_eqn, storage_dtype
from .ir import Atom, Func, Lit, Var
from .passes.collectives import Mesh, _sub_funcs, collective_axes, replica_groups, varying_rules

__all__ = ["evaluate_spmd"]


def evaluate_spmd(func: Func, mesh: Mesh, *args: Any, real: bool = False) -> list[np.ndarray]:
    mesh = tuple(mesh)
    sizes = tuple(s for _, s in mesh)
    n = math.prod(sizes)
    if len(args) != len(func.inputs):
        raise TypeError(f"{func.name} takes {len(func.inputs)} inputs, got {len(args)}")
    envs: list[dict[Var, np.ndarray]] = [{} for _ in range(n)]
    for v, x in zip(func.inputs, args, strict=True):
        x = np.asarray(x, storage_dtype(v.type.dtype, real))
        if x.shape != sizes + v.type.shape:
            raise TypeError(f"{func.name}: an argument for an input of type {v.type} on the "
                            f"mesh {mesh} must have shape {sizes + v.type.shape}, got {x.shape}")
        flat = x.reshape(n, *v.type.shape)
        for r in range(n):
            envs[r][v] = flat[r]

    def read(r: int, a: Atom) -> np.ndarray:
        if isinstance(a, Lit):
            return np.asarray(a.value, storage_dtype(a.type.dtype, real))
        return envs[r][a]

    def store(r: int, outputs: Sequence[Var], values: Any) -> None:
        for v, o in zip(outputs, values, strict=True):
            envs[r][v] = np.asarray(o).astype(storage_dtype(v.type.dtype, real),
                                             copy=False).reshape(v.type.shape)

    for eqn in func.eqns:
        prim = eqn.prim
        if prim in varying_rules:                 # a collective: one call per group
            for group in replica_groups(mesh, eqn.params["axes"]):
                stacked = [np.stack([read(r, a) for r in group]) for a in eqn.inputs]
                outs = prim.impl(*stacked, **eqn.params)
                outs = outs if prim.multiple_results else (outs,)
                for pos, r in enumerate(group):
                    store(r, eqn.outputs, [o[pos] for o in outs])
            continue
        if _holds_collective(eqn):
            raise NotImplementedError(
                f"evaluate_spmd: {prim.name} has a collective in a sub-function; bodies run "
                "one device at a time here, so they cannot communicate. Test such programs "
                "against the compiled pmap, or against vmap with axis_name=...")
        for r in range(n):
            store(r, eqn.outputs, apply_eqn(eqn, [read(r, a) for a in eqn.inputs], real))
    return [np.stack([read(r, a) for r in range(n)]).reshape(sizes + a.type.shape)
            for a in func.outputs]


def _holds_collective(eqn: Any) -> bool:
    return any(collective_axes(e) or _holds_collective(e)
               for sub in _sub_funcs(eqn) for e in sub.eqns)
