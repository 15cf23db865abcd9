"""The public names of JAX 0.10.2 that spmdc does not provide, per module, each with the
reason: the table tests/e2e/test_coverage.py checks against tests/data/jax_names.json and
``make sz`` counts. "not yet implemented" is work to do; every other reason is a
deliberate absence (README.md's "Deliberately absent" section summarises them).
"""
from __future__ import annotations

# Reasons.
TODO = "not yet implemented"
NARROW = "float6 and 1-bit ints: jaxlib's MLIR bindings here have no float6 type, and i1 is bool"
HOST = ("reads a file or an iterator (impure): JAX leaves it unimplemented too; use "
        "jnp.asarray(np.fromfile(...))")
ACCURACY = ("accuracy= of transcendental functions (StableHLO's result_accuracy) is not "
            "honoured by spmdc's lowering, so the option types are left out, not ignored")
TOKENS = ("tokens order side effects in JAX (and are deprecated there); spmdc orders its "
          "effects without them")
RAGGED = ("the general ragged dot (ragged contracting and batch modes) and all_to_all over "
          "ragged groups: not implemented yet (lax.ragged_dot, the grouped matmul, is)")
RNG_BITS = ("XLA's own stateless/stateful generators (rng_bit_generator, rng_uniform): spmdc "
            "has no NumPy reference for their bits; spmdc.random gives JAX's threefry bits")
VMA_CAST = ("casts between the varying/reduced/unreduced states of JAX's typed replication "
            "(vma); spmdc's replication is a whole-program analysis (Note [replication]), not "
            "part of its types, so there is nothing to cast")
VMA_TYPE = ("the varying/unreduced/reduced axis sets of a value's type under JAX's typed "
            "replication (vma); spmdc's replication is a whole-program analysis (Note "
            "[replication]), not part of its types")
PREEMPTION = ("JAX's preemption service (a SIGTERM notice turned into a step all processes "
              "agree to checkpoint at): spmdc's distributed runtime does not start it, and "
              "a signal ends a process there (Note [failing fast] in runtime/distributed.py)")
REF_GRADS = ("JAX's markers for gradients written into mutable refs (DontWant, DidntWant, "
             "GradRef, GradValue for a VJP's with_refs): spmdc's vjp has no with_refs")
GC_GUARD = ("jaxlib's guard on its C++ arrays reclaimed by Python's cycle collector; spmdc's "
            "Array is a Python object over PJRT buffers, which the guard does not see")
SHARDING_TYPES = ("an option of JAX's sharding in types that spmdc's (Note [shardings in "
                  "types] in core/explicit_sharding.py) do not have")
JAX2TF = "an option of jax2tf (export to TensorFlow), which spmdc does not have"
THREAD_GUARD = ("jaxlib's guard that multi-process operations come from one thread: spmdc's "
                "distributed runtime does not install it")
REF_SLICES = ("JAX's dynamic slice object for indexing refs (Pallas' pl.ds): spmdc's refs "
              "index as arrays do (ints, slices, index arrays)")
EXTENDED_DTYPES = ("arrays of JAX's extended dtypes other than PRNG keys (EArray, and the "
                   "primal/tangent dtype pairs of custom tangent types): spmdc's one "
                   "extended dtype is the threefry key's")
LAYOUT_INSIDE = ("a memory-layout constraint on a value inside a program: spmdc's lowering "
                 "lays every value out in the default order (its Layout and Format describe, "
                 "they do not choose)")
FRONTEND_ATTRIBUTES = ("XLA frontend attributes on the operations of a block (set_xla_metadata;"
                       " compute_on's host placement, _xla_compute_type): spmdc's lowering "
                       "emits no frontend attributes, so the block would run unannotated")
P2P = "point-to-point send/receive between shard_map members; spmdc has ppermute only"
COMPOSITE = ("stablehlo.composite with a decomposition region: spmdc's lowering emits no "
             "composites yet")
JAXPR_ONLY = ("acts on JAX's jaxpr machinery (dead-code elimination, lifting into a trace); "
              "no counterpart in spmdc's IR")
SYMBOLIC = "converts symbolic (polymorphic) shapes to values; spmdc's shapes are static"
POLYMORPHIC = ("symbolic dimensions of shape-polymorphic exports: spmdc's shapes are static "
               "(its exports and the JAX exports it calls have static shapes)")
