"""``sparsify``: run a function written for dense arrays on sparse operands, and the BCOO and
BCSR operators (``@``, ``*``, ``+``, ``sum``, ``reshape``, indexing, ...) defined through it,
as JAX defines them.

Note [sparsify interprets the jaxpr]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
``sparsify(f)(*args)`` traces ``f`` with each sparse operand replaced by a dense
placeholder of its shape (``make_jaxpr``: JAX's primitive names and params), then walks the
equations. An equation whose operands are all dense is bound as it is (a one-equation
``eval_jaxpr``, so it runs eagerly or into an enclosing trace); one with a sparse operand
goes to the sparse rule of its primitive (``SPARSE_RULES``), which returns sparse or dense
results as JAX's rules do: a zero-preserving unary function maps the stored values
(after merging duplicates when the function is not linear), ``mul`` by a dense or sparse
operand keeps the sparse pattern, ``add`` of two sparse operands stacks their entries (or
adds values when they share indices), ``dot_general`` is ``bcoo_dot_general``, ``reduce_sum``
is ``bcoo_reduce_sum`` (dense when everything is summed), and the structural primitives
(``transpose``, ``reshape``, ``slice``, ``concatenate``, ...) are their ``bcoo_*``
functions. A primitive without a rule raises JAX's ``NotImplementedError``. BCSR operands
are read as BCOO (their rows become a coordinate column); a unary function of a BCSR keeps
it a BCSR.

Note [shared indices]
~~~~~~~~~~~~~~~~~~~~~
Two sparse operands of ``add``, ``sub`` or ``mul`` that come from one index set (the same
value, or a value and a zero-preserving function of it) combine their ``data`` alone, as
in JAX. The interpreter numbers index sets: each sparse argument of the sparsified
function starts one (two arguments are two sets even when they are one Python object, as
JAX's environment counts them), and a rule's sparse result that kept an operand's
``indices`` joins that operand's set. Other sparse pairs add by stacking their entries
(``nse`` adds up) and multiply by pairing them (``bcoo_multiply_sparse``).

Note [operators through sparsify]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
As in JAX, ``BCOO``'s arithmetic methods are ``sparsify`` of the jnp functions
(``__matmul__`` is ``sparsify(jnp.matmul)``), so an operator follows exactly the sparse
rules above. They are set on the classes here, after ``sparsify`` exists, because the
classes are defined below this module.
"""
from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

import spmdc.numpy as jnp
from spmdc import lax
from spmdc.core.abstract import ShapeDtypeStruct
from spmdc.experimental.sparse.base import JAXSparse
from spmdc.experimental.sparse.bcoo import (
    BCOO,
    bcoo_reduce_sum,
    bcoo_sum_duplicates,
    bcoo_transpose,
)
from spmdc.experimental.sparse.bcoo_conv import bcoo_conv_general_dilated
from spmdc.experimental.sparse.bcoo_dot import (
    bcoo_dot_general,
    bcoo_multiply_dense,
    bcoo_multiply_sparse,
)
from spmdc.experimental.sparse.bcoo_gather import bcoo_gather
from spmdc.experimental.sparse.bcoo_structure import (
    bcoo_broadcast_in_dim,
    bcoo_concatenate,
    bcoo_dynamic_slice,
    bcoo_reshape,
    bcoo_rev,
    bcoo_slice,
    bcoo_squeeze,
)
from spmdc.experimental.sparse.bcsr import BCSR
from spmdc.transforms.jaxpr_params import bind_jax
from spmdc.transforms.jaxpr_view import DropVar, Literal, eval_eqn
from spmdc.transforms.make_jaxpr import make_jaxpr
from spmdc.tree_util import tree_flatten, tree_structure, tree_unflatten

__all__ = ["sparsify", "SPARSE_RULES"]

ZERO_PRESERVING_LINEAR = ("conj", "copy", "imag", "neg", "real")
ZERO_PRESERVING = ("abs", "asin", "asinh", "atan", "atanh", "bessel_i1e", "expm1", "log1p",
                   "sign", "sin", "sinh", "sqrt", "square", "tan", "tanh",
                   "convert_element_type")

# Not zero-preserving: a sparse result would be dense, so JAX names the way out.
DENSIFYING = ("acos", "acosh", "bessel_i0e", "cos", "cosh", "eq", "exp", "ge", "gt", "le", "lt",
              "log", "ne", "xor")


