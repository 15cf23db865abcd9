"""The collectives (compiler/primitives/collectives.py) and the collectives pass.

- Each collective, on hypothesis-drawn shapes and axis sizes 1..8: pmap (compiled for N
  replicas) == vmap with axis_name (batching rules, one device) == the SPMD reference
  interpreter (interpreter_spmd.py).
- IR level on a 2 x 4 mesh, over 'i', 'j', ('i', 'j') and ('j', 'i'): compiled == the
  interpreter; vmap over either name == the interpreter; grad of the whole SPMD program
  (every device's cotangent) == central finite differences, per Note [collective
  transpose].
- replica_groups, the replication analysis, axis-name checks, IR text round trips.
"""
from __future__ import annotations

import numpy as np
import oracle
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mesh_programs import F32, MESH, one_eqn, run_on_mesh

import spmdc
import spmdc.numpy as jnp
from spmdc import lax
from spmdc.compiler.interpreter import evaluate
from spmdc.compiler.interpreter_spmd import evaluate_spmd
from spmdc.compiler.ir import TensorType, check, parse
from spmdc.compiler.passes.autodiff import vjp_func
from spmdc.compiler.passes.cleanup import cleanup
from spmdc.compiler.passes.collectives import (
    ReplicationError,
    UnboundAxisError,
    check_collectives,
    replica_groups,
    varying_axes,
)
from spmdc.compiler.passes.vmap import BatchAxis, vmap_func
from spmdc.compiler.stablehlo import lower
from spmdc.core.pytree_tracing import trace_pytree
from spmdc.runtime import pjrt
from spmdc.runtime.executable import compile_func
from spmdc.transforms.vmap import vmap

F64 = np.dtype(np.float64)


# --- IR level, on a 2 x 4 mesh ---------------------------------------------------------------

CASES = {
    "psum_i": lambda b, x: b.psum(x, axes=("i",)),
    "psum_ij": lambda b, x: b.psum(x, axes=("i", "j")),
    "pmax_j": lambda b, x: b.pmax(x, axes=("j",)),
    "pmin_ji": lambda b, x: b.pmin(x, axes=("j", "i")),
    "all_gather_j": lambda b, x: b.all_gather(x, axes=("j",), axis_sizes=(4,), dimension=1,
                                              tiled=False),
    "all_gather_ij": lambda b, x: b.all_gather(x, axes=("i", "j"), axis_sizes=(2, 4),
                                               dimension=2, tiled=False),
    "all_gather_ji_tiled": lambda b, x: b.all_gather(x, axes=("j", "i"), axis_sizes=(4, 2),
                                                     dimension=1, tiled=True),
    "psum_scatter_ij": lambda b, x: b.psum_scatter(x, axes=("i", "j"), axis_sizes=(2, 4),
                                                   scatter_dimension=0, tiled=False),
    "psum_scatter_ji_tiled": lambda b, x: b.psum_scatter(
        x, axes=("j", "i"), axis_sizes=(4, 2), scatter_dimension=0, tiled=True),
    "ppermute_j": lambda b, x: b.ppermute(x, axes=("j",), axis_sizes=(4,),
                                          perm=((0, 1), (1, 2), (3, 0))),
    "ppermute_ji": lambda b, x: b.ppermute(x, axes=("j", "i"), axis_sizes=(4, 2),
                                           perm=((0, 5), (5, 7), (7, 0), (2, 3))),
    "all_to_all_ij": lambda b, x: b.all_to_all(x, axes=("i", "j"), axis_sizes=(2, 4),
                                               split_axis=0, concat_axis=1, tiled=False),
    "all_to_all_ji_tiled": lambda b, x: b.all_to_all(x, axes=("j", "i"), axis_sizes=(4, 2),
                                                     split_axis=0, concat_axis=1, tiled=True),
    "all_to_all_j": lambda b, x: b.all_to_all(b.reshape(x, new_sizes=(2, 4, 3)), axes=("j",),
                                              axis_sizes=(4,), split_axis=1, concat_axis=2,
                                              tiled=False),
    "axis_index": lambda b, x: [b.axis_index(axes=("j", "i"), axis_sizes=(4, 2)),
                                b.axis_index(axes=("i", "j"), axis_sizes=(2, 4)),
                                b.axis_index(axes=("i",), axis_sizes=(2,))],
}