COMPOSED = ("no primitive of its own: spmdc computes the operation by composing other "
            "primitives (its lax function exists and traces to those)")
ONE_SCATTER = ("one scatter primitive: spmdc's combine param (None, 'add', 'mul', 'min', "
               "'max') selects the update, and lax.scatter_p is it")
NO_COPY = ("no copy equation: spmdc's IR values are immutable SSA values (a copy is the value "
           "itself; device_put is the runtime's)")
INTERNAL_ORDER = ("JAX-internal total-order comparisons: its sort lowering's (spmdc's sort "
                  "orders floats in its lowering)")
SPARSE_COMPOSED = ("spmdc.experimental.sparse composes its operations from jnp and lax "
                   "(gathers, scatter-adds, sorts): the function exists, with no primitive of "
                   "its own")
SPARSE_TRACER = ("the tracer of sparsify(use_tracer=True); spmdc's sparsify interprets the "
                 "traced program (JAX's default mode), so it has no sparse tracer")


INTERNAL = ("a JAX-internal helper the module's namespace shows because the module imports or "
            "defines it there; not part of JAX's documented API")
PALLAS = "Pallas, JAX's kernel language lowered to Mosaic/Triton: outside spmdc's scope"
LEGACY_PRNG = ("JAX's key implementations other than threefry (rbg, unsafe_rbg) and custom "
               "PRNG implementations: spmdc's keys are threefry keys only")
NO_RANDOM_PRIMITIVE = ("spmdc.random is written with lax (threefry bit for bit JAX's), not "
                       "with primitives of its own")
JAX_AD = ("JAX's autodiff internals: spmdc's passes add tangents with add_p and linearize "
          "without a custom_lin equation")
ONE_SCATTER_SELECT = ("spmdc has select_and_scatter_add_p, the form JAX's gradients use, and no "
                      "general select_and_scatter")
NO_PRIMITIVE_LINALG = ("spmdc computes the decomposition without a primitive of its own, or "
                       "does not have it (then its function is listed as not yet implemented)")
ONE_CLIENT = ("spmdc's runtime makes one PJRT client (CPU or CUDA) for the process: no "
              "plugin backend factories, and no re-creating the client")
CPP_REGISTRY = ("jaxlib's C++ pytree registry object; spmdc's pytrees live in "
                "spmdc/core/tree.py")
REMOVED_IN_JAXLIB = ("JAX 0.10.2's raises ValueError on every call (jaxlib dropped type-id "
                     "registration); register_ffi_type replaces it")

THREEFRY_ONLY = ("spmdc's random bits are those of jax_threefry_partitionable=True (JAX's "
                 "default) only: the option could not give the other bits")
MEMORY_SPACES = ("memory spaces (offloading residuals to host memory, jax.memory.Space): "
                 "spmdc's buffers live in their device's default memory only")
TRACED_SHARDING = ("the sharding of a traced value, which XLA's partitioner decides when it "
                   "compiles: spmdc does not read it back from the compiled program")
STATE_DISCHARGED = ("JAX's state primitives on Refs: spmdc discharges mutable refs while "
                    "tracing (Note [refs as threaded state]), so its programs hold no Ref "
                    "reads or writes")
REMAT_OPT = ("the primitive of custom_vjp's optimize_remat=True, which spmdc's custom_vjp "
             "refuses (it has no fwd-rule rematerialisation)")
VMAPPABLE = ("vmap over a registered container type (JAX's to_elt/from_elt handlers, for "
             "its ragged 'jumble' arrays): spmdc's vmap maps the arrays of pytrees only")
FLAT_TREE = ("takes and returns JAX's internal FlatTree values (jax._src.tree_util.FlatTree, "
             "new in 0.10): use jax.jvp / jax.linearize, which spmdc has")
PE_RULES = ("rules that run on JAX's partial-evaluation tracers and on remat's known/unknown "
            "split of jaxpr equations: spmdc partially evaluates its own IR "
            "(passes/forward.py partial_eval, passes/residuals.py), whose rules are not JAX's")
