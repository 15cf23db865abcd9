"""One-equation SPMD programs on a device mesh, shared by the collectives' tests
(tests/compiler/primitives/test_collectives.py, tests/lax/test_grouped.py): build a Func
of one equation, compile it for a mesh and run it with the mesh as leading axes, as the
SPMD reference interpreter (compiler/interpreter_spmd.py) takes them."""
from __future__ import annotations

import math

import numpy as np

from spmdc.compiler.builder import Builder
from spmdc.compiler.ir import check
from spmdc.runtime import pjrt
from spmdc.runtime.executable import compile_func

F32, F64 = np.dtype(np.float32), np.dtype(np.float64)
MESH = (("i", 2), ("j", 4))


def run_on_mesh(func, mesh, *args):
    """Compile ``func`` for the mesh and run it; args/results carry the mesh as leading
    axes, as for evaluate_spmd."""
    sizes = tuple(s for _, s in mesh)
    n = math.prod(sizes)
    exe = compile_func(func, pjrt.devices()[:n], axis_env=dict(mesh),
                       mesh_axes=[name for name, _ in mesh])
    bufs = [[pjrt.put(np.ascontiguousarray(np.asarray(x, t.dtype).reshape(n, *t.shape)[r]),
                      dev) for r, dev in enumerate(exe.devices)]
            for x, t in zip(args, func.in_types, strict=True)]
    outs = exe.execute(bufs)
    return [np.stack([pjrt.to_numpy(o[r]) for r in range(n)]).reshape(sizes + t.shape)
            for o, t in zip(outs, func.out_types, strict=True)]


def one_eqn(build, in_type):
    b = Builder("f")
    x = b.input(in_type)
    out = build(b, x)
    return check(b.build(out if isinstance(out, list) else [out]))