def _no_rule_message(name: str) -> str:
    if name in DENSIFYING:
        return (f"sparse rule for {name} is not implemented because it would result in dense "
                f"output. If this is your intent, use sparse.todense() to convert your "
                f"arguments to a dense array.")
    return f"sparse rule for {name} is not implemented."


# A rule takes the equation's primitive, its operands (dense arrays or BCOO) and params, and
# returns the list of its results.
SparseRule = Callable[..., list[Any]]
SPARSE_RULES: dict[str, SparseRule] = {}


def _is_sparse(x: Any) -> bool:
    return isinstance(x, JAXSparse)


def sparsify(f: Callable[..., Any]) -> Callable[..., Any]:
    """``f`` made to accept sparse arrays (BCOO, BCSR) wherever it takes arrays. See Note
    [sparsify interprets the jaxpr]."""
    @functools.wraps(f)
    def wrapped(*args: Any, **params: Any) -> Any:
        leaves, tree = tree_flatten(args, is_leaf=_is_sparse)
        placeholders = [ShapeDtypeStruct(x.shape, x.dtype) if _is_sparse(x) else x
                        for x in leaves]
        closed, out_shape = make_jaxpr(
            lambda *flat: f(*tree_unflatten(tree, list(flat)), **params),
            return_shape=True)(*placeholders)
        # each sparse argument starts its own index set (Note [shared indices])
        leaves = [x._with() if _is_sparse(x) else x for x in leaves]
        outs = eval_sparse(closed.jaxpr, closed.consts, leaves)
        return tree_unflatten(tree_structure(out_shape), outs)
    return wrapped


def _read_literal(a: Literal) -> Any:
    if isinstance(a.val, (np.ndarray, np.generic)):
        return a.val
    return np.asarray(a.val, a.aval.dtype)[()]


def eval_sparse(jaxpr: Any, consts: Any, args: list[Any]) -> list[Any]:
    """Run ``jaxpr`` on operands that may be sparse. See Note [sparsify interprets the
    jaxpr]."""
    env: dict[int, Any] = {}
    index_set: dict[int, int] = {}         # id(sparse value) -> its index set's number

    def read(a: Any) -> Any:
        return _read_literal(a) if isinstance(a, Literal) else env[id(a)]

    for v, x in zip([*jaxpr.constvars, *jaxpr.invars], [*consts, *args], strict=True):
        env[id(v)] = x
        if _is_sparse(x):
            index_set[id(x)] = len(index_set)
    for eqn in jaxpr.eqns:
        invals = [read(a) for a in eqn.invars]
        name = eqn.primitive.name
        sparse_in = [x for x in invals if _is_sparse(x)]
        if sparse_in:
            if name not in SPARSE_RULES:
                raise NotImplementedError(_no_rule_message(name))
            params = dict(eqn.params)
            if name in SHARING_RULES:
                params["shared_indices"] = (len(sparse_in) == 2 and index_set[id(
                    sparse_in[0])] == index_set[id(sparse_in[1])])
            outs = SPARSE_RULES[name](eqn.primitive, *invals, **params)
            for out in outs:
                if _is_sparse(out):
                    source = [x for x in sparse_in if x.indices is out.indices]
                    index_set[id(out)] = (index_set[id(source[0])] if source
                                          else len(index_set))
        else:
            outs = _bind_dense(eqn, invals)
        for v, x in zip(eqn.outvars, outs, strict=True):
            if not isinstance(v, DropVar):
                env[id(v)] = x
    return [read(a) for a in jaxpr.outvars]


def _bind_dense(eqn: Any, invals: list[Any]) -> list[Any]:
    """One equation on dense operands (``eval_eqn``)."""
    return eval_eqn(eqn, invals)


# --- the rules -------------------------------------------------------------------------------

def _as_bcoo(x: Any) -> Any:
    return x.to_bcoo() if isinstance(x, BCSR) else x


def _unary(linear: bool) -> SparseRule:
    def rule(prim: Any, x: Any, **params: Any) -> list[Any]:
        if not linear and not x.unique_indices:
            x = bcoo_sum_duplicates(_as_bcoo(x), nse=x.nse, remove_zeros=False)
        data = bind_jax(prim, [x.data], params)
        return [x._with(data=data)]
    return rule


for _name in ZERO_PRESERVING_LINEAR:
    SPARSE_RULES[_name] = _unary(linear=True)
for _name in ZERO_PRESERVING:
    SPARSE_RULES[_name] = _unary(linear=False)


