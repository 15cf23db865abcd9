"""pmap inside an enclosing pmap: the mesh axes a top-level pmap collects while it is traced,
the nested call flattened into collectives over one more axis, and the gathered outputs
given back as per-device pieces (transforms/pmap.py calls these).

Note [nested pmap]
~~~~~~~~~~~~~~~~~~
``pmap(pmap(f, 'j'), 'i')`` on 2 x 4 devices runs the outer program on the whole mesh
``(('i', 2), ('j', 4))``: device ``(i, j)`` holds the outer program's values for ``i``
(the same on every ``j``). The inner pmap is flattened at trace time into ordinary
collectives over ``'j'``: each device slices its piece of the mapped inputs at
``axis_index('j')``, runs the body inline, and ``all_gather``s each mapped output over
``'j'``, so the outer program sees the whole inner result. Collectives in the body over
``'i'``, ``'j'`` or ``('i', 'j')`` then mean what they mean in JAX, because the mesh
groups devices by the other axes. An outer output that is such a gathered inner output
(both out_axes 0) is not gathered: each device returns its own piece and the result is
one Array of shape ``(2, 4, ...)`` over all 8 devices, and DCE removes the gather.

Reverse mode. Two kinds of value meet at the boundary, and their cotangents follow
different conventions. A value of the outer program is *one* value that every device
along 'j' holds a copy of; its cotangent is likewise one value, held by every copy. A
value of the body is per device; collectives transpose per device (Note [collective
transpose]), i.e. the body's VJP is the derivative of the sum over devices of
<cotangent_j, output_j>. Reading the inner pmap as the function the outer program
calls, with the reference semantics of vmap(axis_name='j'):

    Z = inner(X, B)    Z[j] = y_j  (mapped outputs),  O = o_j for any j  (out_axes=None)
                       y_j, o_j = body_j(X[j], B)  (X mapped, B in_axes=None or closed over)

    <ct_Z, Z> + <ct_O, O> = sum_j <ct_Z[j], y_j> + sum_j <[j == 0] ct_O, o_j>

(the o_j are equal as functions of the inputs: the replication check below proves it
before any of this runs). So the body's cotangent seeds are ct_Z[j] on device j for a
mapped output and ct_O on device 0 only, zeros elsewhere, for an unmapped one. Pulled
through the body per device, they give ct_{X[j]} and ct_{B,j} on device j, and by the
chain rule through X[j] = slice(X, j) and "B is used on every device":
ct_X = sum_j onehot_j(ct_{X[j]}) (the stack of the pieces) and ct_B = sum_j ct_{B,j}.

Flattened into ordinary primitives, that is what per-device transposes give *except* at
the boundary: all_gather's transpose (psum_scatter) would add up the n identical copies
of ct_Z (n times too much), and the slice's transpose (a one-hot) and B's cotangent would
never be summed over 'j'. Hence two identity markers around the body
(primitives/collectives_nested.py): every float value entering it goes through
``nested_pmap_in`` (transpose: psum over 'j', which turns the per-device one-hots into the
stack and sums B's cotangents), and every float output, after its all_gather, through
``nested_pmap_out`` (transpose: ct on the group's device 0, zeros elsewhere, so
psum_scatter hands device j exactly ct_Z[j], and an unmapped output's cotangent is
counted once). The markers lower to nothing. Checked against vmap for every shape of
nested pmap in tests/transforms/test_pmap_nested_grad.py.

We chose this over a dedicated nested-map primitive because vmap of the flattened
program needs no new rules, and grad only these two.
"""
from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from ..compiler.builder import lit
from ..compiler.ir import Func, Lit
from ..compiler.passes.autodiff import is_float
from ..compiler.passes.collectives import ReplicationError, varying_axes
from ..core.pytree_tracing import trace_pytree
from ..core.tracing import Tracer, to_atom, user_source, where
from ..core.tree import tree_unflatten
from . import mapping
from .arguments import check_mapped_size
from .mapping import mapped_leaves, mapped_size, out_paths, slice_types

if TYPE_CHECKING:
    from .pmap import Pmapped

__all__ = ["DeviceAxis", "MeshRecorder", "recording_mesh", "nested_pmap_call", "peel_gathers"]


class DeviceAxis(int):
    """The size of an axis bound by pmap, in ``Trace.axis_env``: a device-mesh axis (an
    int, like the sizes vmap binds, but marking the axis as one of devices)."""


class MeshRecorder:
    """Axes that nested pmaps add to the mesh, and the gathers they emit (Note [nested pmap])."""

    def __init__(self, name: str, size: int):
        self.axes: list[tuple[str, int]] = [(name, size)]
        self.gathered: dict[Any, tuple[Any, str]] = {}   # gathered Var -> (piece, axis)

    def add_axis(self, name: str, size: int) -> None:
        known = dict(self.axes)
        if name in known and known[name] != size:
            raise ValueError(f"pmap: nested pmaps over axis {name!r} have different sizes "
                             f"({known[name]} and {size}){where()}")
        if name not in known:
            self.axes.append((name, size))


class _Recording(threading.local):
    def __init__(self) -> None:
        self.stack: list[MeshRecorder] = []   # this thread's outermost pmaps being traced


_recording = _Recording()


