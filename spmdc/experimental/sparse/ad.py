"""Sparse-aware ``grad``, ``value_and_grad``, ``jacfwd``, ``jacrev`` (and ``jacobian``):
spmdc's transformations with each sparse argument differentiated through its stored values
only, and its derivative returned as a sparse array of the same pattern, as JAX's.

Note [derivatives on the sparsity pattern]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
A sparse argument among ``argnums`` is replaced by its ``data`` buffer; the function
rebuilds the sparse array around it (same indices), so the transformation differentiates
the stored values and leaves the pattern fixed. The derivative of a ``data`` buffer is put
back into the argument's format with its indices; a Jacobian's leading output dimensions
become leading batch dimensions of the result (the indices broadcast over them). As in JAX,
the results are then filtered to the arguments that have leaves, and a single one is
returned bare.
"""
from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import spmdc.numpy as jnp
from spmdc.experimental.sparse.base import JAXSparse
from spmdc.experimental.sparse.bcoo import BCOO
from spmdc.experimental.sparse.bcsr import BCSR
from spmdc.transforms.grad import grad as _spmdc_grad
from spmdc.transforms.grad import value_and_grad as _spmdc_value_and_grad
from spmdc.transforms.jacobians import jacfwd as _spmdc_jacfwd
from spmdc.transforms.jacobians import jacrev as _spmdc_jacrev
from spmdc.tree_util import tree_flatten, tree_leaves, tree_unflatten

__all__ = ["grad", "value_and_grad", "jacfwd", "jacrev", "jacobian"]


def _is_sparse(x: Any) -> bool:
    return isinstance(x, JAXSparse)


def _reconstruct(leaf: Any, derivative: Any) -> Any:
    """``derivative`` of ``leaf``'s data as a sparse array of ``leaf``'s pattern. See Note
    [derivatives on the sparsity pattern]."""
    if not _is_sparse(leaf):
        return derivative
    lead = derivative.shape[:derivative.ndim - leaf.data.ndim]
    if not lead:
        return leaf._with(data=derivative)
    if isinstance(leaf, BCOO):
        return BCOO((derivative, jnp.broadcast_to(leaf.indices, lead + leaf.indices.shape)),
                    shape=lead + leaf.shape, indices_sorted=leaf.indices_sorted,
                    unique_indices=leaf.unique_indices)
    if isinstance(leaf, BCSR):
        return BCSR((derivative, jnp.broadcast_to(leaf.indices, lead + leaf.indices.shape),
                     jnp.broadcast_to(leaf.indptr, lead + leaf.indptr.shape)),
                    shape=lead + leaf.shape)
    raise TypeError(f"sparse Jacobian: a {type(leaf).__name__} argument has no batched "
                    f"form; use BCOO or BCSR")


def _sparse_ad(transform: Callable[..., Any], has_value: bool) -> Callable[..., Any]:
    def make(fun: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False,
             **kwargs: Any) -> Callable[..., Any]:
        argnums_tuple = (argnums,) if isinstance(argnums, int) else tuple(argnums)

        @functools.wraps(fun)
        def wrapped(*args: Any, **fun_kwargs: Any) -> Any:
            flat = {i: tree_flatten(args[i], is_leaf=_is_sparse) for i in argnums_tuple}

            def fun_flat(*new_args: Any) -> Any:
                rebuilt = list(new_args)
                for i, (leaves, tree) in flat.items():
                    rebuilt[i] = tree_unflatten(tree, [
                        leaf._with(data=buf) if _is_sparse(leaf) else buf
                        for leaf, buf in zip(leaves, new_args[i], strict=True)])
                return fun(*rebuilt, **fun_kwargs)

            new_args = list(args)
            for i, (leaves, _) in flat.items():
                new_args[i] = [leaf.data if _is_sparse(leaf) else leaf for leaf in leaves]
            out = transform(fun_flat, argnums=argnums_tuple, has_aux=has_aux,
                            **kwargs)(*new_args)
            value, derivatives = out if has_value else (None, out)
            if has_aux and not has_value:
                derivatives, aux = derivatives
            results = []
            for i, derivative in zip(argnums_tuple, derivatives, strict=True):
                leaves, tree = flat[i]
                results.append(tree_unflatten(tree, [
                    _reconstruct(leaf, d) for leaf, d in zip(leaves, derivative, strict=True)]))
            kept = tuple(r for r in results if tree_leaves(r))
            result = kept[0] if len(kept) == 1 else kept
            if has_value:
                return value, result
            return (result, aux) if has_aux else result
        return wrapped
    return make


grad = _sparse_ad(_spmdc_grad, has_value=False)
grad.__doc__ = ("Sparse-aware ``spmdc.grad``: the gradient for a sparse argument is a sparse "
                "array on its pattern. See Note [derivatives on the sparsity pattern].")
value_and_grad = _sparse_ad(_spmdc_value_and_grad, has_value=True)
value_and_grad.__doc__ = "Sparse-aware ``spmdc.value_and_grad`` (see ``grad``)."
jacfwd = _sparse_ad(_spmdc_jacfwd, has_value=False)
jacfwd.__doc__ = "Sparse-aware ``spmdc.jacfwd`` (see ``grad``); dense outputs only."
jacrev = _sparse_ad(_spmdc_jacrev, has_value=False)
jacrev.__doc__ = "Sparse-aware ``spmdc.jacrev`` (see ``grad``); dense outputs only."
jacobian = jacrev
