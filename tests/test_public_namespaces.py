"""The public names of JAX 0.10.2's small namespaces (recorded from JAX below, with
``sorted(n for n in dir(m) if not n.startswith('_'))``): spmdc's matching module has each
one, or the list here says why not. Like tests/e2e/test_coverage.py, the test fails both
ways: a JAX name spmdc lacks and does not list, and a listed name spmdc has."""
from __future__ import annotations

import importlib

import pytest

JAX_NAMES = {
    "jax.dtypes": """TypePromotionError bfloat16 canonicalize_dtype extended finfo float0
        iinfo issubdtype itemsize_bits prng_key result_type scalar_type_of""",
    "jax.tree_util": """DictKey FlattenedIndexKey GetAttrKey KeyEntry KeyPath Partial
        PyTreeDef SequenceKey all_leaves default_registry flatten_one_level
        flatten_one_level_with_keys is_tree_node keystr register_dataclass
        register_pytree_node register_pytree_node_class register_pytree_with_keys
        register_pytree_with_keys_class register_static tree_all tree_broadcast
        tree_flatten tree_flatten_with_path tree_leaves tree_leaves_with_path tree_map
        tree_map_with_path tree_reduce tree_reduce_associative tree_structure
        tree_transpose tree_unflatten treedef_children treedef_is_leaf treedef_tuple""",
    "jax.tree": """all broadcast flatten flatten_with_path leaves leaves_with_path map
        map_with_path reduce reduce_associative static structure transpose unflatten""",
    "jax.typing": "ArrayLike DTypeLike",
    "jax.stages": "ArgInfo Compiled CompilerOptions Lowered Traced Wrapped",
    "jax.flatten_util": "ravel_pytree",
    "jax.custom_batching": "custom_vmap sequential_vmap",
    "jax.monitoring": """clear_event_listeners record_event record_event_duration_secs
        record_event_time_span record_scalar register_event_duration_secs_listener
        register_event_listener register_event_time_span_listener register_scalar_listener
        unregister_event_duration_listener unregister_event_listener
        unregister_event_time_span_listener unregister_scalar_listener""",
    "jax.profiler": """ProfileData ProfileEvent ProfileOptions ProfilePlane
        StepTraceAnnotation TraceAnnotation annotate_function device_memory_profile
        register_subprocess save_device_memory_profile start_server start_trace
        stop_server stop_trace trace""",
    "jax.ffi": """build_ffi_lowering_function ffi_call ffi_lowering include_dir pycapsule
        register_ffi_target register_ffi_target_as_batch_partitionable register_ffi_type
        register_ffi_type_id""",
    "jax.extend.core.primitives": """
        abs_p acos_p acosh_p add_jaxvals_p add_p after_all_p all_gather_p all_to_all_p
        and_p approx_top_k_p argmax_p argmin_p asin_p asinh_p atan2_p atan_p atanh_p
        axis_index_p bessel_i0e_p bessel_i1e_p bitcast_convert_type_p broadcast_in_dim_p
        call_p cbrt_p ceil_p cholesky_p clamp_p closed_call_p clz_p complex_p
        concatenate_p cond_p conj_p conv_general_dilated_p convert_element_type_p copy_p
        cos_p cosh_p create_token_p cumlogsumexp_p cummax_p cummin_p cumprod_p cumsum_p
        custom_jvp_call_p custom_lin_p custom_vjp_call_p device_put_p digamma_p div_p
        dot_general_p dynamic_slice_p dynamic_update_slice_p eig_p eigh_p empty2_p eq_p
        eq_to_p erf_inv_p erf_p erfc_p exp2_p exp_p expm1_p fft_p floor_p gather_p ge_p
        get_p gt_p hessenberg_p householder_product_p igamma_grad_a_p igamma_p igammac_p
        imag_p integer_pow_p iota_p is_finite_p jit_p le_p le_to_p lgamma_p
        linear_solve_p log1p_p log_p logistic_p lt_p lt_to_p lu_p max_p min_p mul_p
        name_p ne_p neg_p nextafter_p not_p or_p pad_p pmax_p pmin_p polygamma_p
        population_count_p pow_p ppermute_p psum_p qr_p ragged_all_to_all_p
        random_bits_p random_fold_in_p random_gamma_p random_seed_p random_split_p
        real_p reduce_and_p reduce_max_p reduce_min_p reduce_or_p reduce_p
        reduce_precision_p reduce_prod_p reduce_sum_p reduce_window_max_p
        reduce_window_min_p reduce_window_p reduce_window_sum_p reduce_xor_p
        regularized_incomplete_beta_p rem_p remat_p reshape_p rev_p rng_bit_generator_p
        rng_uniform_p round_p rsqrt_p scan_p scatter_add_p scatter_max_p scatter_min_p
        scatter_mul_p scatter_p schur_p select_and_gather_add_p select_and_scatter_add_p
        select_and_scatter_p select_n_p sharding_constraint_p shift_left_p
        shift_right_arithmetic_p shift_right_logical_p sign_p sin_p sinh_p slice_p
        sort_p sqrt_p square_p squeeze_p stop_gradient_p sub_p svd_p swap_p tan_p tanh_p
        threefry2x32_p top_k_p transpose_p triangular_solve_p tridiagonal_p
        tridiagonal_solve_p while_p xor_p zeta_p""",
    "jax.interpreters.xla": "Backend apply_primitive canonicalize_dtype_handlers",
}