@pytest.mark.devices(8)
@pytest.mark.parametrize("name", sorted(CASES))
def test_mesh_lowering_and_vmap_match_the_interpreter(name):
    func = one_eqn(CASES[name], TensorType((8, 3), F32))
    x = np.random.default_rng(0).normal(size=(2, 4, 8, 3)).astype(F32)
    want = evaluate_spmd(func, MESH, x)
    for got, w in zip(run_on_mesh(func, MESH, x), want, strict=True):
        np.testing.assert_allclose(got, w, rtol=1e-5, atol=1e-5, err_msg="compiled")
    n_out = len(func.outputs)
    # vmap the inner name, batch dimension anywhere: the outer name stays a device axis.
    for d in (0, 2):
        batched = check(vmap_func(func, [d], BatchAxis(4, "j"), [0] * n_out))
        got = evaluate_spmd(batched, (("i", 2),), np.moveaxis(x, 1, 1 + d))
        for g, w in zip(got, want, strict=True):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5, err_msg=f"vmap j at {d}")
    # vmap the outer name over a device axis 'j'; then both names, with no devices left.
    batched = check(vmap_func(func, [0], BatchAxis(2, "i"), [0] * n_out))
    got = evaluate_spmd(batched, (("j", 4),), np.moveaxis(x, 0, 1))
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, np.moveaxis(w, 0, 1), rtol=1e-5, atol=1e-5)
    inner = check(vmap_func(func, [0], BatchAxis(4, "j"), [0] * n_out))
    both = check(vmap_func(inner, [0], BatchAxis(2, "i"), [0] * n_out))
    for g, w in zip(evaluate(both, x), want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5, err_msg="vmap i, j")


@pytest.mark.devices(8)
@pytest.mark.parametrize("name", sorted(set(CASES) - {"axis_index"}))
def test_grad_of_the_whole_spmd_program(name):
    # F(X) = sum over devices d of <w_d, f(x_d)>. The per-device VJP program, run on every
    # device with its own cotangent w_d, gives dF/dx_d (Note [collective transpose]).
    func = one_eqn(CASES[name], TensorType((8, 3), F64))
    rng = np.random.default_rng(1)
    x = rng.normal(size=(2, 4, 8, 3))
    weights = [rng.normal(size=(2, 4, *t.shape)) for t in func.out_types]

    def total(xs):
        outs = evaluate_spmd(func, MESH, xs)
        return sum(float((o * w).sum()) for o, w in zip(outs, weights, strict=True))

    grad_func = check(cleanup(vjp_func(func, [True])))
    got = evaluate_spmd(grad_func, MESH, x, *weights)[-1]
    np.testing.assert_allclose(got, oracle.numeric_grad(total, x), rtol=1e-5, atol=1e-6)
    # the transposed collectives lower and run too
    compiled = run_on_mesh(grad_func, MESH, x, *weights)[-1]
    np.testing.assert_allclose(compiled, got, rtol=1e-10, atol=1e-10)


def test_pmax_gradient_splits_ties():
    func = one_eqn(lambda b, x: b.pmax(x, axes=("j",)), TensorType((), F64))
    x = np.array([[1.0, 3.0, 3.0, 2.0]] * 2)
    grad_func = cleanup(vjp_func(func, [True]))
    ct = np.ones((2, 4))
    got = evaluate_spmd(grad_func, MESH, x, ct)[-1]
    np.testing.assert_allclose(got, [[0, 2, 2, 0]] * 2)   # 4 devices' cotangents, 2 holders


def test_transposed_collectives_carry_the_note():
    func = one_eqn(lambda b, x: b.psum(x, axes=("i",)), TensorType((3,), F32))
    text = str(cleanup(vjp_func(func, [True])))
    assert "note='per-device transpose of psum, see Note [collective transpose]'" in text
    assert str(parse(text)) == text


# --- replica groups, lowering attributes -----------------------------------------------------

def test_replica_groups_on_a_2x4_mesh():
    assert replica_groups(MESH, ("i",)) == [[0, 4], [1, 5], [2, 6], [3, 7]]
    assert replica_groups(MESH, ("j",)) == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert replica_groups(MESH, ("i", "j")) == [list(range(8))]
    assert replica_groups(MESH, ("j", "i")) == [[0, 4, 1, 5, 2, 6, 3, 7]]