def _integer_pow(prim: Any, x: Any, *, y: int) -> list[Any]:
    if y <= 0:
        raise NotImplementedError(f"sparse rule for integer_pow with non-positive exponent {y} "
                                  f"is not implemented because it would result in dense "
                                  f"output. If this is your intent, use sparse.todense() to "
                                  f"convert your argument to a dense array.")
    return _unary(linear=False)(prim, x, y=y)


SPARSE_RULES["integer_pow"] = _integer_pow


def _bcoo_only(fun: Callable[..., Any]) -> SparseRule:
    """A rule that reads every sparse operand as a BCOO and returns one result."""
    def rule(prim: Any, *args: Any, **params: Any) -> list[Any]:
        return [fun(*map(_as_bcoo, args), **params)]
    return rule


def _drop(*names: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``fun`` with the params it does not take (JAX's layout hints) left out."""
    def wrap(fun: Callable[..., Any]) -> Callable[..., Any]:
        return lambda *a, **p: fun(*a, **{k: v for k, v in p.items() if k not in names})
    return wrap


def _gather(prim: Any, operand: Any, start_indices: Any, *, offset_dims: Any,
            collapsed_slice_dims: Any, start_index_map: Any, slice_sizes: Any,
            **batching: Any) -> list[Any]:
    if _is_sparse(start_indices):
        raise NotImplementedError("bcoo_gather: sparse indices are not supported.")
    dn = lax.GatherDimensionNumbers(offset_dims, collapsed_slice_dims, start_index_map,
                                    **batching)
    return [bcoo_gather(_as_bcoo(operand), start_indices, dn, slice_sizes)]


def _conv(prim: Any, lhs: Any, rhs: Any, *, dimension_numbers: Any, **params: Any
          ) -> list[Any]:
    lhs, rhs = (_as_bcoo(x) if _is_sparse(x) else x for x in (lhs, rhs))
    if isinstance(dimension_numbers, tuple) and len(dimension_numbers) == 3:
        dimension_numbers = lax.ConvDimensionNumbers(*dimension_numbers)
    keep = ("window_strides", "padding", "lhs_dilation", "rhs_dilation",
            "feature_group_count", "batch_group_count")
    return [bcoo_conv_general_dilated(lhs, rhs, dimension_numbers=dimension_numbers,
                                      **{k: v for k, v in params.items() if k in keep})]


SPARSE_RULES.update({
    "gather": _gather,
    "conv_general_dilated": _conv,
    "dot_general": _bcoo_only(_drop("precision", "out_sharding")(bcoo_dot_general)),
    "broadcast_in_dim": _bcoo_only(_drop("sharding")(bcoo_broadcast_in_dim)),
    "concatenate": _bcoo_only(lambda *ops, dimension: bcoo_concatenate(ops,
                                                                       dimension=dimension)),
    "reshape": _bcoo_only(_drop("sharding")(bcoo_reshape)),
    "rev": _bcoo_only(bcoo_rev),
    "slice": _bcoo_only(bcoo_slice),
    "squeeze": _bcoo_only(bcoo_squeeze),
    "dynamic_slice": _bcoo_only(lambda x, *starts, slice_sizes: bcoo_dynamic_slice(
        x, starts, slice_sizes)),
})


def _transpose(prim: Any, x: Any, *, permutation: Any) -> list[Any]:
    x = _as_bcoo(x)
    return [bcoo_transpose(x, permutation=permutation)]


def _reduce_sum(prim: Any, x: Any, *, axes: Any, out_sharding: Any = None) -> list[Any]:
    out = bcoo_reduce_sum(_as_bcoo(x), axes=axes)
    return [jnp.sum(out.data, dtype=out.dtype) if out.shape == () else out]


def _add(prim: Any, x: Any, y: Any, *, shared_indices: bool = False) -> list[Any]:
    x, y = _as_bcoo(x), _as_bcoo(y)
    out_shape = jnp.broadcast_shapes(x.shape, y.shape)
    if _is_sparse(x) and _is_sparse(y):
        if x.shape != y.shape:
            raise NotImplementedError("Addition between sparse matrices of different shapes.")
        if shared_indices:
            return [x._with(data=x.data + y.data)]
        if x.indices.ndim != y.indices.ndim or x.data.ndim != y.data.ndim:
            raise NotImplementedError("Addition between sparse matrices with different "
                                      "batch/dense dimensions.")
        batch = x.shape[:x.n_batch]
        xd, xi = jnp.broadcast_to(x.data, batch + x.data.shape[x.n_batch:]), \
            jnp.broadcast_to(x.indices, batch + x.indices.shape[x.n_batch:])
        yd, yi = jnp.broadcast_to(y.data, batch + y.data.shape[y.n_batch:]), \
            jnp.broadcast_to(y.indices, batch + y.indices.shape[y.n_batch:])
        dtype = jnp.result_type(x.dtype, y.dtype)
        return [BCOO((jnp.concatenate([xd.astype(dtype), yd.astype(dtype)], axis=x.n_batch),
                      jnp.concatenate([xi, yi.astype(xi.dtype)], axis=x.n_batch)),
                     shape=x.shape)]
    sparse, dense = (x, y) if _is_sparse(x) else (y, x)
    if jnp.shape(dense) != out_shape:
        raise NotImplementedError(
            "Addition between a sparse array X and a dense array Y is not implemented when "
            "the output shape is larger than Y.shape. This is to prevent silent densification "
            "of a large sparse array. If this is your intent, you can explicitly cast the "
            "sparse array to a dense matrix.")
    return [sparse.todense() + dense if sparse is x else dense + sparse.todense()]


def _sub(prim: Any, x: Any, y: Any, *, shared_indices: bool = False) -> list[Any]:
    if _is_sparse(x) and _is_sparse(y):
        y = _as_bcoo(y)
        return _add(prim, x, y._with(data=-y.data), shared_indices=shared_indices)
    raise NotImplementedError("Subtraction between sparse and dense array.")


def _mul(prim: Any, x: Any, y: Any, *, out_dtype: Any = None,
         shared_indices: bool = False) -> list[Any]:
    x, y = _as_bcoo(x), _as_bcoo(y)
    if out_dtype is not None:
        x, y = x.astype(out_dtype), y.astype(out_dtype)
    if _is_sparse(x) and _is_sparse(y):
        if shared_indices and x.unique_indices:
            return [x._with(data=x.data * y.data)]
        return [bcoo_multiply_sparse(x, y)]
    sparse, dense = (x, y) if _is_sparse(x) else (y, x)
    return [sparse._with(data=bcoo_multiply_dense(sparse, dense))]


def _div(prim: Any, x: Any, y: Any) -> list[Any]:
    if _is_sparse(y):
        raise NotImplementedError(
            "Division by a sparse array is not implemented because it would result in dense "
            "output. If this is your intent, use sparse.todense() to convert your arguments "
            "to a dense array.")
    x = _as_bcoo(x)
    return [x._with(data=bcoo_multiply_dense(x, 1 / jnp.asarray(y)))]


# the rules told whether their two sparse operands share one index set
SHARING_RULES = ("add", "sub", "mul")
SPARSE_RULES.update({"transpose": _transpose, "reduce_sum": _reduce_sum, "add": _add,
                     "sub": _sub, "mul": _mul, "div": _div})


# --- the methods (Note [operators through sparsify]) -------------------------------------------

def _swap(f: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    return lambda a, b: f(b, a)


def _getitem(arr: Any, idx: Any) -> Any:
    return sparsify(lambda x: x[idx])(arr)


BCOO_METHODS: dict[str, Any] = {
    "astype": lambda self, *a, **k: sparsify(lambda x: x.astype(*a, **k))(self),
    "reshape": lambda self, *a, **k: sparsify(lambda x: x.reshape(*a, **k))(self),
    "sum": lambda self, *a, **k: sparsify(lambda x: x.sum(*a, **k))(self),
    "__abs__": sparsify(jnp.abs),
    "__neg__": sparsify(jnp.negative),
    "__pos__": sparsify(jnp.positive),
    "__matmul__": sparsify(jnp.matmul),
    "__rmatmul__": sparsify(_swap(jnp.matmul)),
    "__mul__": sparsify(jnp.multiply),
    "__rmul__": sparsify(_swap(jnp.multiply)),
    "__truediv__": sparsify(jnp.divide),
    "__rtruediv__": sparsify(_swap(jnp.divide)),
    "__add__": sparsify(jnp.add),
    "__radd__": sparsify(_swap(jnp.add)),
    "__sub__": sparsify(jnp.subtract),
    "__rsub__": sparsify(_swap(jnp.subtract)),
    "__pow__": lambda x, y: sparsify(lambda x: jnp.power(x, y))(x),
    "__getitem__": _getitem,
    "__iter__": lambda arr: iter(arr[i] for i in range(arr.shape[0])),
}
for _method, _impl in BCOO_METHODS.items():
    setattr(BCOO, _method, _impl)
for _method in ("__matmul__", "__rmatmul__", "__getitem__"):
    setattr(BCSR, _method, BCOO_METHODS[_method])
