"""Differential testing in CI: a fixed batch of random programs (tools/fuzz) against the
NumPy reference oracle, and tests that the fuzzer's oracle, comparison and minimiser can
fail. The long run against JAX is ``make fuzz N=5000`` (docs/TESTING.md)."""
import os
import sys

import ml_dtypes
import numpy as np
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir, os.pardir, "tools"))

from fuzz.cli import Checker, features_available  # noqa: E402
from fuzz.generate import generate  # noqa: E402
from fuzz.program import Op, Program, to_source  # noqa: E402
from fuzz.run import InProcess, Result, execute, minimise, run_reference  # noqa: E402

from spmdc.compiler.interpreter import evaluate  # noqa: E402

BATCH = range(40)                     # the fixed CI batch: seeds 0..39


@pytest.fixture(scope="module")
def features():
    found, _ = features_available()
    return found


@pytest.mark.devices(8)
def test_fixed_batch_agrees_with_reference(features):
    checker = Checker(InProcess(), reference=True)
    failures = []
    for seed in BATCH:
        p = generate(seed, features)
        for f in checker.check(p):
            small = minimise(p, checker.still_fails(f), budget_s=20)
            failures.append(f"seed {seed}: {f.category}: {f.detail}\n{to_source(small)}")
    assert not failures, "\n\n".join(failures)
    # The batch must exercise things: most programs run, and the reference checks them.
    assert checker.counts["spmdc ok"] >= len(BATCH) * 3 // 4
    assert checker.counts["reference ok"] >= len(BATCH) * 3 // 4


def test_generation_is_deterministic_and_covers_the_wrappers(features):
    assert generate(7, features) == generate(7, features)
    kinds = {w.kind for seed in range(200) for w in generate(seed, features).wrappers}
    assert {"jit", "vmap", "pmap", "grad", "value_and_grad", "cond", "while", "fori",
            "scan"} <= kinds
    templates = " ".join(op.template for seed in range(200) for op in generate(seed, features).ops)
    for name in ("lax.psum(", "lax.all_gather(", "lax.ppermute(", "lax.all_to_all(",
                 "lax.psum_scatter(", "lax.axis_index(", "jnp.einsum(", ".at[", "@"):
        assert name in templates


def test_scripts_differ_only_in_imports():
    p = generate(3)
    a, b = to_source(p, "spmdc"), to_source(p, "jax")
    assert "import spmdc as jax" in a and "import jax\n" in b
    assert a.split("import ml_dtypes")[1] == b.split("import ml_dtypes")[1]


def _program(template: str, shape=(3,)) -> Program:
    from fuzz.program import Input
    return Program(0, (Input(shape, "float32"),), (Op(template, (0,), (shape, "float32")),), (1,))


def test_a_wrong_value_is_caught_and_minimised():
    # A backend that gets sin wrong: the checker must report it, and the minimiser must
    # shrink a larger program down to the one op.
    class WrongSin(InProcess):
        def run(self, source):
            return execute(source.replace("jnp.sin(", "jnp.cos("))

    from fuzz.program import Input, Wrapper
    p = Program(0, (Input((3,), "float32"), Input((3,), "float32")),
                (Op("jnp.tanh({0})", (0,), ((3,), "float32")),
                 Op("jnp.sin({0})", (2,), ((3,), "float32")),
                 Op("{0} * {1}", (3, 1), ((3,), "float32"))), (4,),
                (Wrapper("jit"), Wrapper("vmap", (("size", 2), ("axis_name", None),
                                                  ("in_axes", (0, None)), ("out_axes", (0,))))))
    checker = Checker(WrongSin(), reference=True)
    findings = checker.check(p)
    assert [f.category for f in findings] == ["value"]
    small = minimise(p, checker.still_fails(findings[0]), budget_s=30)
    assert [op.template for op in small.ops] == ["jnp.sin({0})"]
    assert small.wrappers == ()


def test_reference_gradients_are_finite_differences():
    from fuzz.program import Wrapper
    p = _program("jnp.sin({0}) * {0}").replace(wrappers=(Wrapper("grad", (("argnums", 0),)),))
    got = run_reference(p)
    x = np.asarray(np.random.default_rng(0).standard_normal((3,)), np.float32)
    assert got.status == "ok"
    np.testing.assert_allclose(got.outs[0], np.cos(x) * x + np.sin(x), rtol=1e-5)


