"""jacfwd, jacrev (jacobian) and hessian: whole Jacobians built from jvp and vjp.

``jacfwd`` is ``vmap`` of ``jvp`` over the standard basis of the inputs, so it costs one
batched forward pass however many outputs there are; ``jacrev`` is ``vmap`` of one vjp per
output element; ``hessian`` is ``jacfwd(jacrev(fun))``. Integer inputs and outputs follow
Note [integer tangents] in forward.py. This is the one transforms module that builds
arrays with spmdc.numpy (the basis, the reshaped blocks), as JAX's api.py does; it
imports it when a Jacobian is built, since spmdc.numpy stands above the transforms.
"""
from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..compiler.passes.autodiff import is_float
from ..core.tracing import type_of, where
from ..core.tree import tree_flatten, tree_structure, tree_unflatten
from ..tracebacks import api_boundary
from .forward import _callable, _is_float0, float0, jvp
from .grad import _argnums, _check_input, _check_output, vjp
from .vmap import vmap

__all__ = ["jacfwd", "jacrev", "jacobian", "hessian"]


def _forward_argnums(argnums: int | Sequence[int], nargs: int, what: str) -> tuple[int, ...]:
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for i in nums:
        if not -nargs <= i < nargs:
            raise ValueError(f"{what}: argnums={argnums} is out of range for a function "
                             f"called with {nargs} positional arguments{where()}")
    return tuple(i % nargs for i in nums)


def jacfwd(fun: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False,
           holomorphic: bool = False) -> Callable[..., Any]:
    """The Jacobian by forward mode: ``vmap`` of ``jvp`` over the standard basis of the
    inputs, so the cost grows with the number of inputs, not outputs. ``holomorphic``:
    a complex function of complex inputs (the basis is complex), as in JAX."""
    from .. import numpy as jnp
    _callable(fun, "jacfwd")

    def jac_fn(*args: Any) -> Any:
        nums = _forward_argnums(argnums, len(args), "jacfwd")
        diff = tuple(args[i] for i in nums)
        d_leaves, d_tree = tree_flatten(diff)
        for leaf in d_leaves:
            t = type_of(leaf)[0]
            if holomorphic and t.dtype.kind != "c":
                raise TypeError("jacfwd with holomorphic=True requires inputs with complex "
                                f"dtype, but got {t.dtype.name}{where()}")
            if not holomorphic and t.dtype.kind != "f" and t.dtype.name != "bfloat16":
                raise TypeError("jacfwd requires real-valued inputs (input dtype that is a "
                                f"sub-dtype of np.floating), but got {t.dtype.name}. For "
                                "holomorphic differentiation, pass holomorphic=True. For "
                                "differentiation of non-holomorphic functions involving complex "
                                f"inputs or integer inputs, use jvp directly{where()}")
        types = [type_of(v)[0] for v in d_leaves]
        sizes = [int(np.prod(t.shape)) for t in types]
        total = sum(sizes)

        def partial_fun(*d: Any) -> Any:
            full = list(args)
            for i, x in zip(nums, d, strict=True):
                full[i] = x
            return fun(*full)

        # basis[k] for leaf k: (total, *shape), the rows of the identity for its entries.
        offsets = np.cumsum([0, *sizes])
        basis = [jnp.reshape(jnp.eye(total, dtype=t.dtype)[:, offsets[k]:offsets[k + 1]],
                             (total, *t.shape)) for k, t in enumerate(types)]

        out_info: list[Any] = []          # (out treedef, out leaf types), from the trace

        def push(*basis_leaves: Any) -> Any:
            tangents = tree_unflatten(d_tree, list(basis_leaves))
            res = jvp(partial_fun, diff, tangents, has_aux=has_aux)
            out_leaves, out_tree = tree_flatten(res[0])
            out_info[:] = [out_tree, [type_of(v)[0] for v in out_leaves]]
            floats = [t for t in tree_flatten(res[1])[0] if not _is_float0(t)]
            return (floats, res[2]) if has_aux else floats

        if has_aux:
            cols, aux = vmap(push, out_axes=(0, None))(*basis)
        else:
            cols = vmap(push)(*basis)
        out_tree, out_types = out_info
        for ot in out_types:
            if holomorphic and ot.dtype.kind != "c":
                raise TypeError("jacfwd with holomorphic=True requires outputs with complex "
                                f"dtype, but got {ot.dtype.name}{where()}")
        cols_iter = iter(cols)
        jacs = []
        for ot in out_types:
            if not is_float(ot):                            # an integer output: zeros
                jacs.append([jnp.zeros((*ot.shape, *t.shape), dtype=ot.dtype) for t in types])
                continue
            col = jnp.moveaxis(next(cols_iter), 0, -1)      # (*out_shape, total)
            jacs.append([jnp.reshape(col[..., offsets[k]:offsets[k + 1]], (*ot.shape, *t.shape))
                         for k, t in enumerate(types)])
        per_out = [tree_unflatten(d_tree, j) for j in jacs]
        if isinstance(argnums, int):
            per_out = [p[0] for p in per_out]
        result = tree_unflatten(out_tree, per_out)
        return (result, aux) if has_aux else result

    return api_boundary(functools.wraps(fun)(jac_fn))  # See Note [library frames] (errors.py)


