"""Mutable array references (spmdc/core/refs.py, Note [refs as threaded state]): eager use,
refs under jit, loops and branches, and under grad and vmap; values recorded from JAX
0.10.2's tests/mutable_array_test.py cases run with JAX."""
from __future__ import annotations

import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc import lax


def test_eager_read_write_and_repr():
    r = spmdc.new_ref(jnp.arange(5.0))
    assert repr(r) == "Ref([0., 1., 2., 3., 4.], dtype=float32)"
    assert str(spmdc.typeof(r)) == "Ref{float32[5]}"
    assert (r.shape, r.dtype, r.ndim, r.size, len(r)) == ((5,), np.float32, 1, 5, 5)
    r[3] = 100.0
    r[1] += 2
    np.testing.assert_array_equal(r[...], [0, 3, 2, 100, 4])
    np.testing.assert_array_equal(r[1:3], [3, 2])
    np.testing.assert_array_equal(spmdc.freeze(r), [0, 3, 2, 100, 4])
    assert repr(spmdc.new_ref(1.0)) == "Ref(1., dtype=float32, weak_type=True)"
    assert str(spmdc.typeof(spmdc.new_ref(1.0))) == "Ref{float32[]}"
    assert repr(spmdc.new_ref(jnp.zeros((2, 2), jnp.int32))) == (
        "Ref([[0, 0],\n       [0, 0]], dtype=int32)")


def test_abstract_ref_type_and_module_path():
    from spmdc._src.state.types import AbstractRef
    r = spmdc.new_ref(jnp.zeros(3), kind="no_grad_no_remat")
    t = spmdc.typeof(r)
    assert isinstance(t, AbstractRef) and t.kind == "no_grad_no_remat"
    assert t == spmdc.typeof(spmdc.new_ref(jnp.ones(3)))
    assert str(t.inner_aval) == "float32[3]" and t.shape == (3,)
    assert not isinstance(r, spmdc.Array) and isinstance(r, spmdc.Ref)
    assert spmdc.tree_util.tree_leaves([r])[0] is r          # a ref is a leaf


def test_indexed_writes_and_state_functions():
    r = spmdc.new_ref(jnp.zeros(3))
    r[jnp.array([0, 2])] = jnp.ones(2) * 7
    np.testing.assert_array_equal(r[...], [7, 0, 7])
    np.testing.assert_array_equal(r[jnp.array([0, 2])], [7, 7])
    x = spmdc.new_ref(jnp.zeros(3))
    np.testing.assert_array_equal(spmdc.ref.swap(x, (), jnp.ones(3)), [0, 0, 0])
    spmdc.ref.addupdate(x, 0, 5.0)
    np.testing.assert_array_equal(spmdc.ref.get(x, ()), [6, 1, 1])
    spmdc.ref.set(x, (), jnp.zeros(3))
    np.testing.assert_array_equal(x[...], [0, 0, 0])


def test_bad_writes_raise_as_jax():
    r = spmdc.new_ref(jnp.zeros(3))
    with pytest.raises(ValueError, match="Invalid shape for `swap`"):
        r[...] = 1.0                           # JAX does not broadcast a written value
    with pytest.raises(ValueError, match="Invalid dtype for `swap`"):
        r[...] = jnp.ones(3, jnp.float16)
    with pytest.raises(ValueError, match="Invalid shape for `addupdate`"):
        r.addupdate(1.0)
    with pytest.raises(TypeError, match="new_ref"):
        spmdc.new_ref([1, 2])
    np.testing.assert_array_equal(r[...], [0, 0, 0])


def test_empty_ref_has_the_type_asked_for():
    e = spmdc.empty_ref(spmdc.ShapeDtypeStruct((2,), jnp.int32))
    assert str(spmdc.typeof(e)) == "Ref{int32[2]}"
    e[...] = jnp.ones(2, jnp.int32)
    np.testing.assert_array_equal(spmdc.freeze(e), [1, 1])


# --- jit ---------------------------------------------------------------------------------------

