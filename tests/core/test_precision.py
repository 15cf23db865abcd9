"""lax.Precision and ``precision=``: accepted in every form JAX's PrecisionLike allows,
lowered to dot_general's and convolution's precision_config, and kept through vmap, grad
and jvp (Note [dot precision])."""
from __future__ import annotations

import re

import numpy as np
import oracle
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc import lax
from spmdc.core.precision import canonicalize_precision

X = np.arange(6, dtype=np.float32).reshape(2, 3) / 7
Y = np.arange(12, dtype=np.float32).reshape(3, 4) / 5


def lowered(f, *args) -> str:
    return spmdc.jit(f).lower(*args).as_text()


def precisions(text: str, op: str = "dot_general") -> list[str]:
    """The precision list of each ``op`` in the StableHLO text ('' where there is none)."""
    out = []
    for line in text.splitlines():
        if f"stablehlo.{op}" in line:
            m = re.search(r"precision = \[([A-Z, ]+)\]", line)        # dot_general's form
            names = re.findall(r"#stablehlo<precision (\w+)>", line)   # convolution's form
            out.append(m.group(1) if m else ", ".join(names))
    return out


@pytest.mark.parametrize("value, want", [
    (None, None),
    (lax.Precision.HIGHEST, ("HIGHEST", "HIGHEST")),
    ("highest", ("HIGHEST", "HIGHEST")),
    ("float32", ("HIGHEST", "HIGHEST")),
    ("tensorfloat32", ("HIGH", "HIGH")),
    ("bfloat16_3x", ("HIGH", "HIGH")),
    ("fastest", ("DEFAULT", "DEFAULT")),
    ("bfloat16", ("DEFAULT", "DEFAULT")),
    (("highest", "default"), ("HIGHEST", "DEFAULT")),
    ([lax.Precision.HIGH, lax.Precision.DEFAULT], ("HIGH", "DEFAULT")),
])
def test_canonical_precision(value, want):
    assert canonicalize_precision("dot", value) == want


def test_precision_enum_like_jax():
    assert lax.Precision("high") is lax.Precision.HIGH
    assert lax.Precision(None) is lax.Precision.DEFAULT
    assert [p.name for p in lax.Precision] == ["DEFAULT", "HIGH", "HIGHEST"]
    assert str(lax.Precision.HIGHEST) == "HIGHEST"
    assert repr(lax.Precision.HIGH) == "Precision.HIGH"


@pytest.mark.parametrize("value, error, fragment", [
    ("fast", ValueError, "unknown precision 'fast'"),
    ("HIGHEST", ValueError, "unknown precision"),       # JAX takes lower-case aliases only
    (("high",), ValueError, "one value or a pair"),
    (("high", None), ValueError, "may not contain None"),
    (3, ValueError, "unknown precision 3"),
    ("TF32_TF32_F32", ValueError, "not supported by dot_general on CPU"),
    (lax.DotAlgorithm(np.float32, np.float32, np.float32), ValueError,
     "not supported by dot_general on CPU"),
])
def test_bad_precision_is_a_clear_error(value, error, fragment):
    with pytest.raises(error, match=re.escape(fragment)):
        lax.dot(X, Y, precision=value)


