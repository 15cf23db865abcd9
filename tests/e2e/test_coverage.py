"""Coverage of JAX's array namespaces: every public name of JAX 0.10.2's jax.numpy,
jax.lax, jax.numpy.linalg, jax.scipy.linalg and jax.numpy.fft (recorded once into
tests/data/jax_names.json by `tools/record.py names`) is either provided by the matching
spmdc namespace or listed below, with the reason spmdc does not provide it.

The test fails both ways: a name JAX has that spmdc lacks and that is not listed, and a
listed name that spmdc has (the list must shrink as names land). ``make sz`` prints the
figures (tools/sz.py reads ``EXCLUDED`` from here). ``jax.lax``'s ``*_p`` names are JAX's
primitive objects: spmdc.lax exports its own primitive where it is the same operation (or
a JaxPrimitive standing for it under JAX's name); the rest are listed with reasons.
"""
from __future__ import annotations

import importlib
import json
import os

import pytest

NAMES_FILE = os.path.join(os.path.dirname(__file__), os.pardir, "data", "jax_names.json")

# Reasons. "pending: ..." entries are names another part of this release delivers; they
# are removed from the list when that work is merged.
LINALG = "pending: linalg"
CONV = "pending: conv"
TODO = "not yet implemented"
NARROW = "narrow ml_dtypes types (4/6/8-bit floats, sub-byte ints): spmdc does not carry them"
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
P2P = "point-to-point send/receive between shard_map members; spmdc has ppermute only"
SCALED = "block-scaled dot of narrow (microscaling) float types, which spmdc does not carry"
COMPOSITE = ("stablehlo.composite with a decomposition region: spmdc's lowering emits no "
             "composites yet")
JAXPR_ONLY = ("acts on JAX's jaxpr machinery (dead-code elimination, lifting into a trace); "
              "no counterpart in spmdc's IR")
SYMBOLIC = "converts symbolic (polymorphic) shapes to values; spmdc's shapes are static"
COMPOSED = ("no primitive of its own: spmdc computes the operation by composing other "
            "primitives (its lax function exists and traces to those)")
ONE_SCATTER = ("one scatter primitive: spmdc's combine param (None, 'add', 'mul', 'min', "
               "'max') selects the update, and lax.scatter_p is it")
NO_COPY = ("no copy equation: spmdc's IR values are immutable SSA values (a copy is the value "
           "itself; device_put is the runtime's)")
INTERNAL_ORDER = ("JAX-internal total-order comparisons: its sort lowering's (spmdc's sort "
                  "orders floats in its lowering)")


def _because(reason: str, names: str) -> dict[str, str]:
    return dict.fromkeys(names.split(), reason)


EXCLUDED: dict[str, dict[str, str]] = {
    "jax.numpy": {
        **_because(NARROW, """
            float4_e2m1fn float6_e2m3fn float6_e3m2fn float8_e3m4 float8_e4m3 float8_e4m3b11fnuz
            float8_e8m0fnu int1 int2 int4 uint1 uint2 uint4
            """),
        **_because(HOST, """
            fromfile fromiter
            """),
    },
    "jax.lax": {
        **_because(TODO, """
            scatter_apply
            """),
        **_because(ACCURACY, "AccuracyMode Tolerance"),
        **_because(TOKENS, "after_all create_token"),
        **_because(RAGGED, """
            RaggedDotDimensionNumbers ragged_all_to_all ragged_dot_general
            """),
        **_because(RNG_BITS, "RandomAlgorithm rng_bit_generator rng_uniform"),
        **_because(VMA_CAST, "pcast"),
        **_because(P2P, "psend precv"),
        **_because(SCALED, "scaled_dot"),
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
    "jax.scipy.linalg": {
        **_because(TODO, """
            eigh_tridiagonal funm hessenberg polar qr_multiply rsf2csf schur
            solve_sylvester sqrtm
            """),
    },
    "jax.numpy.fft": {},
}


def jax_names() -> dict[str, list[str]]:
    with open(NAMES_FILE, encoding="utf-8") as fh:
        return json.load(fh)["names"]


def spmdc_module(namespace: str):
    """The spmdc module matching a JAX namespace, or None if spmdc has none yet."""
    try:
        return importlib.import_module("spmdc" + namespace[len("jax"):])
    except ModuleNotFoundError:
        return None


def excluded(namespace: str, name: str) -> str | None:
    return EXCLUDED[namespace].get(name)


def coverage(namespace: str) -> tuple[list[str], list[str], list[str]]:
    """(provided, listed, unaccounted): JAX's names of ``namespace`` that spmdc provides,
    that the list above accounts for, and neither."""
    module = spmdc_module(namespace)
    provided, listed, unaccounted = [], [], []
    for name in jax_names()[namespace]:
        if module is not None and hasattr(module, name):
            provided.append(name)
        elif excluded(namespace, name) is not None:
            listed.append(name)
        else:
            unaccounted.append(name)
    return provided, listed, unaccounted


@pytest.mark.parametrize("namespace", sorted(EXCLUDED))
def test_every_jax_name_is_provided_or_listed(namespace):
    _, _, unaccounted = coverage(namespace)
    assert not unaccounted, (
        f"spmdc lacks these names of {namespace} and tests/e2e/test_coverage.py does not list "
        f"them with a reason: {' '.join(unaccounted)}")


@pytest.mark.parametrize("namespace", sorted(EXCLUDED))
def test_listed_names_are_absent(namespace):
    module = spmdc_module(namespace)
    present = [n for n in EXCLUDED[namespace] if module is not None and hasattr(module, n)]
    assert not present, (f"{namespace}: spmdc now provides {' '.join(present)}; remove them "
                         f"from the list in tests/e2e/test_coverage.py")


@pytest.mark.parametrize("namespace", sorted(EXCLUDED))
def test_listed_names_are_jax_names(namespace):
    unknown = sorted(set(EXCLUDED[namespace]) - set(jax_names()[namespace]))
    assert not unknown, f"{namespace}: listed names JAX 0.10.2 does not have: {unknown}"


def test_names_file_covers_the_listed_namespaces():
    assert set(jax_names()) == set(EXCLUDED)
