"""Every registered primitive has a rule in every table its passes own
(docs/ARCHITECTURE.md's Rule tables): a batching rule, a lowering rule, and a VJP and a JVP
rule unless it is listed as non-differentiable with a reason (the one list of exemptions for
both modes). A primitive added without its rules fails here, by name."""
from __future__ import annotations

import pytest

import spmdc  # noqa: F401  (registers every primitive)
from spmdc.compiler.passes.autodiff import nondifferentiable, vjp_rules
from spmdc.compiler.passes.collectives import varying_rules
from spmdc.compiler.passes.forward import jvp_rules
from spmdc.compiler.passes.vmap import batch_rules
from spmdc.compiler.primitives.core import library_primitives, registry
from spmdc.compiler.stablehlo import lower_rules

TABLES = {"batch_rules": batch_rules, "lower_rules": lower_rules, "vjp_rules": vjp_rules,
          "jvp_rules": jvp_rules}


@pytest.mark.parametrize("table", TABLES)
def test_no_primitive_lacks_a_rule(table):
    rules = TABLES[table]
    exempt = nondifferentiable if table in ("vjp_rules", "jvp_rules") else {}
    missing = sorted(name for name, prim in registry.items()
                     if prim not in rules and prim not in exempt)
    assert not missing, f"primitives without an entry in {table}: {missing}"


def test_non_differentiable_primitives_give_a_reason_and_have_no_vjp():
    for prim, reason in nondifferentiable.items():
        assert isinstance(reason, str) and len(reason) > 5, prim.name
        assert prim not in vjp_rules, f"{prim.name} is both differentiable and not"
        assert prim not in jvp_rules, f"{prim.name} has a JVP rule but is non-differentiable"


def test_collectives_have_a_replication_rule():
    collectives = {"psum", "pmax", "pmin", "all_gather", "psum_scatter", "ppermute",
                   "all_to_all", "axis_index"}
    assert collectives <= {p.name for p in varying_rules}


def test_tables_hold_registered_primitives_only():
    # and the primitives of libraries (jax.extend.core.Primitive), which other tests of
    # this process may have defined with their rules
    known = set(registry.values()) | library_primitives
    for name, rules in TABLES.items():
        assert set(rules) <= known, name