@pytest.mark.devices(8)
def test_reference_pmap_grad_follows_collective_transpose():
    # grad inside pmap of psum(x): every device's cotangent is the psum of the ones, N.
    from fuzz.program import Input, Wrapper
    p = Program(0, (Input((), "float32"),), (Op("lax.psum({0}, 'i')", (0,), ((), "float32"),
                                                 collective=True),), (1,),
                (Wrapper("grad", (("argnums", 0),)),
                 Wrapper("pmap", (("size", 4), ("axis_name", "i"), ("in_axes", (0,)),
                                  ("out_axes", (0,))))))
    got = run_reference(p)
    np.testing.assert_allclose(got.outs[0], np.full(4, 4.0), rtol=1e-6)
    assert Checker(InProcess()).check(p) == []


def test_raising_is_compared():
    ok = Result("ok", [np.zeros(2, np.float32)], ["float32"])
    err = Result("error", error="TypeError: no")
    from fuzz.run import compare
    p = _program("jnp.sin({0})")
    assert compare(p, ok, err, "jax")[0] == "raises"
    assert compare(p, err, err, "jax") is None
    assert compare(p, ok, Result("ok", [np.zeros(3, np.float32)], ["float32"]), "jax")[0] == "shape"
    assert compare(p, ok, Result("ok", [np.zeros(2, np.int32)], ["int32"]), "jax")[0] == "dtype"


def test_exception_classes_are_compared_with_jax():
    # A program JAX rejects must raise JAX's class or a subclass of it: the JAX oracle
    # reports another class as a finding; the reference's own exceptions are not compared.
    from fuzz.run import compare, decode, encode, execute
    p = _program("jnp.sin({0})")
    jax_value_error = Result("error", error="ValueError: Incompatible shapes for broadcasting")
    type_error = execute("import spmdc.numpy as jnp\nout = jnp.ones(2) + jnp.ones(3)")
    assert type_error.classes[:2] == ["TypeError", "Exception"]
    assert decode(encode(type_error)).classes == type_error.classes     # through a worker
    assert compare(p, type_error, jax_value_error, "jax")[0] == "raises-type"
    assert compare(p, type_error, jax_value_error, "reference") is None
    value_error = execute("import spmdc.numpy as jnp\nout = jnp.ones((2, 3)) + jnp.ones(4)")
    assert compare(p, value_error, jax_value_error, "jax") is None
    subclass = Result("error", error="WhileLoopVJPError: no",
                      classes=["WhileLoopVJPError", "ValueError", "Exception"])
    assert compare(p, subclass, jax_value_error, "jax") is None


def test_interpreter_real_mode_ignores_float_rounding():
    # real=True holds floats in float64 and lets a float->float convert through, so finite
    # differences through a bfloat16 cast see the real function, not bfloat16's steps.
    import spmdc
    import spmdc.numpy as jnp
    func = spmdc.make_ir(lambda x: x.astype(jnp.bfloat16).astype(jnp.float32) * 3)(np.float32(1.0))
    x = np.float64(1.001)
    (rounded,) = evaluate(func, x)
    (real,) = evaluate(func, x, real=True)
    assert rounded.dtype == np.float32 and rounded == np.float32(3.0)
    assert real.dtype == np.float64 and abs(real - 3.003) < 1e-12
    assert ml_dtypes.bfloat16(1.001) == 1.0


def test_a_finite_difference_across_a_kink_is_checked_again():
    # ceil(x**2) has derivative 0 almost everywhere; a step of 1e-3 happens to straddle
    # one of its jumps on this input (a false alarm the second, smaller step removes).
    from fuzz.program import Input, Wrapper
    p = Program(151, (Input((3,), "float32"),),
                (Op("{0} ** 2", (0,), ((3,), "float32")),
                 Op("jnp.ceil({0})", (1,), ((3,), "float32"))),
                (2,), (Wrapper("grad", (("argnums", (0,)),)), Wrapper("while", (("length", 2),))))
    assert np.abs(run_reference(p).outs[0]).max() > 1
    np.testing.assert_array_equal(run_reference(p, step=1e-6).outs[0], np.zeros(3))
    checker = Checker(InProcess())
    assert checker.check(p) == []
    assert checker.counts["reference: second step agreed"] == 1