@contextlib.contextmanager
def recording_mesh(name: str, size: int) -> Iterator[MeshRecorder]:
    """While a top-level pmap over axis ``name`` of ``size`` devices is traced: the recorder
    that the pmaps nested in it add their axes and gathers to."""
    recorder = MeshRecorder(name, size)
    _recording.stack.append(recorder)
    try:
        yield recorder
    finally:
        _recording.stack.pop()


def nested_pmap_call(pmapped: Pmapped, trace: Any, statics: tuple[Any, ...],
                     args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``pmapped`` called inside an enclosing pmap's trace: one more mesh axis, the body
    inlined between slices and gathers over it (see Note [nested pmap])."""
    if pmapped.devices is not None:
        raise ValueError(f"pmap({pmapped.name}): devices= is only supported on the "
                         f"outermost pmap; a nested pmap uses the enclosing pmap's "
                         f"devices{where()}")
    name = pmapped.axis_name
    if name in trace.axis_env:
        raise ValueError(f"pmap({pmapped.name}): axis name {name!r} is already bound by an "
                         f"enclosing pmap or vmap; use a different axis_name{where()}")
    leaves, dims, paths = mapped_leaves("pmap", args, kwargs, pmapped.in_axes_for(statics),
                                        pmapped.name)
    size = mapped_size("pmap", leaves, dims, paths, pmapped.axis_size)
    check_mapped_size(f"pmap({pmapped.name})", size)
    if not _recording.stack:
        raise ValueError(f"pmap({pmapped.name}): a pmap inside shard_map is not supported; "
                         f"map over the mesh's axes with the shard_map's in_specs, or use "
                         f"vmap(axis_name=...) inside it{where()}")
    recorder = _recording.stack[-1]
    recorder.add_axis(name, size)
    deeper_from = [n for n, _ in recorder.axes].index(name)
    in_types, in_weak = slice_types(leaves, dims)
    body, out_weak, captured, out_tree, _ = trace_pytree(
        pmapped.with_statics(statics), args, kwargs, pmapped.name, in_types, in_weak,
        {name: DeviceAxis(size)})
    out_dims = mapping.out_dims("pmap", pmapped.out_axes, out_tree, body.out_types)
    inner_axes = {n for n, _ in recorder.axes[deeper_from:]}
    varying = varying_axes(body, [frozenset({name}) if d is not None else frozenset()
                                  for d in dims] + [frozenset()] * len(captured))
    names = out_paths(out_tree)
    for k, (v, d) in enumerate(zip(varying, out_dims, strict=True)):
        if d is None and v & inner_axes:      # See Note [replication]
            raise ReplicationError(
                f"pmap({pmapped.name}): {names[k]} has out_axes=None, but its value may "
                f"differ over axis {name!r}, so there is no single copy to return; "
                f"reduce it with a collective first (e.g. lax.pmean){where()}")
    b = trace.builder
    b.source = user_source()
    i32 = np.dtype(np.int32)
    index = b.axis_index(axes=(name,), axis_sizes=(size,))
    sizes_of = {"axes": (name,), "axis_sizes": (size,)}

    def enter(x: Any) -> Any:        # See Note [nested pmap]: transposes to a psum
        return b.nested_pmap_in(x, **sizes_of) if is_float(x.type) else x

    inputs = []
    for leaf, d in zip(leaves, dims, strict=True):
        x = enter(to_atom(trace, leaf))
        if d is not None:            # this device's slice along the mapped axis
            starts = [lit(0, i32)] * x.type.ndim
            starts[d] = index
            sizes = list(x.type.shape)
            sizes[d] = 1
            x = b.dynamic_slice(x, *starts, slice_sizes=tuple(sizes))
            del sizes[d]
            x = b.reshape(x, new_sizes=tuple(sizes))
        inputs.append(x)
    inputs += [enter(to_atom(trace, c)) for c in captured]
    outs = []
    for o, d in zip(b.inline(body, inputs), out_dims, strict=True):
        if isinstance(o, Lit):
            o = b.convert(o, new_dtype=o.type.dtype)
        piece = o
        if d is not None:
            o = b.all_gather(o, axes=(name,), axis_sizes=(size,), dimension=d, tiled=False)
        if is_float(o.type):         # See Note [nested pmap]: transposes to a one-hot
            o = b.nested_pmap_out(o, **sizes_of)
        if d == 0:
            recorder.gathered[o] = (piece, name)
        outs.append(o)
    return tree_unflatten(out_tree, [Tracer(o, trace, w)
                                     for o, w in zip(outs, out_weak, strict=True)])


def peel_gathers(func: Func, out_dims: list[int | None], recorder: MeshRecorder
                 ) -> tuple[Func, list[int]]:
    """Return gathered nested-pmap outputs as per-device pieces (Note [nested pmap]);
    ``depths[k]``: how many leading mesh axes output k is split over."""
    mesh_names = [n for n, _ in recorder.axes]
    outputs, depths = list(func.outputs), []
    for k, d in enumerate(out_dims):
        depth = 1
        while d == 0 and depth < len(mesh_names):
            hit = recorder.gathered.get(outputs[k])
            if hit is None or hit[1] != mesh_names[depth]:
                break
            outputs[k] = hit[0]
            depth += 1
        depths.append(depth)
    if outputs == list(func.outputs):
        return func, depths
    return Func(func.name, func.inputs, func.eqns, tuple(outputs)), depths
