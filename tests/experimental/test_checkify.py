"""spmdc.experimental.checkify (Note [checks as error values] in
spmdc/compiler/passes/checks.py): user checks under jit, vmap, grad and control flow,
the automatic division, NaN and index checks, and the errors. Every expected message is
what JAX 0.10.2 printed for the same program."""
import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc import lax
from spmdc.experimental import checkify


def positive(x):
    checkify.check(x > 0, "{x} needs to be positive!", x=x)
    return 1 / x


def f32(v):
    return jnp.array(v, jnp.float32)


def test_user_check_fails_and_passes():
    err, out = checkify.checkify(positive)(f32(-3.))
    assert err.get() == "-3.0 needs to be positive! (`check` failed)"
    np.testing.assert_allclose(np.asarray(out), -1 / 3, rtol=1e-6)
    err, out = checkify.checkify(positive)(f32(3.))
    assert err.get() is None
    err.throw()                                # nothing failed: no exception
    np.testing.assert_allclose(np.asarray(out), 1 / 3, rtol=1e-6)


def test_throw_raises_jax_runtime_error():
    err, _ = checkify.checkify(positive)(f32(-1.))
    with pytest.raises(checkify.JaxRuntimeError, match="-1.0 needs to be positive"):
        err.throw()
    assert issubclass(checkify.JaxRuntimeError, ValueError)
    assert str(err) == "Error(-1.0 needs to be positive! (`check` failed))"


def test_jit_of_checkify_and_checkify_of_jit():
    err, out = spmdc.jit(checkify.checkify(positive))(f32(-2.))
    assert err.get() == "-2.0 needs to be positive! (`check` failed)"
    assert float(out) == -0.5
    err, out = checkify.checkify(spmdc.jit(positive))(f32(-2.))
    assert err.get() == "-2.0 needs to be positive! (`check` failed)"
    err, _ = spmdc.jit(checkify.checkify(positive))(f32(2.))
    assert err.get() is None


def test_first_failed_check_wins():
    def two(x):
        checkify.check(x > 0, "first {}", x)
        checkify.check(x > 1, "second {}", x)
        return x
    assert checkify.checkify(two)(f32(-1.))[0].get() == "first -1.0 (`check` failed)"
    assert checkify.checkify(two)(f32(0.5))[0].get() == "second 0.5 (`check` failed)"


def test_vmap_of_checkify_reports_each_mapped_index():
    err, out = spmdc.vmap(checkify.checkify(positive))(jnp.array([1., -2., -3.]))
    assert err.get() == ("at mapped index 1: -2.0 needs to be positive! (`check` failed)\n"
                         "at mapped index 2: -3.0 needs to be positive! (`check` failed)")
    np.testing.assert_allclose(np.asarray(out), [1, -0.5, -1 / 3], rtol=1e-6)


def test_checkify_of_vmap_reports_the_last_failing_element():
    # JAX reduces a batched check with argsort(failed)[-1]: the last failing element.
    err, _ = checkify.checkify(spmdc.vmap(positive))(jnp.array([1., -2., -3.]))
    assert err.get() == "-3.0 needs to be positive! (`check` failed)"
    err, _ = checkify.checkify(spmdc.vmap(positive))(jnp.array([1., 2.]))
    assert err.get() is None


def test_check_inside_grad():
    err, g = checkify.checkify(spmdc.grad(positive))(f32(-2.))
    assert err.get() == "-2.0 needs to be positive! (`check` failed)"
    assert float(g) == -0.25


def test_check_in_scan_body_reports_first_failing_iteration():
    def g(xs):
        def body(c, x):
            checkify.check(x < 3, "too big {}", x)
            return c + x, x * 2
        return lax.scan(body, 0., xs)
    err, (c, ys) = checkify.checkify(g)(jnp.arange(5.))
    assert err.get() == "too big 3.0 (`check` failed)"
    assert float(c) == 10.0
    np.testing.assert_array_equal(np.asarray(ys), [0, 2, 4, 6, 8])


def test_check_in_cond_branch_and_while_body():
    def h(x):
        def bad(x):
            checkify.check(x > -1, "neg {}", x)
            return x
        return lax.cond(x > 0, lambda x: x, bad, x)
    assert checkify.checkify(h)(f32(-2.))[0].get() == "neg -2.0 (`check` failed)"
    assert checkify.checkify(h)(f32(2.))[0].get() is None

    def w(x):
        def body(c):
            checkify.check(c < 5, "c {}", c)
            return c + 1
        return lax.while_loop(lambda c: c < 10, body, x)
    err, out = checkify.checkify(w)(jnp.array(0, jnp.int32))
    assert err.get() == "c 5 (`check` failed)"
    assert int(out) == 10


def test_check_outside_checkify():
    with pytest.raises(checkify.JaxRuntimeError, match=r"eager fail 1 \(`check` failed\)"):
        checkify.check(jnp.array(False), "eager fail {}", jnp.array(1))
    checkify.check(jnp.array(True), "never")
    with pytest.raises(ValueError, match="Cannot abstractly evaluate a checkify.check which "
                       "was not functionalized"):
        spmdc.jit(positive)(f32(1.))