def test_interpreter_runs_bfloat16_matmul():
    # np.einsum has no bfloat16 kernel: the reference computes in float32 and rounds.
    import spmdc
    a = np.linspace(-1, 1, 8).reshape(2, 2, 2).astype(ml_dtypes.bfloat16)
    b = np.linspace(0, 2, 6).reshape(2, 3).astype(ml_dtypes.bfloat16)
    func = spmdc.make_ir(lambda x, y: x @ y)(a, b)
    (got,) = evaluate(func, a, b)
    assert got.dtype == ml_dtypes.bfloat16
    np.testing.assert_allclose(got.astype(np.float32),
                               np.asarray(spmdc.jit(lambda x, y: x @ y)(a, b)).astype(np.float32),
                               rtol=1e-2)


def test_a_nan_derivative_is_not_judged_but_the_rest_is():
    from fuzz.program import Wrapper
    from fuzz.run import compare
    p = _program("jnp.sqrt({0})").replace(wrappers=(Wrapper("grad", (("argnums", 0),)),))
    want = Result("ok", [np.array([1.0, 2.0, 3.0], np.float32)], ["float32"])
    nan_first = Result("ok", [np.array([np.nan, 2.0, 3.0], np.float32)], ["float32"])
    wrong_last = Result("ok", [np.array([np.nan, 2.0, 4.0], np.float32)], ["float32"])
    assert compare(p, nan_first, want, "reference") is None
    assert compare(p, wrong_last, want, "reference")[0] == "value"
    assert compare(p, nan_first, want, "jax")[0] == "value"


@pytest.mark.parametrize("kind", ["grad", "value_and_grad"])
def test_grad_of_a_function_with_no_float_output_raises_in_every_oracle(kind):
    # The script's _total of no float output is the int 0: JAX and spmdc raise TypeError,
    # and so must the reference (it returned zero gradients).
    from fuzz.program import Wrapper
    p = _program("{0} > 0").replace(ops=(Op("{0} > 0", (0,), ((3,), "bool")),),
                                    wrappers=(Wrapper(kind, (("argnums", 0),)),))
    want = run_reference(p)
    assert want.status == "error" and want.error.startswith("TypeError")
    got = InProcess().run(to_source(p))
    assert got.status == "error" and got.error.startswith("TypeError")
    assert Checker(InProcess()).check(p) == []


def test_reference_leaves_a_derivative_it_sees_as_nan_to_the_jax_oracle():
    # take's fill reads NaN at an out-of-range index: constant, so its derivative is 0
    # (in JAX and spmdc); the reference's finite differences are NaN, which is no mismatch.
    from fuzz.program import Input, Wrapper
    p = Program(0, (Input((3, 2), "float32"), Input((2,), "int32", low=3, high=4)),
                (Op("jnp.take({0}, {1}, axis=0, mode='fill')", (0, 1), ((2, 2), "float32")),
                 Op("jnp.take({0}, jnp.array([0, 1]), axis=0) * {2}", (0, 1, 2),
                    ((2, 2), "float32"))),
                (2, 3), (Wrapper("grad", (("argnums", 0),)),))
    got = run_reference(p)
    assert got.status == "ok" and np.isnan(got.outs[0]).all()
    assert Checker(InProcess()).check(p) == []


def test_reference_jvp_over_jacfwd_of_a_scalar():
    # jacfwd hands its 0-d result over as a NumPy scalar; the reference then raised
    # "'numpy.float64' object does not support item assignment".
    from fuzz.program import Input, Wrapper
    p = Program(0, (Input((), "float32"),), (Op("jnp.sin({0})", (0,), ((), "float32")),), (1,),
                (Wrapper("jacfwd", (("argnums", (0,)),)), Wrapper("jvp", (("argnums", (0,)),))))
    got = run_reference(p)
    assert got.status == "ok", got.error
    assert Checker(InProcess()).check(p) == []


def test_a_value_jax_gets_wrong_is_a_known_difference_only_for_its_programs():
    from fuzz.program import Input, Wrapper
    from fuzz.run import known_difference
    p = Program(0, (Input((4,), "float32"), Input((2,), "int32"), Input((2,), "float32")),
                (Op("{0}.at[{1}].min({2}, mode='clip')", (0, 1, 2), ((4,), "float32")),), (3,),
                (Wrapper("jacrev", (("argnums", (2,)),)),))
    spmdc_out = Result("ok", [np.array([[0.0, 0.0], [1.0, 0.0]], np.float32)], ["float32"])
    jax_nan = Result("ok", [np.array([[0.0, 0.0], [np.inf, np.nan]], np.float32)], ["float32"])
    jax_other = Result("ok", [np.zeros((2, 2, 1), np.float32)], ["float32"])
    assert known_difference(p, jax_nan, spmdc_out) is not None
    assert known_difference(p, jax_other, spmdc_out) is None          # a shape is not
    assert known_difference(p.replace(wrappers=()), jax_nan, spmdc_out) is None