def jacrev(fun: Callable[..., Any], argnums: int | Sequence[int] = 0,
           has_aux: bool = False, holomorphic: bool = False,
           allow_int: bool = False) -> Callable[..., Any]:
    """The Jacobian by reverse mode: one vjp per output element, batched with vmap.

    As in JAX, inputs and outputs may be pytrees: the result has the output's structure,
    each output leaf replaced by the structure of ``args[argnums]`` (a tuple of them when
    ``argnums`` is a tuple) whose leaves have shape ``out_leaf.shape + in_leaf.shape``.
    With ``has_aux=True``, ``fun`` returns ``(output, aux)`` and jacrev ``(jacobian, aux)``.
    ``holomorphic`` and ``allow_int`` (zero blocks for integer inputs) are as in JAX.
    """
    if not callable(fun):
        raise TypeError(f"jacrev expects a callable, got {type(fun).__name__}")
    what = "jacrev"
    from .. import numpy as jnp

    def jac_fn(*args: Any, **kwargs: Any) -> Any:
        nums = _argnums(argnums, len(args), what)
        for i in nums:
            for leaf in tree_flatten(args[i])[0]:
                _check_input(what, holomorphic, allow_int, leaf, f"args[{i}]")

        def partial_fun(*diff: Any) -> Any:
            full = list(args)
            for i, d in zip(nums, diff, strict=True):
                full[i] = d
            return fun(*full, **kwargs)

        if has_aux:
            out, pull, aux = vjp(partial_fun, *(args[i] for i in nums), has_aux=True)
        else:
            out, pull = vjp(partial_fun, *(args[i] for i in nums))
        out_leaves, out_tree = tree_flatten(out)
        for o in out_leaves:
            _check_output(what, holomorphic, type_of(o)[0])
        out_leaves = [jnp.asarray(o) for o in out_leaves]
        sizes = [o.size for o in out_leaves]
        total = sum(sizes)
        offsets = np.cumsum([0, *sizes])
        # One basis cotangent per output element, stacked: row r is 1 at element r of the
        # outputs flattened one after another.
        basis = [jnp.reshape(jnp.eye(total, dtype=o.dtype)[:, offsets[k]:offsets[k + 1]],
                             (total, *o.shape)) for k, o in enumerate(out_leaves)]
        diff_args = [args[i] for i in nums]
        def pull_floats(ct: Any) -> list[Any]:       # float0 cannot leave a vmap
            return [g for g in tree_flatten(pull(ct))[0] if getattr(g, "dtype", None) != float0]

        diff_leaves = [x for a in diff_args for x in tree_flatten(a)[0]]
        if total:
            float_cols = iter(vmap(pull_floats)(tree_unflatten(out_tree, basis)))
        else:                   # no output elements: every Jacobian block is empty
            float_cols = iter([jnp.zeros((0, *jnp.shape(x)), type_of(x)[0].dtype)
                               for x in diff_leaves if is_float(type_of(x)[0])])
        # one column block per differentiated leaf; None for an integer leaf, whose block
        # is zeros of its own dtype (JAX's jacrev gives int zeros there, not float0)
        cols = [next(float_cols) if is_float(type_of(x)[0]) else None for x in diff_leaves]
        per_output = []
        for k, o in enumerate(out_leaves):
            blocks, pos = [], 0
            for a in diff_args:
                rows = []
                for x in tree_flatten(a)[0]:
                    c = cols[pos]
                    pos += 1
                    rows.append(jnp.zeros((*o.shape, *np.shape(x)), type_of(x)[0].dtype)
                                if c is None else
                                jnp.reshape(c[offsets[k]:offsets[k + 1]],
                                            (*o.shape, *jnp.shape(x))))
                blocks.append(tree_unflatten(tree_structure(a), rows))
            per_output.append(blocks[0] if isinstance(argnums, int) else tuple(blocks))
        jac = tree_unflatten(out_tree, per_output)
        return (jac, aux) if has_aux else jac

    return api_boundary(functools.update_wrapper(jac_fn, fun, updated=()))


jacobian = jacrev


def hessian(fun: Callable[..., Any], argnums: int | Sequence[int] = 0,
            has_aux: bool = False, holomorphic: bool = False) -> Callable[..., Any]:
    """Forward over reverse, as JAX: ``jacfwd(jacrev(fun))``, with JAX's pytree structure
    (output, then argument, then argument), ``has_aux`` and ``holomorphic``."""
    return jacfwd(jacrev(fun, argnums, has_aux, holomorphic), argnums, has_aux, holomorphic)
