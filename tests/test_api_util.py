"""jax.api_util: flatten_fun / flatten_fun_nokwargs over linear_util's WrappedFun (as
Flax, NumPyro and Haiku call them), debug_info, shaped_abstractify, safe_map."""
from __future__ import annotations

import numpy as np
import pytest

import spmdc
from spmdc import api_util
from spmdc.core.abstract import ShapedArray
from spmdc.extend import linear_util as lu


def _model(x, scale=1.0):
    return {"s": x["a"] * scale, "t": (x["b"],)}


def test_flatten_fun_runs_on_leaves_and_records_the_output_tree():
    args, kwargs = ({"a": 2.0, "b": 3.0},), {"scale": 4.0}
    leaves, in_tree = spmdc.tree_util.tree_flatten((args, kwargs))
    flat, out_tree = api_util.flatten_fun(lu.wrap_init(_model), in_tree)
    assert flat.call_wrapped(*leaves) == [8.0, 3.0]
    assert out_tree() == spmdc.tree_util.tree_structure({"s": 0, "t": (0,)})


def test_flatten_fun_nokwargs():
    leaves, in_tree = spmdc.tree_util.tree_flatten(({"a": 2.0, "b": 3.0}, 0.5))
    flat, out_tree = api_util.flatten_fun_nokwargs(lu.wrap_init(_model), in_tree)
    assert flat.call_wrapped(*leaves) == [1.0, 3.0]
    assert spmdc.tree_util.tree_unflatten(out_tree(), [1, 2]) == {"s": 1, "t": (2,)}


def test_debug_info_names_the_function_and_argument_leaves():
    info = api_util.debug_info("jit", _model, ({"a": 1, "b": 2},), {"scale": 3.0})
    assert info.traced_for == "jit"
    assert info.func_src_info.startswith("_model at ") and __file__ in info.func_src_info
    assert info.arg_names == ("x['a']", "x['b']", "scale")
    assert api_util.debug_info("jit", _model, (1, 2, 3), {}).arg_names is None
    only_x = api_util.debug_info("jit", _model, (1, 2.0), {}, static_argnums=(1,))
    assert only_x.arg_names == ("x",)


def test_shaped_abstractify_and_safe_map():
    assert api_util.shaped_abstractify(np.zeros((2, 3), np.int32)) == \
        ShapedArray((2, 3), np.int32)
    assert api_util.shaped_abstractify(1.0).weak_type
    assert api_util.safe_map(lambda a, b: a + b, [1, 2], (3, 4)) == [4, 6]
    with pytest.raises(ValueError, match="different lengths"):
        api_util.safe_map(lambda a, b: a, [1], [1, 2])


def test_import_jax_gives_api_util():
    assert spmdc.api_util is api_util


# Values recorded from JAX 0.10.2's jax.api_util on the same inputs.
def test_argnums_partial_fixes_the_static_arguments():
    f = lu.wrap_init(lambda a, b, c: a * 10 + b - c)
    g, dyn = api_util.argnums_partial(f, (0, -1), (1, 2, 3))
    assert dyn == (1, 3) and g.call_wrapped(*dyn) == 9
    with pytest.raises(ValueError, match=r"Non-hashable static arguments .* \(index 1\)"):
        api_util.argnums_partial(f, (0, 2), (1, [2], 3))
    g, dyn = api_util.argnums_partial(f, 0, (1, [2], [3]), require_static_args_hashable=False)
    with pytest.raises(TypeError):        # the fixed lists reach the function unchanged
        g.call_wrapped(*dyn)
    with pytest.raises(ValueError, match="got value 3 for len"):
        api_util.argnums_partial(f, 3, (1, 2, 3))


def test_donation_vector_rebase_and_flatten_axes():
    tree = spmdc.tree_util.tree_structure(((1, (2, 3)), {"k": 4, "a": 5}))
    assert api_util.donation_vector((1,), ("k",), tree) == (False, True, True, False, True)
    args_only = spmdc.tree_util.tree_structure((1, (2, 3)))
    assert api_util.donation_vector((0,), (), args_only, kws=False) == (True, False, False)
    assert api_util.rebase_donate_argnums((3, 4), (0, 1)) == (1, 2)
    with pytest.raises(ValueError, match=r"`static_argnums` \[0\] and `donate_argnums` \[0\] "
                                         "cannot intersect"):
        api_util.rebase_donate_argnums((0,), (0,))
    assert api_util.flatten_axes("in_axes", args_only, (0, None)) == [0, None, None]
    with pytest.raises(ValueError, match="in_axes specification must be a tree prefix of the "
                                         "corresponding value"):
        api_util.flatten_axes("in_axes", args_only, (0, None, 1))
