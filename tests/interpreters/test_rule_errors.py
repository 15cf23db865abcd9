"""Bad rules for a library-defined primitive: each error has JAX's type and names the
primitive and the rule, and spmdc keeps working afterwards."""
import numpy as np
import pytest
from jaxlib.mlir.dialects import stablehlo as hlo

import spmdc
import spmdc.numpy as jnp
from spmdc.core.abstract import ShapedArray
from spmdc.errors import LoweringError
from spmdc.extend.core import Primitive
from spmdc.interpreters import ad, batching, mlir

X = np.arange(1.0, 4.0, dtype=np.float32)


def _identity(name, multiple=False):
    p = Primitive(name)
    p.multiple_results = multiple
    p.def_impl(lambda *xs: list(xs) if multiple else xs[0])
    p.def_abstract_eval(lambda *avals: list(avals) if multiple else avals[0])
    mlir.register_lowering(p, mlir.lower_fun(lambda *xs: list(xs) if multiple else xs[0],
                                             multiple_results=multiple))
    return p


def _still_works():
    np.testing.assert_allclose(spmdc.jit(lambda x: jnp.sin(x) * 2)(X), np.sin(X) * 2,
                               rtol=1e-6)


def test_missing_abstract_eval_and_impl():
    p = Primitive("no_rules")
    with pytest.raises(NotImplementedError, match="Abstract evaluation for 'no_rules'"):
        spmdc.jit(lambda x: p.bind(x))(X)
    with pytest.raises(NotImplementedError, match="Evaluation rule for 'no_rules'"):
        p.bind(X)
    _still_works()


def test_abstract_eval_returning_a_non_aval():
    p = Primitive("bad_aval")
    p.def_abstract_eval(lambda x: (3, 4))
    with pytest.raises(TypeError, match="abstract evaluation rule of primitive 'bad_aval'"):
        spmdc.jit(lambda x: p.bind(x))(X)
    q = Primitive("bad_multi")
    q.multiple_results = True
    q.def_abstract_eval(lambda x: x)
    with pytest.raises(TypeError, match="must return a sequence"):
        spmdc.jit(lambda x: q.bind(x))(X)
    _still_works()


def test_batching_rule_of_the_wrong_arity_or_type():
    p = _identity("bad_batch_arity", multiple=True)
    batching.primitive_batchers[p] = lambda args, dims: ([args[0]], [dims[0]])
    with pytest.raises(ValueError, match="batching rule of primitive 'bad_batch_arity' "
                                         "returned 1 outputs"):
        spmdc.vmap(lambda x, y: p.bind(x, y))(X, X)
    q = _identity("bad_batch_dim")
    batching.primitive_batchers[q] = lambda args, dims: (args[0], None)
    with pytest.raises(TypeError, match="batching rule of primitive 'bad_batch_dim'.*"
                                        "expected f32\\[\\]"):
        spmdc.vmap(lambda x: q.bind(x))(X)
    r = _identity("bad_batch_axis")
    batching.primitive_batchers[r] = lambda args, dims: (args[0], 3)
    with pytest.raises(ValueError, match="returned batch dimension 3"):
        spmdc.vmap(lambda x: r.bind(x))(X)
    _still_works()


def test_missing_batching_rule():
    p = _identity("unbatchable")
    with pytest.raises(NotImplementedError, match="unbatchable"):
        spmdc.vmap(lambda x: p.bind(x))(X)
    assert spmdc.vmap(lambda x: p.bind(2.0) * x)(X).tolist() == (2 * X).tolist()


def test_jvp_rule_returning_a_tangent_of_the_wrong_type():
    p = _identity("bad_jvp")
    ad.primitive_jvps[p] = lambda primals, tangents: (p.bind(*primals),
                                                      tangents[0].astype(np.int32))
    with pytest.raises(TypeError, match="JVP rule of primitive 'bad_jvp'.*i32\\[3\\].*"
                                        "f32\\[3\\]"):
        spmdc.jvp(lambda x: p.bind(x), (X,), (X,))
    with pytest.raises(TypeError, match="JVP rule of primitive 'bad_jvp'"):
        spmdc.grad(lambda x: p.bind(x).sum())(X)
    _still_works()