def test_ref_argument_of_jit_is_updated_and_not_retraced():
    @spmdc.jit
    def f(x_ref, y):
        x_ref[...] += y
        return x_ref[...] * 2

    x = spmdc.new_ref(jnp.zeros(3))
    np.testing.assert_array_equal(f(x, 1.0), [2, 2, 2])
    np.testing.assert_array_equal(f(x, 1.0), [4, 4, 4])
    np.testing.assert_array_equal(x[...], [2, 2, 2])


def test_closed_over_ref_in_jit_sees_eager_writes():
    c = spmdc.new_ref(0.0)

    @spmdc.jit
    def g(v):
        c[...] += v
        return v

    g(1.0)
    g(2.0)
    assert float(c[...]) == 3.0
    c[...] = 10.0                    # a later call reads the ref's value now, not a constant
    g(1.0)
    assert float(c[...]) == 11.0


def test_refs_made_inside_jit_and_nested_jits():
    np.testing.assert_array_equal(
        spmdc.jit(lambda x: spmdc.new_ref(x)[...] * 2)(3.0), 6.0)
    e = spmdc.jit(lambda: _filled(spmdc.empty_ref(spmdc.ShapeDtypeStruct((2,), jnp.int32))))()
    np.testing.assert_array_equal(e, [1, 1])
    x, c = spmdc.new_ref(jnp.zeros(3)), spmdc.new_ref(0.0)

    @spmdc.jit
    def inner(r, y):
        r[...] += y
        c[...] += y
        return r[...]

    @spmdc.jit
    def outer(y):
        inner(x, y)
        return inner(x, y)

    np.testing.assert_array_equal(outer(5.0), [10, 10, 10])
    np.testing.assert_array_equal(x[...], [10, 10, 10])
    assert float(c[...]) == 10.0


def _filled(e):
    e[...] = jnp.ones(2, jnp.int32)
    return spmdc.freeze(e)


def test_jit_refuses_returned_and_aliased_refs_as_jax():
    with pytest.raises(ValueError, match="mutable array references cannot be returned"):
        spmdc.jit(lambda: spmdc.new_ref(1.0))()
    r = spmdc.new_ref(jnp.arange(5.0))
    with pytest.raises(ValueError, match="appeared at both a and b"):
        spmdc.jit(lambda a, b: a[...])(r, r)


# --- loops and branches (values recorded with JAX 0.10.2) ------------------------------------

def _fori_sum(x):
    r = spmdc.new_ref(0.0)

    def body(i, _):
        r[...] += x * i
    lax.fori_loop(0, 4, body, None)
    return r[...]


def test_fori_loop_writes_a_ref_and_differentiates():
    assert float(_fori_sum(2.0)) == 12.0
    assert float(spmdc.jit(_fori_sum)(2.0)) == 12.0
    assert float(spmdc.grad(_fori_sum)(2.0)) == 6.0
    np.testing.assert_array_equal(spmdc.vmap(_fori_sum)(jnp.arange(3.0)), [0, 6, 12])


def test_scan_while_and_cond_bodies_write_refs():
    def s(xs):
        r = spmdc.new_ref(0.0)

        def body(c, x):
            r[...] += x
            return c, r[...]
        return lax.scan(body, None, xs)[1], r[...]
    for fn in (s, spmdc.jit(s)):
        ys, total = fn(jnp.arange(4.0))
        np.testing.assert_array_equal(ys, [0, 1, 3, 6])
        assert float(total) == 6.0

    def w(n):
        r = spmdc.new_ref(0)

        def body(i):
            r[...] += i
            return i + 1
        lax.while_loop(lambda i: i < n, body, 0)
        return r[...]
    assert int(w(5)) == 10 and int(spmdc.jit(w)(5)) == 10

    def k(p, x):
        r = spmdc.new_ref(jnp.zeros(()))
        lax.cond(p, lambda: r.__setitem__(..., x), lambda: None)
        return r[...]
    assert float(spmdc.jit(k)(True, 3.0)) == 3.0 and float(spmdc.jit(k)(False, 3.0)) == 0.0