def test_lowering_emits_replica_groups_and_replica_count():
    func = one_eqn(lambda b, x: [b.psum(x, axes=("i",)), b.axis_index(axes=("j",),
                                                                      axis_sizes=(4,))],
                   TensorType((3,), F32))
    text = str(lower(func, num_replicas=8, axis_env=dict(MESH), mesh_axes=("i", "j")))
    assert "stablehlo.all_reduce" in text
    assert "[0, 4], [1, 5], [2, 6], [3, 7]" in text
    assert "stablehlo.replica_id" in text
    assert "mhlo.num_replicas = 8" in text


# --- the collectives pass --------------------------------------------------------------------

IR_VARYING = """func @f(%0: f32[3], %1: f32[3]) -> (f32[3], f32[3], f32[3], i32[]) {
  %2: f32[3] = psum(%0) {axes=('i',)}
  %3: f32[3] = add(%2, %1)
  %4: f32[3] = mul(%0, %1)
  %5: i32[] = axis_index() {axes=('j',), axis_sizes=(4,)}
  return %3, %4, %2, %5
}"""


def test_replication_analysis():
    func = parse(IR_VARYING)
    sets = varying_axes(func, [frozenset({"i", "j"}), frozenset()])
    assert sets == [frozenset({"j"}), frozenset({"i", "j"}), frozenset({"j"}),
                    frozenset({"j"})]
    mesh_i = (("i", 8),)
    ok = parse(IR_VARYING.replace("{axes=('j',), axis_sizes=(4,)}",
                                  "{axes=('i',), axis_sizes=(8,)}"))
    names = ["output a", "output b", "output c", "output d"]
    check_collectives(ok, mesh_i, [frozenset({"i"}), frozenset()],
                      [True, False, True, False], names)
    with pytest.raises(ReplicationError, match="pmap: output b has out_axes=None.*axis 'i'"):
        check_collectives(ok, mesh_i, [frozenset({"i"}), frozenset()],
                          [False, True, False, False], names)


def test_unbound_axis_names_the_op():
    func = parse(IR_VARYING)
    with pytest.raises(UnboundAxisError, match="axis_index: unbound axis name 'j'"):
        check_collectives(func, (("i", 8),), [frozenset()] * 2, [False] * 4, "abcd")


def test_vmap_pass_on_ir_text():
    # psum over the vmapped name becomes a reduce_sum (unbatched result); the other name
    # passes through.
    source = """func @f(%0: f32[3]) -> (f32[3], f32[3]) {
  %1: f32[3] = psum(%0) {axes=('i', 'j')}
  %2: f32[3] = psum(%0) {axes=('i',)}
  return %1, %2
}"""
    got = cleanup(vmap_func(parse(source), [0], BatchAxis(5, "j"), [None, 0]))
    assert str(got) == """func @f(%0: f32[5,3]) -> (f32[3], f32[5,3]) {
  %1: f32[3] = reduce_sum(%0) {axes=(0,)}
  %2: f32[3] = psum(%1) {axes=('i',)}
  %3: f32[5,3] = psum(%0) {axes=('i',)}
  return %2, %3
}"""


# --- pmap == vmap(axis_name) == the interpreter, hypothesis-drawn ----------------------------

small = st.integers(1, 3)


