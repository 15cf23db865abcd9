"""The two markers of a nested pmap's boundary: ``nested_pmap_in`` and ``nested_pmap_out``.

Both are the identity on values (they lower to nothing). They exist for reverse mode:
they say where the enclosing program's values, which are the same on every device along
the nested pmap's axis, meet the nested body's per-device values, and their VJP rules
convert cotangents between the two conventions. The derivation is in Note [nested pmap]
(transforms/pmap_nested.py, where the markers are emitted).

- ``nested_pmap_in(x)``: a value of the enclosing program entering the nested body
  (a mapped input before its slice is taken, an ``in_axes=None`` input, a closed-over
  value). Transpose: ``psum`` over the nested axis, which adds up the per-device
  cotangents into the enclosing program's one cotangent.
- ``nested_pmap_out(y)``: a value of the nested body, equal on every device along the
  nested axis (an ``all_gather``ed mapped output, an ``out_axes=None`` output), leaving
  it. Transpose: the enclosing program's cotangent on the first device of the group and
  zeros on the others, so that the body's per-device transposes count it once.

They are not collectives for the replication analysis: a value keeps the axes it varies
over (the union rule of Note [replication] applies, so they are absent from
``varying_rules``).
"""
from __future__ import annotations

import numpy as np

from ..builder import lit
from ..ir import TensorType
from ..passes.autodiff import vjp_rules, zeros
from ..passes.forward import jvp_rules, linear_jvp
from ..passes.vmap import batch_rules
from ..stablehlo import lower_rules
from .collectives import _check_axes, transpose_note
from .core import declare

__all__ = ["nested_pmap_in_p", "nested_pmap_out_p"]


def _marker_rule(name: str):
    def rule(x: TensorType, *, axes, axis_sizes) -> TensorType:
        _check_axes(name, axes, axis_sizes)
        return x
    return rule


def _marker_batch(prim):
    def rule(b, axis, args, dims, **params):
        return [b.bind(prim, args[0], **params)], [dims[0]]
    return rule


def _identity(x, **_):
    return np.array(x)


nested_pmap_in_p = declare("nested_pmap_in", _marker_rule("nested_pmap_in"), _identity)
batch_rules[nested_pmap_in_p] = _marker_batch(nested_pmap_in_p)
vjp_rules[nested_pmap_in_p] = lambda b, ct, x, *, axes, axis_sizes: [   # Note [nested pmap]
    b.psum(ct, axes=axes, note=transpose_note("nested_pmap_in"))]
jvp_rules[nested_pmap_in_p] = linear_jvp(nested_pmap_in_p)       # identities: so are tangents
lower_rules[nested_pmap_in_p] = lambda ctx, eqn, x: x


def _nested_out_vjp(b, ct, y, *, axes, axis_sizes):
    first = b.eq(b.axis_index(axes=axes, axis_sizes=axis_sizes), lit(0, np.int32))
    return [b.select(first, ct, zeros(b, ct.type))]


nested_pmap_out_p = declare("nested_pmap_out", _marker_rule("nested_pmap_out"), _identity)
batch_rules[nested_pmap_out_p] = _marker_batch(nested_pmap_out_p)
vjp_rules[nested_pmap_out_p] = _nested_out_vjp                           # Note [nested pmap]
jvp_rules[nested_pmap_out_p] = linear_jvp(nested_pmap_out_p)
lower_rules[nested_pmap_out_p] = lambda ctx, eqn, x: x