CALLS = {
    "lax.dot": lambda a, b, p: lax.dot(a, b, precision=p),
    "lax.dot_general": lambda a, b, p: lax.dot_general(a, b, (((1,), (0,)), ((), ())),
                                                       precision=p),
    "jnp.matmul": lambda a, b, p: jnp.matmul(a, b, precision=p),
    "jnp.dot": lambda a, b, p: jnp.dot(a, b, precision=p),
    "jnp.tensordot": lambda a, b, p: jnp.tensordot(a, b, 1, precision=p),
    "jnp.einsum": lambda a, b, p: jnp.einsum("ij,jk->ik", a, b, precision=p),
    "jnp.inner": lambda a, b, p: jnp.inner(a, b.T, precision=p),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_precision_is_lowered(name):
    call = CALLS[name]
    assert precisions(lowered(lambda a, b: call(a, b, "highest"), X, Y)) == ["HIGHEST, HIGHEST"]
    assert precisions(lowered(lambda a, b: call(a, b, None), X, Y)) == [""]
    np.testing.assert_allclose(spmdc.jit(lambda a, b: call(a, b, "highest"))(X, Y), X @ Y,
                               rtol=1e-6)


def test_pair_keeps_operand_order():
    text = lowered(lambda a, b: lax.dot(a, b, precision=("high", "highest")), X, Y)
    assert precisions(text) == ["HIGH, HIGHEST"]


def test_grad_dots_keep_the_precision():
    def loss(a, b):
        return jnp.sum(jnp.tanh(jnp.matmul(a, b, precision=lax.Precision.HIGHEST)))
    text = lowered(spmdc.grad(loss, argnums=(0, 1)), X, Y)
    found = precisions(text)
    assert len(found) == 3 and set(found) == {"HIGHEST, HIGHEST"}
    ga, gb = spmdc.grad(loss, argnums=(0, 1))(X, Y)
    ct = 1 - np.tanh(X @ Y) ** 2
    np.testing.assert_allclose(ga, ct @ Y.T, rtol=1e-5)
    np.testing.assert_allclose(gb, X.T @ ct, rtol=1e-5)


def test_vmap_and_jvp_keep_the_precision():
    xs = np.stack([X, 2 * X])
    f = spmdc.vmap(lambda a: lax.dot(a, Y, precision="high"))
    assert precisions(lowered(f, xs)) == ["HIGH, HIGH"]
    np.testing.assert_allclose(f(xs), xs @ Y, rtol=1e-6)
    g = lambda a: spmdc.jvp(lambda t: lax.dot(t, Y, precision="highest"), (a,), (a,))  # noqa: E731
    found = precisions(lowered(g, X))
    assert found and set(found) == {"HIGHEST, HIGHEST"}


def test_conv_precision_is_lowered_and_kept_by_grad():
    lhs = np.arange(2 * 3 * 6, dtype=np.float32).reshape(2, 3, 6) / 10
    rhs = np.arange(4 * 3 * 2, dtype=np.float32).reshape(4, 3, 2) / 10

    def conv(a, b, p):
        return lax.conv_general_dilated(a, b, (1,), "VALID", precision=p)
    assert precisions(lowered(lambda a, b: conv(a, b, "highest"), lhs, rhs),
                      "convolution") == ["HIGHEST, HIGHEST"]
    assert precisions(lowered(lambda a, b: conv(a, b, None), lhs, rhs), "convolution") == [""]
    text = lowered(spmdc.grad(lambda a, b: jnp.sum(conv(a, b, ("high", "highest"))),
                              argnums=(0, 1)), lhs, rhs)
    found = precisions(text, "convolution")
    assert len(found) == 2 and set(found) == {"HIGH, HIGHEST"}
    np.testing.assert_allclose(conv(lhs, rhs, "highest"), conv(lhs, rhs, None), rtol=1e-6)


def test_jnp_convolve_precision_is_lowered():
    a, v = np.arange(5.0, dtype=np.float32), np.array([1.0, 2.0, 0.5], np.float32)
    text = lowered(lambda a, v: jnp.convolve(a, v, precision="highest"), a, v)
    assert precisions(text, "convolution") == ["HIGHEST, HIGHEST"]


def test_preferred_element_type():
    a = np.arange(6, dtype=np.int8).reshape(2, 3)
    b = np.full((3, 2), 100, np.int8)
    for f in (lambda: jnp.matmul(a, b, preferred_element_type=np.int32),
              lambda: jnp.dot(a, b, preferred_element_type=np.int32),
              lambda: lax.dot(a, b, preferred_element_type=np.int32)):
        out = f()
        assert out.dtype == np.int32
        np.testing.assert_array_equal(out, a.astype(np.int32) @ b.astype(np.int32))


def test_dump_shows_the_precision_and_round_trips():
    from spmdc.compiler.ir import parse
    text = str(spmdc.make_ir(lambda a, b: lax.dot(a, b, precision="highest"))(X, Y))
    assert "precision=('HIGHEST', 'HIGHEST')" in text
    assert str(parse(text)) == text


def test_default_matmul_precision_config_and_context():
    f = spmdc.jit(lambda a, b: a @ b)
    assert precisions(f.lower(X, Y).as_text()) == [""]
    out = f(X, Y)
    with spmdc.default_matmul_precision("float32"):
        assert precisions(f.lower(X, Y).as_text()) == ["HIGHEST, HIGHEST"]
        # a program traced without the default is not reused under it (Note [default precision])
        np.testing.assert_allclose(f(X, Y), out, rtol=1e-6)
        assert spmdc.config.jax_default_matmul_precision == ("HIGHEST", "HIGHEST")
        # an explicit precision wins
        g = lambda a, b: lax.dot(a, b, precision="high")  # noqa: E731
        assert precisions(spmdc.jit(g).lower(X, Y).as_text()) == ["HIGH, HIGH"]
    assert spmdc.config.jax_default_matmul_precision is None
    assert precisions(f.lower(X, Y).as_text()) == [""]
    spmdc.config.update("jax_default_matmul_precision", "tensorfloat32")
    try:
        traced = []
        h = spmdc.jit(lambda a, b: traced.append(1) or jnp.matmul(a, b))
        h(X, Y)
        h(X, Y)
        assert precisions(h.lower(X, Y).as_text()) == ["HIGH, HIGH"]
        assert len(traced) == 2             # the call traced once; lower() traces again
    finally:
        spmdc.config.update("jax_default_matmul_precision", None)
    h(X, Y)
    assert len(traced) == 3                 # a new setting, a new program
    with pytest.raises(ValueError, match="unknown precision"):
        spmdc.config.update("jax_default_matmul_precision", "fast")
    assert spmdc.config.jax_default_matmul_precision is None


# --- dot algorithms (Note [dot algorithms]) ---------------------------------------------------

ALGORITHMS = oracle.recorded("dot_algorithms.npz")
PRESETS = sorted({k.split("/")[0] for k in ALGORITHMS.files if "/" in k})


@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
def test_dot_algorithm_presets_give_jax_results(preset, dtype):
    x, y = (ALGORITHMS[k].astype(jnp.dtype(dtype)) for k in ("x", "y"))
    f = spmdc.jit(lambda a, b: lax.dot(a, b, precision=preset))
    out = f(x, y)
    assert out.dtype == jnp.dtype(dtype)
    np.testing.assert_array_equal(np.asarray(out).astype(np.float32),
                                  ALGORITHMS[f"{preset}/{dtype}"])
    text = f.lower(x, y).as_text()
    if preset == "DEFAULT":
        assert "algorithm" not in text and precisions(text) == ["DEFAULT, DEFAULT"]
    else:
        assert "algorithm = <" in text and precisions(text) == ["DEFAULT, DEFAULT"]


def test_dot_algorithm_through_grad_vmap_and_products():
    preset = lax.DotAlgorithmPreset.BF16_BF16_F32_X3
    grad = spmdc.jit(spmdc.grad(lambda a: jnp.sum(jnp.matmul(a, Y, precision=preset))))
    text = grad.lower(X).as_text()
    assert "num_primitive_operations = 3" in text
    np.testing.assert_allclose(grad(X), np.ones((2, 4), np.float32) @ Y.T, rtol=1e-6)
    f = spmdc.vmap(lambda a: jnp.einsum("ij,jk->ik", a, Y, precision="F32_F32_F32"))
    xs = np.stack([X, 2 * X])
    assert "algorithm = <" in spmdc.jit(f).lower(xs).as_text()
    np.testing.assert_allclose(f(xs), xs @ Y, rtol=1e-6)
    dump = str(spmdc.make_ir(lambda a, b: lax.dot(a, b, precision=preset))(X, Y))
    assert "algorithm=('bf16', 'bf16', 'f32', 1, 1, 3, False)" in dump
    from spmdc.compiler.ir import parse
    assert str(parse(dump)) == dump
    with pytest.raises(ValueError, match="does not apply to convolutions"):
        lax.conv_general_dilated(np.ones((1, 1, 4), np.float32), np.ones((1, 1, 2), np.float32),
                                 (1,), "VALID", precision="F32_F32_F32")
    with pytest.raises(ValueError, match="needs 64-bit types"):
        lax.dot(X, Y, precision="F64_F64_F64")


def test_preferred_element_type_follows_jax():
    half = np.full(2, 0.5, np.float32)
    # floating operands, integer type: JAX contracts in floating point, then converts
    for f in (lambda a, b, **k: lax.dot(a, b, **k), jnp.dot, jnp.matmul, jnp.inner,
              lambda a, b, **k: jnp.tensordot(a, b, 1, **k)):
        out = f(half, np.ones(2, np.float32), preferred_element_type=np.int32)
        assert out.dtype == np.int32 and int(out) == 1
    two = np.full(2, 2.0, np.float32)
    out = spmdc.jit(lambda a: lax.dot(a, two, preferred_element_type=np.int32))(
        np.full(2, 0.75, np.float32))
    assert int(out) == 3
    # integers: signedness may change, never narrower
    got = lax.dot(np.array([-1, 3], np.int32), np.array([2, 1], np.int32),
                  preferred_element_type=np.uint32)
    assert got.dtype == np.uint32 and int(got) == 1
    with pytest.raises(TypeError, match="must not be narrower"):
        jnp.dot(np.ones(2, np.int32), np.ones(2, np.int32), preferred_element_type=np.int16)


def test_multi_dot_and_vecdot_lower_the_precision():
    a, b, c = X, Y, np.ones((4, 2), np.float32)
    text = lowered(lambda a, b, c: jnp.linalg.multi_dot([a, b, c], precision="highest"), a, b, c)
    assert precisions(text) == ["HIGHEST, HIGHEST"] * 2
    text = lowered(lambda a, b: jnp.vecdot(a, b, precision="high"), X, X)
    assert set(precisions(text)) == {"HIGH, HIGH"}


def test_products_keep_their_keyword_arguments():
    # regression: the preferred_element_type wrapper dropped tensordot's axes= keyword
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    np.testing.assert_allclose(jnp.tensordot(a, a, axes=([1, 2], [1, 2]), precision="highest"),
                               np.tensordot(a, a, axes=([1, 2], [1, 2])), rtol=1e-6)
    assert jnp.tensordot.__name__ == "tensordot" and "axes" in str(
        __import__("inspect").signature(jnp.tensordot))


def test_products_take_precision_and_preferred_element_type():
    ones = np.ones((2, 3), np.int8)
    for f, b in ((jnp.dot, ones.T), (jnp.matmul, ones.T), (jnp.inner, ones),
                 (lambda x, y, **k: jnp.tensordot(x, y, 1, **k), ones.T)):
        out = f(ones, b, precision=lax.Precision.HIGHEST, preferred_element_type=np.int32)
        assert out.dtype == np.int32 and int(np.asarray(out).ravel()[0]) == 3
    assert lax.Precision("highest") is lax.Precision.HIGHEST
    assert lax.Precision("bfloat16") is lax.Precision.DEFAULT
    with pytest.raises(ValueError, match="unknown precision"):
        jnp.dot(np.ones(2), np.ones(2), precision="sloppy")