def test_debug_check_runs_only_under_checkify():
    def d(x):
        checkify.debug_check(x != 0, "cannot be zero!")
        return x
    assert int(spmdc.jit(d)(jnp.array(0))) == 0                  # dropped
    d(jnp.array(0))                                              # eagerly too
    err, _ = spmdc.jit(checkify.checkify(d))(jnp.array(0))
    assert err.get() == "cannot be zero! (`check` failed)"


def test_check_error_is_functionalized_again():
    def with_inner_jit(x):
        error, out = spmdc.jit(checkify.checkify(positive))(x)
        checkify.check_error(error)
        return out
    with pytest.raises(checkify.JaxRuntimeError, match="-1.0 needs to be positive"):
        with_inner_jit(f32(-1.))
    assert float(with_inner_jit(f32(1.))) == 1.0
    err, _ = checkify.checkify(with_inner_jit)(f32(-1.))
    assert err.get() == "-1.0 needs to be positive! (`check` failed)"
    err, _ = checkify.checkify(spmdc.jit(with_inner_jit))(f32(-1.))
    assert err.get() == "-1.0 needs to be positive! (`check` failed)"


def test_div_and_nan_checks():
    err, out = checkify.checkify(lambda x: jnp.sin(x) / x,
                                 errors=checkify.float_checks)(f32(0.))
    assert err.get() == "division by zero"           # the division is traced first
    assert np.isnan(np.asarray(out))
    err, _ = checkify.checkify(jnp.sin, errors=checkify.float_checks)(f32(np.inf))
    assert err.get() == "nan generated by primitive: sin."
    err, _ = checkify.checkify(jnp.sin, errors=checkify.float_checks)(f32(1.))
    assert err.get() is None
    err, _ = checkify.checkify(lambda x: x // jnp.array(0), errors=checkify.div_checks)(
        jnp.array(3))
    assert err.get() == "division by zero"
    # not enabled: no automatic check
    assert checkify.checkify(jnp.sin)(f32(np.inf))[0].get() is None


@pytest.mark.parametrize("fun, index, message", [
    (lambda x, i: x[i], 5,
     "out-of-bounds indexing for array of shape (3, 4): index 5 is out of bounds for axis 0 "
     "with size 3. "),
    (lambda x, i: x[i], 1, None),
    (lambda x, i: jnp.take(x, jnp.stack([jnp.array(1), i])), 20,
     "out-of-bounds indexing for array of shape (12,): index 20 is out of bounds for axis 0 "
     "with size 12. "),
    (lambda x, i: x.at[i].set(1.), 3,
     "out-of-bounds indexing for array of shape (3, 4): index 3 is out of bounds for axis 0 "
     "with size 3. "),
    (lambda x, i: lax.dynamic_slice(x, (i, 0), (2, 2)), 2,
     "out-of-bounds indexing for array of shape (3, 4): index 2 is out of bounds for axis 0 "
     "with size 3. "),
    (lambda x, i: lax.dynamic_update_slice(x, jnp.ones((1, 2)), (0, i)), 3,
     "out-of-bounds indexing for array of shape (3, 4): index 3 is out of bounds for axis 1 "
     "with size 4. "),
    (lambda x, i: x[:, i], 4,
     "out-of-bounds indexing for array of shape (3, 4): index 4 is out of bounds for axis 1 "
     "with size 4. "),
])
def test_index_checks(fun, index, message):
    x = jnp.arange(12.).reshape(3, 4)
    err, _ = checkify.checkify(fun, errors=checkify.index_checks)(x, jnp.array(index))
    assert err.get() == message


def test_all_checks_and_categories():
    assert checkify.float_checks == checkify.nan_checks | checkify.div_checks
    assert checkify.automatic_checks == checkify.float_checks | checkify.index_checks
    assert checkify.all_checks == checkify.automatic_checks | checkify.user_checks
    err, _ = checkify.checkify(lambda x, i: x[i] / 0., errors=checkify.all_checks)(
        jnp.arange(3.), jnp.array(5))
    assert err.get() == ("out-of-bounds indexing for array of shape (3,): index 5 is out "
                         "of bounds for axis 0 with size 3. ")


def test_error_is_a_pytree_through_jit():
    err, _ = spmdc.jit(checkify.checkify(positive))(f32(-4.))
    leaves, tree = spmdc.tree_util.tree_flatten(err)
    again = spmdc.tree_util.tree_unflatten(tree, leaves)
    assert again.get() == "-4.0 needs to be positive! (`check` failed)"


def test_bad_arguments():
    with pytest.raises(TypeError, match="check takes a scalar pred as argument"):
        checkify.checkify(lambda x: checkify.check(x > 0, "m"))(jnp.ones(2))
    with pytest.raises(TypeError, match="Formatting arguments to checkify.check need to be "
                       "PyTrees of arrays, but got 3"):
        checkify.check(True, "{}", 3)
    with pytest.raises(TypeError, match="check_error takes an Error as argument"):
        checkify.check_error(None)
    # JAX ignores what is not a category; spmdc names it (a typo would check nothing).
    with pytest.raises(TypeError, match="errors must be a set of error categories"):
        checkify.checkify(positive, errors={"nan"})


