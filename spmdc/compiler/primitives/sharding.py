"""``sharding_constraint``: a value's layout over the mesh, for XLA's SPMD partitioner.

The identity on values. In a program lowered in the partition form (Note [partition form]
in compiler/stablehlo.py) it becomes ``sdy.sharding_constraint``, which tells the
partitioner how to lay the value out there; in every other program (one device, or the
per-device programs of pmap and shard_map) it lowers to nothing. Params: ``mesh``, the
(name, size) pairs of the mesh, ``device_ids``, its devices in mesh order, and ``spec``,
per dimension the mesh axes it is split over (``jax.lax.with_sharding_constraint``'s
NamedSharding, in plain data).

Its tangent and cotangent are laid out the same way (as JAX does), and under vmap the
batch dimension is not split.
"""
from __future__ import annotations

import math

import numpy as np

from ...errors import LoweringError
from ..ir import TensorType
from ..passes.autodiff import vjp_rules
from ..passes.forward import jvp_rules, linear_jvp
from ..passes.vmap import batch_rules
from ..stablehlo import lower_rules, sdy, sharding_attr
from .core import declare

__all__ = ["sharding_constraint_p"]


def _shape_rule(x: TensorType, *, mesh, device_ids, spec) -> TensorType:
    sizes = dict(mesh)
    if len(spec) != x.ndim:
        raise TypeError(f"sharding_constraint: a spec for {len(spec)} dimensions on a value "
                        f"of rank {x.ndim}")
    for d, (axes, n) in enumerate(zip(spec, x.shape, strict=True)):
        parts = math.prod(sizes[a] for a in axes)
        if n % parts:
            raise TypeError(f"sharding_constraint: dimension {d} of {x} has size {n}, which "
                            f"is not divisible by {parts}, the number of pieces mesh axes "
                            f"{axes} split it into")
    return x


sharding_constraint_p = declare("sharding_constraint", _shape_rule,
                                lambda x, **_: np.array(x))


def _batch(b, axis, args, dims, *, mesh, device_ids, spec):
    d = dims[0]
    spec = spec[:d] + ((),) + spec[d:]
    return [b.bind(sharding_constraint_p, args[0], mesh=mesh, device_ids=device_ids,
                   spec=spec)], [d]


def _lower(ctx, eqn, x):
    if not ctx.partitioned:
        return x
    if tuple(eqn.params["mesh"]) != tuple(ctx.partition_mesh):
        raise LoweringError(
            f"with_sharding_constraint over the mesh {eqn.params['mesh']} in a program "
            f"laid out over the mesh {ctx.partition_mesh}: use one mesh in a program")
    return sdy.ShardingConstraintOp(x, sharding_attr(eqn.params["spec"])).result


batch_rules[sharding_constraint_p] = _batch
vjp_rules[sharding_constraint_p] = lambda b, ct, x, **params: [
    b.bind(sharding_constraint_p, ct, **params)]
jvp_rules[sharding_constraint_p] = linear_jvp(sharding_constraint_p)
lower_rules[sharding_constraint_p] = _lower
