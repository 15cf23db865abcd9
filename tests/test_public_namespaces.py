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
    "jax.interpreters.xla": "Backend apply_primitive canonicalize_dtype_handlers",
}

REGISTRY = ("jaxlib's C++ pytree registry object; spmdc's pytrees live in "
            "spmdc/core/tree.py (jax._src.tree_util._registry is its table of node types)")
ARG_INFO = "spmdc's Lowered has no args_info, whose entries ArgInfo describes"
XLA_UNUSED = ("no library spmdc runs reads it: spmdc's eager primitives run through "
              "spmdc/transforms/eager.py and its client is not jaxlib's Client class")

MISSING = {
    "jax.tree_util": {"default_registry": REGISTRY},
    "jax.stages": {"ArgInfo": ARG_INFO},
    "jax.interpreters.xla": {"Backend": XLA_UNUSED, "apply_primitive": XLA_UNUSED},
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