def test_a_shape_jax_gets_wrong_for_all_to_all_under_vmap_is_a_known_difference():
    from fuzz.program import Input, Wrapper
    from fuzz.run import known_difference
    p = Program(0, (Input((2, 2), "float32"),),
                (Op("lax.all_to_all({0}, 'a', 0, 0, tiled=False)", (0,), ((2,), "float32"),
                    collective=True),), (1,),
                (Wrapper("vmap", (("size", 2), ("axis_name", "a"), ("in_axes", (0,)),
                                  ("out_axes", (0,)))),))
    spmdc_out = Result("ok", [np.zeros((2, 2), np.float32)], ["float32"])
    jax_out = Result("ok", [np.zeros((2, 2, 2), np.float32)], ["float32"])
    assert known_difference(p, jax_out, spmdc_out) is not None
    assert known_difference(p, Result("ok", [np.ones((2, 2), np.float32)], ["float32"]),
                            spmdc_out) is None


def test_a_summed_all_to_all_of_an_unbatched_value_is_a_known_difference_only_so():
    # Seed 43120: under value_and_grad of a summed loss, JAX's extra axes (the test above)
    # show only as a sum 8 times too large.
    from fuzz.program import Input, Wrapper
    from fuzz.run import known_difference
    vmap = Wrapper("vmap", (("size", 1), ("axis_name", "a"), ("in_axes", (1, None)),
                            ("out_axes", (0,))))
    p = Program(0, (Input((4, 1), "float32"), Input((4, 2), "float32")),
                (Op("lax.all_to_all({0}, 'a', 1, 0, tiled=True)", (1,), ((4, 2), "float32"),
                    collective=True),), (2,),
                (vmap, Wrapper("value_and_grad", (("argnums", (1,)),))))
    spmdc_out = Result("ok", [np.array(-1.08, np.float32)], ["float32"])
    jax_out = Result("ok", [np.array(-8.67, np.float32)], ["float32"])
    assert known_difference(p, jax_out, spmdc_out) is not None
    # not where the operand is batched, nor without a derivative
    batched = p.replace(ops=(p.ops[0].__class__(p.ops[0].template, (0,), ((4, 1), "float32"),
                                                collective=True),))
    assert known_difference(batched, jax_out, spmdc_out) is None
    assert known_difference(p.replace(wrappers=(vmap,)), jax_out, spmdc_out) is None


@pytest.mark.devices(8)
def test_a_derivative_at_a_tie_of_pmin_over_copies_is_not_judged():
    # Seed 11017: pmin of an input pmap broadcasts (in_axes=None) ties across devices.
    # Raising one device's copy leaves the minimum, lowering it moves every device's:
    # the central difference averages the slopes (N/2), spmdc splits the summed
    # cotangent among the ties (1 each, Note [collective transpose]). A convention, not
    # a mismatch: the second look leaves such kinks unjudged, and judges the rest.
    from fuzz.program import Input, Wrapper
    p = Program(0, (Input((2,), "float32"), Input((4,), "float32")),
                (Op("lax.pmin({0}, 'i')", (0,), ((2,), "float32"), collective=True),), (2,),
                (Wrapper("grad", (("argnums", 0),)),
                 Wrapper("pmap", (("size", 4), ("axis_name", "i"), ("in_axes", (None, 0)),
                                  ("out_axes", (0,))))))
    np.testing.assert_allclose(run_reference(p, step=1e-6).outs[0], np.full((4, 2), 2.0),
                               rtol=1e-6)
    assert np.isnan(run_reference(p, step=1e-6, kinks=True).outs[0]).all()
    checker = Checker(InProcess())
    assert checker.check(p) == []
    assert checker.counts["reference: second step agreed"] == 1
    smooth = _program("jnp.sin({0}) * {0}").replace(wrappers=(Wrapper("grad", (("argnums", 0),)),))
    assert not np.isnan(run_reference(smooth, step=1e-6, kinks=True).outs[0]).any()
