"""einsum for one or two operands, as transposes, reductions and one dot_general."""
from __future__ import annotations

from typing import Any

from ..core.tracing import user_source
from .core import asarray, where
from .products import _dot_general
from .reductions import sum
from .shape_ops import moveaxis, transpose


def _parse(subscripts: str, ndims: list[int]) -> tuple[list[str], str]:
    subscripts = subscripts.replace(" ", "")
    if "." in subscripts:
        raise TypeError(f"einsum: ellipsis ('...') is not supported yet (at {user_source()})")
    if "->" in subscripts:
        lhs, out = subscripts.split("->")
    else:
        lhs = subscripts
        letters = lhs.replace(",", "")
        out = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    inputs = lhs.split(",")
    if len(inputs) != len(ndims):
        raise TypeError(f"einsum: {len(inputs)} operand specs for {len(ndims)} operands")
    for spec, n in zip(inputs, ndims, strict=True):
        if len(spec) != n:
            raise TypeError(f"einsum: spec {spec!r} does not match an operand of rank {n}")
    return inputs, out


def _reduce_own(x: Any, spec: str, keep: set[str]) -> tuple[Any, str]:
    """Sum out letters that appear only in this operand (and not in the output);
    take diagonals of repeated letters."""
    for c in set(spec):
        while spec.count(c) > 1:                       # a diagonal: x[..., i, ..., i, ...]
            i = spec.index(c)
            j = spec.index(c, i + 1)
            n = x.shape[i]
            eye = asarray(__import__("numpy").eye(n, dtype=bool))
            x = moveaxis(x, (i, j), (-2, -1))
            x = sum(where(eye, x, 0), axis=-1)
            rest = [s for k, s in enumerate(spec) if k not in (i, j)]
            spec = "".join(rest) + c                   # the diagonal is now the last axis
    drop = [k for k, c in enumerate(spec) if c not in keep]
    if drop:
        x = sum(x, axis=tuple(drop))
        spec = "".join(c for k, c in enumerate(spec) if k not in drop)
    return x, spec


def einsum(subscripts: str, *operands: Any) -> Any:
    operands = [asarray(x) for x in operands]
    inputs, out = _parse(subscripts, [x.ndim for x in operands])
    if len(operands) == 1:
        x, spec = _reduce_own(operands[0], inputs[0], set(out))
        return transpose(x, [spec.index(c) for c in out])
    if len(operands) > 2:          # contract left to right, keeping letters used later
        needed = set("".join(inputs[2:]) + out)
        kept = "".join(sorted(set(inputs[0] + inputs[1]) & needed))
        left = einsum(f"{inputs[0]},{inputs[1]}->{kept}", operands[0], operands[1])
        return einsum(",".join([kept, *inputs[2:]]) + "->" + out, left, *operands[2:])
    (x, y), (xs, ys) = operands, inputs
    x, xs = _reduce_own(x, xs, set(ys) | set(out))
    y, ys = _reduce_own(y, ys, set(xs) | set(out))
    batch = [c for c in xs if c in ys and c in out]
    contract = [c for c in xs if c in ys and c not in out]
    z = _dot_general(x, y, (tuple(xs.index(c) for c in contract),
                                tuple(ys.index(c) for c in contract)),
                         (tuple(xs.index(c) for c in batch), tuple(ys.index(c) for c in batch)),
                         "einsum")
    zs = batch + [c for c in xs if c not in batch and c not in contract] \
        + [c for c in ys if c not in batch and c not in contract]
    return transpose(z, [zs.index(c) for c in out])