JIT_LOWERING = ("JAX's lowering of a whole jit program and what it is given (axis context, "
                "argument shardings and layouts, lowering parameters, the result): spmdc "
                "lowers its own IR (compiler/stablehlo.py lower_program), a rule lowers a "
                "jaxpr with jaxpr_subcomp, a function is lowered with jit(f).lower(...)")
EFFECT_TYPES = ("spmdc lowers every effectful equation, ordered by its own token chain "
                "(Note [effects]), whatever its effect's type: no set of lowerable types")

# A short label per reason, for ``make sz``'s table.
LABELS = {
    TODO: "todo", NARROW: "narrow dtypes", HOST: "host I/O", ACCURACY: "accuracy=",
    TOKENS: "tokens", RAGGED: "ragged", RNG_BITS: "XLA rng", VMA_CAST: "vma casts",
    VMA_TYPE: "vma types", PREEMPTION: "preemption", REF_GRADS: "ref gradients",
    GC_GUARD: "GC guard", SHARDING_TYPES: "sharding in types",
    JAX2TF: "jax2tf", THREAD_GUARD: "thread guard", REF_SLICES: "ref slices",
    EXTENDED_DTYPES: "extended dtypes", LAYOUT_INSIDE: "layouts inside",
    FRONTEND_ATTRIBUTES: "frontend attributes", P2P: "send/recv",
    COMPOSITE: "composite", JAXPR_ONLY: "jaxpr-only",
    SYMBOLIC: "symbolic shapes", POLYMORPHIC: "shape polymorphism", COMPOSED: "composed",
    ONE_SCATTER: "one scatter",
    NO_COPY: "no copy", INTERNAL_ORDER: "internal order", INTERNAL: "JAX-internal",
    PALLAS: "Pallas", LEGACY_PRNG: "non-threefry keys", NO_RANDOM_PRIMITIVE: "random via lax",
    JAX_AD: "JAX AD internals", ONE_SCATTER_SELECT: "select_and_scatter",
    NO_PRIMITIVE_LINALG: "linalg primitives", CPP_REGISTRY: "C++ registry",
    REMOVED_IN_JAXLIB: "removed in jaxlib",
    ONE_CLIENT: "one client",
    TRACED_SHARDING: "traced sharding", MEMORY_SPACES: "memory spaces",
    THREEFRY_ONLY: "partitionable threefry",
    SPARSE_COMPOSED: "sparse via jnp", SPARSE_TRACER: "sparse tracer",
    STATE_DISCHARGED: "refs discharged", REMAT_OPT: "optimize_remat", VMAPPABLE: "vmappables",
    FLAT_TREE: "FlatTree", PE_RULES: "JAX pe rules", JIT_LOWERING: "jit lowering",
    EFFECT_TYPES: "effect types",
}


def _because(reason: str, names: str) -> dict[str, str]:
    return dict.fromkeys(names.split(), reason)


