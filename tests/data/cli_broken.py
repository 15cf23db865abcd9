"""Programs with SPMD mistakes that ``spmdc check`` must report (tests/e2e/test_cli.py)."""

import spmdc
from spmdc import lax


def _unbound(x):
    return lax.psum(x, "j")                          # line 8: no axis 'j' is bound


unbound_axis = spmdc.pmap(_unbound, axis_name="i")


def _permute(x):
    return lax.ppermute(x, "i", [(0, 1), (1, 1)])    # line 15: two sources send to 1


bad_permutation = spmdc.pmap(_permute, axis_name="i")


def _local(x):
    return x * 2.0                                   # varies over 'i', not reduced


varying_out = spmdc.pmap(_local, axis_name="i", out_axes=None)


def shape_error(x, y):
    return x @ y                                     # line 29: f32[3] @ f32[4]


def fine(x):
    return lax.pmean(x * 2.0, "i")


correct = spmdc.pmap(fine, axis_name="i", out_axes=None)