def test_eager_loops_over_an_eager_ref():
    e = spmdc.new_ref(jnp.zeros(3))
    lax.fori_loop(0, 3, lambda i, c: (e.__setitem__(i, i * 2.0), c)[1], 0)
    np.testing.assert_array_equal(e[...], [0, 2, 4])
    n = spmdc.new_ref(0)
    lax.fori_loop(0, jnp.int32(3), lambda i, c: (n.__setitem__(..., n[...] + i), c)[1], 0)
    assert int(n[...]) == 3


# --- grad, vmap --------------------------------------------------------------------------------

def test_grad_through_a_ref_made_inside():
    def g(x):
        r = spmdc.new_ref(x)
        r[...] = jnp.sin(r[...])
        return spmdc.freeze(r)
    np.testing.assert_allclose(spmdc.jacrev(g)(jnp.ones(2)), np.diag(np.cos([1.0, 1.0])),
                               rtol=1e-6)


def test_transformed_writes_to_outer_refs_are_refused_as_jax():
    cc = spmdc.new_ref(jnp.zeros(3))

    def vv(v):
        cc[...] += v
        return v
    with pytest.raises(Exception, match="vmapped value on an unbatched array reference"):
        spmdc.vmap(vv)(jnp.ones(3))
    np.testing.assert_array_equal(cc[...], [0, 0, 0])

    def hh(x, r):
        r[...] += x
        return (x * r[...]).sum()
    with pytest.raises(ValueError, match="argument args\\[1\\] is a mutable array reference"):
        spmdc.grad(hh, argnums=1)(jnp.ones(3), cc)


def test_grad_jvp_and_vjp_update_refs_they_close_over():
    x_ref = spmdc.new_ref(0)

    def f(x):
        def body(c, _):
            x_ref[...] += 1
            return c, ()
        x, () = lax.scan(body, x, (), length=3)
        return x
    assert float(spmdc.grad(f)(1.0)) == 1.0
    assert int(x_ref[...]) == 3
    s = spmdc.new_ref(0.0)

    def h(x):
        s[...] += 1.0
        return x * 2
    assert [float(v) for v in spmdc.jvp(h, (1.0,), (1.0,))] == [2.0, 2.0]
    assert float(spmdc.vjp(h, 1.0)[0]) == 2.0
    assert float(spmdc.jit(spmdc.grad(h))(1.0)) == 2.0
    assert float(s[...]) == 3.0


@pytest.mark.parametrize("inner_jit", [False, True])
@pytest.mark.parametrize("outer_jit", [False, True])
def test_grad_of_writes_in_nested_jit(inner_jit, outer_jit):
    def f(x):
        x_ref = spmdc.new_ref(x)

        def g():
            x_ref[...] = jnp.sin(x_ref[...]) + jnp.sin(x_ref[...])
        (spmdc.jit(g) if inner_jit else g)()
        return spmdc.freeze(x_ref)
    f = spmdc.jit(f) if outer_jit else f
    np.testing.assert_allclose(spmdc.grad(f)(2.0), 2 * np.cos(2.0), rtol=1e-6)


def test_vmap_batches_ref_arguments_and_reads_closed_over_refs():
    def f(x_ref, val):
        x_ref[...] += val
        x_ref[...] += val
    xs_ref = spmdc.new_ref(jnp.array([0, 0, 0]))
    spmdc.vmap(f)(xs_ref, jnp.arange(3))
    np.testing.assert_array_equal(xs_ref[...], [0, 2, 4])
    y_ref = spmdc.new_ref(1)

    def g(x_ref):
        x_ref[...] += y_ref[...]
        x_ref[...] += y_ref[...]
    xs_ref = spmdc.new_ref(jnp.array([0, 0, 0]))
    spmdc.vmap(g)(xs_ref)
    np.testing.assert_array_equal(xs_ref[...], [2, 2, 2])
    c = spmdc.new_ref(0)

    def k(v):
        c[...] += 1                    # an unbatched write to an unbatched ref
        return v * 2
    np.testing.assert_array_equal(spmdc.vmap(k)(jnp.arange(3)), [0, 2, 4])
    assert int(c[...]) == 1