EXCLUDED: dict[str, dict[str, str]] = {
    "jax.numpy": {
        **_because(NARROW, """
            float6_e2m3fn float6_e3m2fn int1 uint1
            """),
        **_because(HOST, """
            fromfile fromiter
            """),
    },
    "jax.lax": {
        **_because(ACCURACY, "AccuracyMode Tolerance"),
        **_because(TOKENS, "after_all create_token"),
        **_because(RAGGED, """
            RaggedDotDimensionNumbers ragged_all_to_all ragged_dot_general
            """),
        **_because(RNG_BITS, "RandomAlgorithm rng_bit_generator rng_uniform"),
        **_because(VMA_CAST, "pcast"),
        **_because(P2P, "psend precv"),
        **_because(COMPOSITE, "composite"),
        **_because(JAXPR_ONLY, "dce_sink stage"),
        **_because(SYMBOLIC, "shape_as_value"),
        **_because(TOKENS, "after_all_p create_token_p"),
        **_because(RAGGED, "ragged_all_to_all_p"),
        **_because(RNG_BITS, "rng_bit_generator_p rng_uniform_p"),
        **_because(JAXPR_ONLY, "dce_sink_p stage_p"),
        **_because(COMPOSED, """
            approx_top_k_p top_k_p cumlogsumexp_p igamma_p igammac_p igamma_grad_a_p
            regularized_incomplete_beta_p linear_solve_p mulhi_p reduce_p reduce_xor_p
            select_and_scatter_p split_p stack_p unstack_p tile_p
            """),
        **_because(ONE_SCATTER, "scatter_add_p scatter_max_p scatter_min_p scatter_mul_p "
                                "scatter_sub_p"),
        **_because(NO_COPY, "copy_p device_put_p"),
        **_because(INTERNAL_ORDER, "eq_to_p le_to_p lt_to_p"),
    },
    "jax.numpy.linalg": {},
    "jax.scipy.linalg": {},
    "jax.numpy.fft": {},
    "jax": {
        **_because(REF_GRADS, "ad"),
        **_because(GC_GUARD, "array_garbage_collection_guard"),
        **_because(VMA_TYPE, "auto_pcast"),
        **_because(SHARDING_TYPES, "remove_size_one_mesh_axis_from_type"),
        **_because(JAX2TF, "jax2tf_associative_scan_reductions"),
        **_because(THREAD_GUARD, "thread_guard"),
        **_because(REF_SLICES, "ds"),
        **_because(THREEFRY_ONLY, "threefry_partitionable"),
        **_because(LEGACY_PRNG, "default_prng_impl legacy_prng_key"),
        **_because(MEMORY_SPACES, "memory"),
    },
    "jax.lax.linalg": {
        **_because(NO_PRIMITIVE_LINALG, """
            cholesky_update_p lu_pivots_to_permutation_p symmetric_product_p
            """),
    },
    "jax.random": {
        **_because(NO_RANDOM_PRIMITIVE, "random_gamma_p"),
    },
    "jax.sharding": {
        **_because(VMA_TYPE, "ManualAxisType"),
    },
    "jax.ad_checkpoint": {
        **_because(MEMORY_SPACES, "Offloadable"),
    },
    "jax.debug": {
        **_because(TRACED_SHARDING, "inspect_array_sharding"),
    },
    "jax.dlpack": {},
    "jax.ffi": {
        **_because(REMOVED_IN_JAXLIB, "register_ffi_type_id"),
    },
    "jax.image": {},
    "jax.nn": {},
    "jax.ops": {
    },
    "jax.tree_util": {
        **_because(CPP_REGISTRY, "default_registry"),
    },
    "jax.export": {
        **_because(POLYMORPHIC, "SymbolicScope symbolic_args_specs symbolic_shape"),
    },
    "jax.custom_derivatives": {
        **_because(REMAT_OPT, "remat_opt_p"),
    },
    "jax.scipy.spatial.transform": {},
    "jax.extend": {
        **_because(PALLAS, "pallas"),
    },
    "jax.extend.backend": {
        **_because(ONE_CLIENT, "clear_backends register_backend_factory"),
    },
    "jax.extend.core": {
        **_because(TOKENS, "AbstractToken Token"),
    },
    "jax.extend.core.primitives": {
        **_because(STATE_DISCHARGED, "get_p swap_p"),
        **_because(ONE_SCATTER, "scatter_add_p scatter_max_p scatter_min_p scatter_mul_p"),
        **_because(NO_RANDOM_PRIMITIVE, """
            random_bits_p random_fold_in_p random_gamma_p random_seed_p
            random_split_p threefry2x32_p
            """),
        **_because(COMPOSED, """
            approx_top_k_p cumlogsumexp_p empty2_p igamma_grad_a_p igamma_p
            igammac_p linear_solve_p reduce_p reduce_xor_p regularized_incomplete_beta_p
            top_k_p
            """),
        **_because(TOKENS, "after_all_p create_token_p"),
        **_because(RAGGED, "ragged_all_to_all_p"),
        **_because(RNG_BITS, "rng_bit_generator_p rng_uniform_p"),
        **_because(JAX_AD, "add_jaxvals_p custom_lin_p"),
        **_because(NO_COPY, "copy_p device_put_p"),
        **_because(INTERNAL_ORDER, "eq_to_p le_to_p lt_to_p"),
        **_because(ONE_SCATTER_SELECT, "select_and_scatter_p"),
    },
    "jax.extend.mlir": {},
    "jax.extend.random": {
        **_because(LEGACY_PRNG, """
            define_prng_impl rbg_prng_impl seed_with_impl threefry_prng_impl
            unsafe_rbg_prng_impl
            """),
        **_because(NO_RANDOM_PRIMITIVE, "threefry2x32_p"),
    },
    "jax.extend.source_info_util": {},
    "jax.extend.lowering": {},
    "jax.extend.sharding": {},
    "jax.example_libraries.optimizers": {
        **_because(INTERNAL, "InitFn ParamsFn UpdateFn map safe_map safe_zip unzip2 zip"),
    },
    "jax.experimental": {
        **_because(EXTENDED_DTYPES, "EArray primal_tangent_dtype"),
    },
    "jax.experimental.checkify": {
    },
    "jax.experimental.custom_partitioning": {},
    "jax.experimental.jet": {
        **_because(INTERNAL, """
            JetTrace JetTracer ZeroSeries ZeroTerm call_param_updaters def_comp
            def_deriv deflinear defzero deriv_prop fact jet2 jet_fun jet_rules
            jet_subtrace linear_prop register_pytree_node safe_zip traceable
            tree_flatten tree_structure tree_unflatten treedef_is_leaf unzip2
            weakref_lru_cache zero_prop zero_series zero_term
            """),
    },
    "jax.experimental.mesh_utils": {
        **_because(INTERNAL, "device_kind_handler_dict"),
    },
    "jax.experimental.multihost_utils": {
        **_because(PREEMPTION, "reached_preemption_sync_point"),
        **_because(INTERNAL, """
            P global_array_to_host_local_array_impl
            global_array_to_host_local_array_p gtl_abstract_eval
            host_local_array_to_global_array_impl host_local_array_to_global_array_p
            ltg_abstract_eval ltg_batcher safe_zip tree_unflatten
            """),
    },
    "jax.experimental.random": {},
    "jax.experimental.sparse": {
        **_because(SPARSE_COMPOSED, """
            bcoo_dot_general_p bcoo_dot_general_sampled_p bcoo_extract_p bcoo_fromdense_p
            bcoo_sort_indices_p bcoo_spdot_general_p bcoo_sum_duplicates_p bcoo_todense_p
            bcoo_transpose_p bcsr_dot_general_p bcsr_extract_p bcsr_fromdense_p
            bcsr_todense_p coo_fromdense_p coo_matmat_p coo_matvec_p coo_todense_p
            csr_fromdense_p csr_matmat_p csr_matvec_p csr_todense_p todense_p
            """),
        **_because(SPARSE_TRACER, "SparseTracer"),
    },
    "jax.experimental.sparse.linalg": {
        **_because(SPARSE_COMPOSED, "spsolve_p"),
    },
    "jax.experimental.layout": {
        **_because(LAYOUT_INSIDE, "with_layout_constraint"),
    },
    "jax.experimental.ode": {
        **_because(INTERNAL, """
            abs2 fit_4th_order_polynomial initial_step_size interp_fit_dopri map
            mean_error_ratio optimal_step_size promote_dtypes_inexact
            ravel_first_arg ravel_first_arg_ ravel_pytree runge_kutta_step safe_map
            safe_zip tree_leaves zip
            """),
    },
    "jax.experimental.xla_metadata": {
        **_because(FRONTEND_ATTRIBUTES, "set_xla_metadata"),
    },
    "jax.experimental.compute_on": {
        **_because(FRONTEND_ATTRIBUTES, "compute_on compute_on2"),
    },
    "jax.interpreters": {},
    "jax.interpreters.ad": {
        **_because(FLAT_TREE, "jvp linearize"),
        **_because(JAX_AD, "add_jaxvals add_jaxvals_p"),
    },
    "jax.interpreters.batching": {
        **_because(VMAPPABLE, "register_vmappable unregister_vmappable"),
    },
    "jax.interpreters.mlir": {
        **_because(JIT_LOWERING, """
            AxisContext LoweringParameters LoweringResult SPMDAxisContext ShardingContext
            lower_jaxpr_to_fun lower_jaxpr_to_module
            """),
        **_because(POLYMORPHIC, "ShapePolyLoweringState"),
        **_because(EFFECT_TYPES, "lowerable_effects"),
    },
    "jax.interpreters.partial_eval": {
        **_because(PE_RULES, "custom_partial_eval_rules partial_eval_jaxpr_custom_rules"),
    },
    "jax.interpreters.pxla": {},
    "jax.interpreters.xla": {},
}
