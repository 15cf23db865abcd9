"""jnp.einsum against np.einsum, ellipses included (Note [einsum ellipsis])."""
import numpy as np
import pytest

import spmdc as jax
import spmdc.numpy as jnp

CASES = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ij,jk", [(2, 3), (3, 4)]),
    ("ii->i", [(3, 3)]),
    ("ii", [(3, 3)]),
    ("ij,ij,ij->i", [(2, 3), (2, 3), (2, 3)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (4, 5)]),
    ("...ij,...jk", [(5, 2, 3, 4), (5, 1, 4, 2)]),
    ("i...->...", [(2, 3, 4)]),
    ("...i,...i", [(2, 3), (3,)]),
    ("ij...", [(2, 3, 4)]),
    ("...,...", [(2, 1), (3,)]),
    ("ii...->i...", [(3, 3, 2)]),
    ("...ii->...i", [(2, 3, 3)]),
    ("...j,j...->...", [(2, 3), (3,)]),
    ("...a,...a->...", [(2, 1, 3), (4, 3)]),
    ("ij,...->ij...", [(2, 3), ()]),
    ("...,...,...", [(2, 1, 3), (4, 1), (3,)]),
    ("a...c,c...->a...", [(2, 3, 4), (4, 3)]),
]


@pytest.mark.parametrize("spec,shapes", CASES)
def test_einsum_matches_numpy(spec, shapes):
    rng = np.random.default_rng(0)
    xs = [rng.normal(size=s).astype(np.float32) for s in shapes]
    want = np.einsum(spec, *xs)
    got = jnp.einsum(spec, *xs)
    assert got.shape == want.shape
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)
    jitted = jax.jit(lambda *a: jnp.einsum(spec, *a))(*xs)
    np.testing.assert_allclose(np.asarray(jitted), want, rtol=1e-5, atol=1e-5)


def test_einsum_grad_through_an_ellipsis():
    a = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    w = np.arange(3.0, dtype=np.float32)
    g = jax.grad(lambda x: jnp.einsum("...i,i->...", x, w).sum())(a)
    np.testing.assert_allclose(np.asarray(g), np.broadcast_to(w, a.shape))


@pytest.mark.parametrize("spec,shapes,fragment", [
    (".i", [(3,)], "ellipsis"),
    ("...i...", [(3, 3)], "ellipsis"),
    ("ij", [(3,)], "rank"),
    ("i,i", [(3,)], "operand specs"),
    ("i->j", [(3,)], "does not occur"),
    ("i,i", [(3,), (4,)], "sizes"),
    ("i-j", [(3, 3)], "subscript"),
    ("i>", [(3,)], "subscript"),
])
def test_einsum_errors(spec, shapes, fragment):
    with pytest.raises(ValueError, match=fragment):
        jnp.einsum(spec, *[np.ones(s, np.float32) for s in shapes])


def test_einsum_takes_digits_and_other_characters_as_labels():
    # JAX's einsum takes any character but ',', '-', '>' and '.' as a label (Flax's grouped
    # attention writes '...qhgd,...kh1d->...hgqk'); spmdc took letters only. The implicit
    # output sorts the labels by code point: 'i2' is the transpose, as JAX gives.
    rng = np.random.default_rng(0)
    q = rng.standard_normal((2, 3, 2, 2, 4)).astype(np.float32)
    k = rng.standard_normal((2, 5, 2, 1, 4)).astype(np.float32)
    want = np.einsum("...qhgd,...khzd->...hgqk", q, k)
    got = jax.jit(lambda a, b: jnp.einsum("...qhgd,...kh1d->...hgqk", a, b))(q, k)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(np.asarray(jnp.einsum("i2", x)), x.T)
    np.testing.assert_array_equal(np.asarray(jnp.einsum("ßĀ->Ā", x)), x.sum(0))