def _case(name, data, n):
    """A per-device function using the collective ``name`` over axis 'i' of size n, and a
    stacked input (n, *shape)."""
    draw = data.draw
    rank = draw(st.integers(1, 3))
    shape = [draw(small) for _ in range(rank)]
    if name in ("psum", "pmean", "pmax", "pmin"):
        fn = {"psum": lax.psum, "pmean": lax.pmean, "pmax": lax.pmax, "pmin": lax.pmin}[name]
        f = lambda x: fn(jnp.sin(x), "i")
    elif name == "all_gather":
        tiled = draw(st.booleans())
        axis = draw(st.integers(0, rank - 1 if tiled else rank))
        f = lambda x: lax.all_gather(x * 2.0, "i", axis=axis, tiled=tiled)
    elif name == "psum_scatter":
        tiled = draw(st.booleans())
        dim = draw(st.integers(0, rank - 1))
        shape[dim] = n * draw(small) if tiled else n
        f = lambda x: lax.psum_scatter(x, "i", scatter_dimension=dim, tiled=tiled)
    elif name in ("ppermute", "pshuffle"):
        order = draw(st.permutations(range(n)))
        if name == "pshuffle":
            f = lambda x: lax.pshuffle(x + 1.0, "i", order)
        else:
            keep = draw(st.lists(st.booleans(), min_size=n, max_size=n))
            perm = [(s, d) for s, d, k in zip(range(n), order, keep, strict=True) if k]
            f = lambda x: lax.ppermute(x + 1.0, "i", perm)
    elif name == "all_to_all":
        tiled = draw(st.booleans())
        split = draw(st.integers(0, rank - 1))
        concat = draw(st.integers(0, rank - 1))
        shape[split] = n * draw(small) if tiled else n
        f = lambda x: lax.all_to_all(x, "i", split, concat, tiled=tiled)
    else:
        f = lambda x: x * lax.axis_index("i").astype(jnp.float32) + lax.psum(1, "i")
    seed = draw(st.integers(0, 2**31))
    x = np.random.default_rng(seed).normal(size=(n, *shape)).astype(F32)
    return f, x


COLLECTIVES = ["psum", "pmean", "pmax", "pmin", "all_gather", "psum_scatter", "ppermute",
               "pshuffle", "all_to_all", "axis_index"]


@pytest.mark.devices(8)
@pytest.mark.parametrize("name", COLLECTIVES)
@settings(max_examples=10, deadline=None)
@given(data=st.data(), n=st.integers(1, 8))
def test_pmap_equals_vmap_equals_interpreter(name, data, n):
    f, x = _case(name, data, n)
    by_pmap = np.asarray(spmdc.pmap(f, axis_name="i")(x))
    by_vmap = np.asarray(vmap(f, axis_name="i")(x))
    func, _, consts, _, _ = trace_pytree(f, (x[0],), {}, "f", axis_env={"i": n})
    consts = [np.broadcast_to(np.asarray(c), (n, *np.shape(c))) for c in consts]
    by_interpreter = evaluate_spmd(func, (("i", n),), x, *consts)[0]
    np.testing.assert_allclose(by_pmap, by_interpreter, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(by_vmap, by_interpreter, rtol=1e-5, atol=1e-5)


def test_compiling_for_fewer_devices_than_the_mesh_is_a_clear_error():
    # XLA stops at an internal check (or, on a GPU, a clique error) instead
    func = one_eqn(CASES["psum_i"], TensorType((8, 3), F32))
    with pytest.raises(ValueError, match="span 8 devices, but 1 were given"):
        compile_func(func, pjrt.devices()[:1], axis_env=dict(MESH),
                     mesh_axes=[name for name, _ in MESH])


@pytest.mark.devices(2)
@pytest.mark.parametrize("split,concat,tiled", [(2, 1, False), (1, 2, False), (0, 2, False),
                                                (2, 0, True), (1, 1, False)])
def test_all_to_all_vjp_is_its_adjoint(split, concat, tiled):
    # <A x, y> = <x, A^T y> summed over the devices, A = all_to_all under pmap. (JAX 0.10.2's
    # transpose of an untiled all_to_all whose split and concat axes differ raises
    # "Expected cotangent type float32[1,1,3,2] but got float32[1,3,1,2]".)
    n = 2
    shape = [1, 3, 4]
    shape[split] = 2 * n if tiled else n
    rng = np.random.default_rng(split * 10 + concat)
    x = rng.normal(size=(n, *shape)).astype(F32)
    forward = spmdc.pmap(lambda v: lax.all_to_all(v, "i", split, concat, tiled=tiled), "i")
    ax = np.asarray(forward(x))
    y = rng.normal(size=ax.shape).astype(F32)
    adjoint = spmdc.pmap(lambda v, c: spmdc.vjp(
        lambda u: lax.all_to_all(u, "i", split, concat, tiled=tiled), v)[1](c)[0], "i")
    aty = np.asarray(adjoint(x, y))
    assert aty.shape == x.shape
    np.testing.assert_allclose(np.sum(ax * y), np.sum(x * aty), rtol=1e-5)