REGISTRY = ("jaxlib's C++ pytree registry object; spmdc's pytrees live in "
            "spmdc/core/tree.py (jax._src.tree_util._registry is its table of node types)")

COMPOSED = ("spmdc computes it with other primitives: lax's function for it binds no "
            "primitive of its own")
ABSENT_OP = "spmdc has neither the operation nor a primitive for it"
# JAX's primitives spmdc has none for (docs/ecosystem.md, Note [call primitives]).
NO_PRIMITIVE = {
    **dict.fromkeys(["scatter_add_p", "scatter_mul_p", "scatter_min_p", "scatter_max_p"],
                    "spmdc has one scatter primitive (scatter_p) whose `combine` param says how"),
    **dict.fromkeys(["random_bits_p", "random_fold_in_p", "random_seed_p", "random_split_p",
                     "random_gamma_p", "threefry2x32_p"],
                    "spmdc.random is written with lax (threefry bit for bit JAX's), not with "
                    "primitives of its own"),
    **dict.fromkeys(["igamma_p", "igammac_p", "igamma_grad_a_p", "cumlogsumexp_p", "top_k_p",
                     "approx_top_k_p", "reduce_p", "reduce_xor_p", "linear_solve_p",
                     "empty2_p"], COMPOSED),
    "regularized_incomplete_beta_p": COMPOSED,
    **dict.fromkeys(["ragged_all_to_all_p", "rng_bit_generator_p", "rng_uniform_p"],
                    ABSENT_OP),
    **dict.fromkeys(["after_all_p", "create_token_p"],
                    "spmdc orders effects without token values (Note [effects])"),
    **dict.fromkeys(["add_jaxvals_p", "custom_lin_p"],
                    "JAX's autodiff internals: spmdc's passes add tangents with add_p and "
                    "linearize without a custom_lin equation"),
    **dict.fromkeys(["copy_p", "device_put_p"],
                    "spmdc's IR has no copy or device_put equation: placing values is the "
                    "runtime's (device_put)"),
    **dict.fromkeys(["eq_to_p", "le_to_p", "lt_to_p"],
                    "JAX's internal comparisons of sorted keys; spmdc compares with eq_p, "
                    "le_p, lt_p"),
    **dict.fromkeys(["get_p", "swap_p"],
                    "spmdc discharges mutable refs while tracing (Note [refs as threaded "
                    "state]): its programs hold no Ref reads or writes"),
    "select_and_scatter_p": "spmdc has select_and_scatter_add_p, the form JAX's gradients use",
}

MISSING = {
    "jax.tree_util": {"default_registry": REGISTRY},
    "jax.extend.core.primitives": NO_PRIMITIVE,
    "jax.ffi": {"register_ffi_type_id": "JAX 0.10.2's raises ValueError on every call "
                "(jaxlib dropped type-id registration); register_ffi_type replaces it"},
}


def _names(namespace):
    return JAX_NAMES[namespace].split()


def _spmdc(namespace):
    return importlib.import_module("spmdc" + namespace[len("jax"):])


@pytest.mark.parametrize("namespace", sorted(JAX_NAMES))
def test_every_jax_name_is_provided_or_listed(namespace):
    module = _spmdc(namespace)
    missing = MISSING.get(namespace, {})
    absent = [n for n in _names(namespace) if not hasattr(module, n) and n not in missing]
    assert not absent, f"spmdc lacks {namespace}'s {absent} and does not list them"
    present = [n for n in missing if hasattr(module, n)]
    assert not present, f"{namespace}: spmdc now has {present}; remove them from MISSING"
    assert set(missing) <= set(_names(namespace))


@pytest.mark.parametrize("namespace", sorted(JAX_NAMES))
def test_dunder_all_lists_the_provided_names(namespace):
    module = _spmdc(namespace)
    provided = {n for n in _names(namespace) if hasattr(module, n)}
    assert provided <= set(module.__all__), sorted(provided - set(module.__all__))