def test_differentiating_without_rules():
    p = _identity("no_jvp")
    with pytest.raises(NotImplementedError, match="no_jvp"):
        spmdc.jvp(lambda x: p.bind(x), (X,), (X,))
    with pytest.raises(NotImplementedError, match="no VJP rule for 'no_jvp'"):
        spmdc.grad(lambda x: p.bind(x).sum())(X)
    q = _identity("no_transpose")
    ad.primitive_jvps[q] = lambda primals, tangents: (q.bind(*primals), q.bind(*tangents))
    np.testing.assert_allclose(spmdc.jvp(lambda x: q.bind(x), (X,), (X,))[1], X)
    with pytest.raises(NotImplementedError, match="Transpose rule .* for 'no_transpose'"):
        spmdc.grad(lambda x: q.bind(x).sum())(X)
    _still_works()


def test_transpose_rule_errors():
    p = _identity("bad_transpose")
    ad.primitive_jvps[p] = lambda primals, tangents: (p.bind(*primals), p.bind(*tangents))
    ad.primitive_transposes[p] = lambda ct, x: [ct, ct]
    with pytest.raises(ValueError, match="transpose rule of primitive 'bad_transpose' "
                                         "returned 2 cotangents for 1 operands"):
        spmdc.grad(lambda x: p.bind(x).sum())(X)
    big = np.ones((40, 40), np.float32)
    ad.primitive_transposes[p] = lambda ct, x: [ct * jnp.asarray(big)[0, :3]]
    with pytest.raises(TypeError, match="transpose rule of primitive 'bad_transpose' uses "
                                        "an array constant of type f32\\[40,40\\]"):
        spmdc.grad(lambda x: p.bind(x).sum())(X)
    ad.primitive_transposes[p] = lambda ct, x: [ct * 3.0]
    np.testing.assert_allclose(spmdc.grad(lambda x: p.bind(x).sum())(X), [3.0] * 3)


def test_what_a_rule_raises_names_the_rule():
    p = _identity("raising")

    def rule(args, dims):
        raise KeyError("inside the rule")
    batching.primitive_batchers[p] = rule
    with pytest.raises(KeyError, match="inside the rule") as info:
        spmdc.vmap(lambda x: p.bind(x))(X)
    assert "(raised by the batching rule of primitive 'raising')" in info.value.__notes__
    _still_works()


def test_lowering_that_emits_the_wrong_type():
    p = Primitive("bad_lowering")
    p.def_abstract_eval(lambda x: x)
    mlir.register_lowering(p, lambda ctx, x: [hlo.ConvertOp(
        mlir.aval_to_ir_type(ShapedArray(ctx.avals_in[0].shape, np.int32)), x).result])
    with pytest.raises(LoweringError, match="lowering rule of primitive 'bad_lowering' gave "
                                            "a value of type tensor<3xi32>"):
        spmdc.jit(lambda x: p.bind(x))(X)
    q = Primitive("cpu_only")
    q.def_abstract_eval(lambda x: x)
    mlir.register_lowering(q, lambda ctx, x: [x], platform="tpu")
    with pytest.raises(LoweringError, match="'cpu_only' has no lowering for the cpu "
                                            "platform \\(it has one for tpu\\)"):
        spmdc.jit(lambda x: q.bind(x))(X)
    with pytest.raises(ValueError, match="unknown platform 'metal'"):
        mlir.register_lowering(q, lambda ctx, x: [x], platform="metal")
    _still_works()


def test_rule_tables_hold_rules_only():
    p = _identity("not_callable")
    with pytest.raises(TypeError, match="primitive_jvps\\[not_callable\\]: a rule must be "
                                        "callable"):
        ad.primitive_jvps[p] = 3
    with pytest.raises(ValueError, match="defjvp: primitive 'multi' has multiple results"):
        ad.defjvp(_identity("multi", multiple=True), None)


def test_jvp_rule_returning_a_primal_of_the_wrong_type():
    p = _identity("bad_jvp_primal")
    ad.primitive_jvps[p] = lambda primals, tangents: (primals[0][:2], tangents[0])
    with pytest.raises(TypeError, match="JVP rule of primitive 'bad_jvp_primal' \\(output "
                                        "0\\) returned a value of type f32\\[2\\] where the "
                                        "type f32\\[3\\] was expected"):
        spmdc.jvp(lambda x: p.bind(x), (X,), (X,))
    _still_works()