def test_python_scalar_arguments_stay_python_values():
    # As JAX, checkify closes over its arguments: a Python float is no array, so it
    # cannot format a message.
    with pytest.raises(TypeError, match="but got -3.0 of type <class 'float'>"):
        checkify.checkify(positive)(-3.)


def test_payload_formats_as_arrays():
    # chex formats a dict of payload arrays: JAX's message shows them as Arrays.
    def r(x):
        checkify.check(x > 0, "{!r} and {d}", x, d={"b": x})
        return x
    err, _ = checkify.checkify(r)(f32(-1.))
    assert err.get() == ("Array(-1., dtype=float32) and {'b': Array(-1., dtype=float32)} "
                         "(`check` failed)")
    err, _ = spmdc.vmap(checkify.checkify(r))(jnp.array([1., -2.]))
    assert err.get() == ("at mapped index 1: Array(-2., dtype=float32) and "
                         "{'b': Array(-2., dtype=float32)} (`check` failed)")


def test_checks_inside_checkpoint_and_custom_derivatives():
    err, _ = checkify.checkify(spmdc.checkpoint(positive))(f32(-1.))
    assert err.get() == "-1.0 needs to be positive! (`check` failed)"

    @spmdc.custom_jvp
    def cj(x):
        checkify.check(x > 0, "cj {}", x)
        return x
    cj.defjvp(lambda p, t: (cj(p[0]), t[0]))
    assert checkify.checkify(cj)(f32(-1.))[0].get() == "cj -1.0 (`check` failed)"
    err, g = checkify.checkify(spmdc.grad(cj))(f32(-1.))
    assert err.get() == "cj -1.0 (`check` failed)"
    assert float(g) == 1.0


def test_transformations_of_checkify():
    def sin2(x):
        checkify.check(x > 0, "{x} needs to be positive!", x=x)
        return jnp.sin(x) * 2
    g = spmdc.grad(lambda x: checkify.checkify(sin2)(x)[1])(f32(1.))
    np.testing.assert_allclose(float(g), 2 * np.cos(1.0), rtol=1e-6)
    (err, _), _ = spmdc.jvp(checkify.checkify(sin2), (f32(-1.),), (f32(1.),))
    assert err.get() == "-1.0 needs to be positive! (`check` failed)"
    err, _ = spmdc.vmap(spmdc.jit(checkify.checkify(sin2)))(jnp.array([1., -1.]))
    assert err.get() == "at mapped index 1: -1.0 needs to be positive! (`check` failed)"
    # an inner checkify consumes its checks: the outer one sees none (as JAX)
    err, _ = checkify.checkify(lambda x: checkify.checkify(sin2)(x)[1])(f32(-1.))
    assert err.get() is None


@pytest.mark.parametrize("x0, lim, message, result", [
    (0, 5, "cond 5 5 (`check` failed)", 10),
    (0, 100, "body 7 (`check` failed)", 10),
    (20, 3, "cond 20 3 (`check` failed)", 20),        # the condition's first evaluation
    (6, 100, "body 7 (`check` failed)", 10),
])
def test_checks_in_while_cond_fun(x0, lim, message, result):
    def w(x, lim):
        def cond(c):
            checkify.check(c < lim, "cond {} {}", c, lim)
            return c < 10

        def body(c):
            checkify.check(c != 7, "body {}", c)
            return c + 1
        return lax.while_loop(cond, body, x)
    err, out = checkify.checkify(w)(jnp.array(x0), jnp.array(lim))
    assert err.get() == message
    assert int(out) == result


def test_python_control_flow_on_arguments_is_an_error_as_in_jax():
    def branchy(x):
        if x > 0:
            return x * 2
        return x
    with pytest.raises(spmdc.errors.TracerBoolConversionError):
        checkify.checkify(branchy)(f32(5.))


def test_jax_src_checkify_names_the_same_objects():
    # Flax's nnx.checkify imports jax._src.checkify (checkify, Error, JaxException,
    # user_checks, Out).
    from spmdc._src import checkify as src
    assert src.checkify is checkify.checkify and src.Error is checkify.Error
    assert src.user_checks is checkify.user_checks
    assert issubclass(src.FailedCheckError, src.JaxException)
    err, _ = src.checkify(positive, errors=src.user_checks)(f32(-5.))
    assert err.get() == "-5.0 needs to be positive! (`check` failed)"


def test_init_error_is_the_empty_error_as_jaxs():
    from spmdc.experimental.checkify import init_error
    assert init_error.get() is None and str(init_error) == "Error(None)"
    init_error.throw()                                    # nothing failed: no raise
    checkify.check_error(init_error)

    def f(x):
        checkify.check_error(init_error)
        checkify.check(x > 0, "neg")
        return x
    err, out = checkify.checkify(f)(-1.0)
    assert err.get() == "neg (`check` failed)" and float(out) == -1.0
    assert int(spmdc.jit(lambda e: 1)(init_error)) == 1
    passed = spmdc.jit(lambda e: e)(init_error)
    assert passed.get() is None