def test_einsum_options():
    x = np.ones((2, 3), np.int8)
    out = jnp.einsum("ij,jk->ik", x, x.T, preferred_element_type=np.int32)
    assert out.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(out), np.full((2, 2), 3))
    with pytest.raises(ValueError, match="out="):
        jnp.einsum("i->i", np.ones(3), out=np.ones(3))
    with pytest.raises(ValueError, match="precision"):
        jnp.einsum("i->i", np.ones(3), precision="bogus")
    jnp.einsum("i->i", np.ones(3), precision="highest", optimize=False)


def test_einsum_sublist_form():
    # NumPy's (and JAX's) interleaved form: each operand followed by its axis numbers, then
    # optionally the output's; spmdc raised "subscripts must be a string".
    rng = np.random.default_rng(0)
    a = rng.standard_normal((2, 3, 4)).astype(np.float32)
    b = rng.standard_normal((4, 5)).astype(np.float32)
    for args in [(a, [0, 1, 2], b, [2, 3], [0, 1, 3]), (a, [0, 1, 2], b, [2, 30]),
                 (a, [Ellipsis, 2], b, [2, 3], [Ellipsis, 3]), (a, [0, 1, 2], [2]),
                 (a, [0, 1, 2], a, [0, 1, 2], a, [0, 1, 2], [0])]:
        np.testing.assert_allclose(np.asarray(jnp.einsum(*args)), np.einsum(*args),
                                   rtol=1e-5, atol=1e-5)
    g = jax.grad(lambda x: jnp.einsum(x, [0, 1, 2], b, [2, 3], []))(a)
    np.testing.assert_allclose(np.asarray(g), np.broadcast_to(b.sum(1), a.shape), rtol=1e-5)
    assert jnp.einsum_path(a, [0, 1, 2], b, [2, 3], b.T, [3, 4])[0] == \
        jnp.einsum_path("abc,cd,de", a, b, b.T)[0]
    with pytest.raises(ValueError, match="sublist entry 52"):
        jnp.einsum(a, [0, 1, 52])


def test_a_library_dot_general_does_every_pairwise_contraction():
    # Flax's layers pass their own product as einsum's _dot_general (JAX's keyword); it is
    # called with lax.dot_general's arguments for each contraction, and its result is used.
    calls = []

    def doubled_dot(x, y, dimension_numbers, precision=None, preferred_element_type=None):
        calls.append((x.shape, y.shape, dimension_numbers, precision, preferred_element_type))
        return 2 * jax.lax.dot_general(x, y, dimension_numbers, precision,
                                       preferred_element_type=preferred_element_type)

    rng = np.random.default_rng(0)
    a, b, c = (rng.standard_normal(s).astype(np.float32) for s in ((2, 3), (3, 4), (4, 5)))
    got = jnp.einsum("ij,jk,kl->il", a, b, c, _dot_general=doubled_dot)
    np.testing.assert_allclose(np.asarray(got), 4 * (a @ b @ c), rtol=1e-5)
    assert len(calls) == 2 and all(call[3] is None for call in calls)
    # JAX passes the operands' promoted type when none is asked for (Flax's fp8 einsum
    # quantizes its cotangent to it).
    assert all(call[4] == np.float32 for call in calls)
    jitted = jax.jit(lambda x, y: jnp.einsum("bij,bjk->bik", x, y, _dot_general=doubled_dot,
                                             preferred_element_type=jnp.float32))
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    y = rng.standard_normal((2, 4, 5)).astype(np.float32)
    np.testing.assert_allclose(np.asarray(jitted(x, y)), 2 * np.matmul(x, y), rtol=1e-5)
    assert calls[-1][2] == (((2,), (1,)), ((0,), (0,)))
    with pytest.raises(TypeError, match="_dot_general must be a function"):
        jnp.einsum("ij,jk", a, b, _dot_general="dot")


def test_broadcast_to_takes_jax_keyword_names():
    got = jnp.broadcast_to(array=jnp.arange(3), shape=(2, 3))
    np.testing.assert_array_equal(np.asarray(got), np.broadcast_to(np.arange(3), (2, 3)))