def test_vmap_refuses_batched_writes_and_aliased_refs_as_jax():
    x_ref = spmdc.new_ref(jnp.zeros((), "int32"))

    def f(val):
        x_ref[...] += val
    with pytest.raises(Exception, match="unbatched array reference"):
        spmdc.vmap(f)(jnp.arange(3, dtype="int32"))
    assert int(x_ref[...]) == 0
    r = spmdc.new_ref(jnp.zeros((3, 3)))
    with pytest.raises(ValueError, match="only one reference to a mutable array"):
        spmdc.vmap(lambda ref_1, ref_2: None)(r, r)


def test_returning_a_ref_from_a_loop_or_branch_is_refused():
    with pytest.raises(ValueError, match="returned a mutable array reference of type"):
        lax.scan(lambda c, x: (spmdc.new_ref(c), x), 0, jnp.arange(3))
    with pytest.raises(ValueError, match="returned a mutable array reference of type"):
        lax.cond(True, lambda: spmdc.new_ref(1.0), lambda: spmdc.new_ref(2.0))
    r = spmdc.new_ref(0.0)
    with pytest.raises(ValueError, match="appeared at both x_ref and y_ref"):
        spmdc.jit(lambda x_ref, y_ref: x_ref[...] + y_ref[...])(r, r)


@pytest.mark.parametrize("jit", [False, True])
def test_cond_branches_write_the_same_closed_over_ref(jit):
    x_ref = spmdc.new_ref(0.0)

    def f(pred):
        def true_fun():
            x_ref[()] = 1.0

        def false_fun():
            x_ref[()] = 2.0
        lax.cond(pred, true_fun, false_fun)
    f = spmdc.jit(f) if jit else f
    f(True)
    assert float(x_ref[...]) == 1.0
    f(False)
    assert float(x_ref[...]) == 2.0


def test_free_ref_and_indexing_patterns():
    @spmdc.jit
    def f(x):
        ref = spmdc.empty_ref(spmdc.ShapeDtypeStruct((), "float32"))
        ref[...] = 2.0 * x
        result = ref[...]
        spmdc.free_ref(ref)
        return result
    assert float(f(3.0)) == 6.0 and float(spmdc.grad(f)(3.0)) == 2.0

    @spmdc.jit
    def g(x):
        ref = spmdc.new_ref(x)
        spmdc.free_ref(ref)
        return ref[...]
    with pytest.raises(ValueError, match="freed by jax.free_ref"):
        g(1.0)
    x = np.random.default_rng(0).uniform(size=(2, 3, 4)).astype(np.float32)
    r = spmdc.new_ref(x)
    for ix in [np.index_exp[1], np.index_exp[..., 0], np.index_exp[:, 1],
               np.index_exp[np.arange(2), ..., np.arange(2)]]:
        np.testing.assert_array_equal(r[ix], x[ix])


def test_refs_as_loop_carries_or_to_make_jaxpr_are_a_clear_type_error():
    x = spmdc.new_ref(jnp.zeros(3))

    def f(x_mut):
        x_mut[...] += 1.0
    with pytest.raises(TypeError, match="argument args\\[0\\] is a mutable array reference"):
        spmdc.make_jaxpr(f)(x)
    with pytest.raises(TypeError, match="is a mutable array reference"):
        lax.scan(lambda c, _: (c, None), x, None, length=1)
    np.testing.assert_array_equal(x[...], [0, 0, 0])


def test_implicit_casts_on_write_follow_jax():
    v = spmdc.new_ref(jnp.array(0, dtype="bfloat16"))
    v[...] += 1.0                              # a weak float into a bfloat16 ref
    assert float(v[...]) == 1.0 and v.dtype == jnp.bfloat16
    with pytest.raises(ValueError, match="Invalid dtype for `swap`"):
        spmdc.new_ref(jnp.array([0, 0, 0]))[...] += 1.0
    with pytest.raises(ValueError, match="Invalid dtype for `swap`"):
        spmdc.new_ref(jnp.zeros(2))[0] = 1     # a Python int into a float ref
    i = spmdc.new_ref(jnp.zeros(2, jnp.int8))
    i[0] = jnp.int32(3)                         # any integer into an integer ref
    np.testing.assert_array_equal(i[...], [3, 0])
    k = spmdc.new_ref(spmdc.random.key(0))
    k[...] = spmdc.random.fold_in(k[...], 1)
    np.testing.assert_array_equal(spmdc.random.key_data(k[...]),
                                  spmdc.random.key_data(spmdc.random.fold_in(
                                      spmdc.random.key(0), 1)))


@pytest.mark.parametrize("jit", [False, True])
def test_scan_over_a_ref_gives_the_body_refs_of_its_slices(jit):
    def body_fun(_, index_x):
        index, x = index_x
        x[...] += index
        return (), x[...]
    x_mut = spmdc.new_ref(np.arange(5))
    doit = lambda: lax.scan(body_fun, (), (np.arange(5), x_mut))  # noqa: E731
    _, xs = (spmdc.jit(doit) if jit else doit)()
    np.testing.assert_array_equal(xs, np.arange(5) * 2)
    np.testing.assert_array_equal(x_mut[...], np.arange(5) * 2)


def test_scan_over_a_ref_reversed_and_differentiated():
    r = spmdc.new_ref(jnp.zeros(4))

    def h(c, x):
        x[...] = c
        return c + 1.0, None
    lax.scan(h, 0.0, r, reverse=True)
    np.testing.assert_array_equal(r[...], [3, 2, 1, 0])

    def f(xs):
        xs_ref = spmdc.new_ref(xs)
        return lax.scan(lambda c, x_ref: (c + x_ref[...], None), 0.0, xs_ref)[0]
    np.testing.assert_array_equal(spmdc.grad(f)(jnp.arange(3.0)), [1, 1, 1])


def test_new_jit_wrappers_of_a_function_closing_over_a_ref_share_its_program():
    c = spmdc.new_ref(0.0)
    traces = []

    def step(v):
        traces.append(1)
        c[...] += v
        return v
    for _ in range(3):
        spmdc.jit(step)(1.0)
    assert float(c[...]) == 3.0
    # the first wrapper traces to find the ref, then the pure function; later wrappers
    # find the ref again, and the pure function's program is reused
    assert len(traces) == 4


def test_a_ref_used_as_an_array_is_a_type_error_not_a_hang():
    r = spmdc.new_ref(jnp.ones(3))
    with pytest.raises(TypeError, match="is not an array; read its value with ref"):
        jnp.sin(r)
    with pytest.raises(TypeError, match="is not an array"):
        spmdc.jit(lambda: jnp.sin(r))()
    with pytest.raises(TypeError, match="not iterable"):
        list(r)
    with pytest.raises(TypeError):
        r + 1


def test_jit_with_shardings_refuses_refs_clearly():
    r = spmdc.new_ref(jnp.zeros(2))
    sharding = spmdc.sharding.NamedSharding(spmdc.make_mesh((1,), ("x",)), spmdc.P())
    with pytest.raises(ValueError, match="without in_shardings/out_shardings"):
        spmdc.jit(lambda r: r[...], in_shardings=sharding)(r)


def test_jit_with_shardings_that_are_all_none_takes_refs():
    # Flax's nnx.jit passes out_shardings=(None, None, None): nothing asked for, as
    # no shardings at all
    r = spmdc.new_ref(jnp.zeros(2))

    def step(r, x):
        r[...] += x
        return r[...].sum()

    f = spmdc.jit(step, in_shardings=None, out_shardings=(None,))
    assert float(f(r, jnp.ones(2))) == 2.0 and float(f(r, jnp.ones(2))) == 4.0
    np.testing.assert_array_equal(np.asarray(r[...]), [2.0, 2.0])
