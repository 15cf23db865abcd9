"""The FFT: the primitive's rules (compiler/primitives/fft.py, Note [fft transposes]),
lax.fft, and spmdc.numpy.fft against NumPy and against JAX 0.10.2's recorded values and
gradients (tests/fft_cases.py)."""
from __future__ import annotations

import fft_cases
import numpy as np
import oracle
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from primcheck import check_lowering, check_vmap

import spmdc
import spmdc.numpy as jnp
from spmdc import lax
from spmdc.compiler.primitives.fft import fft_p

rng = np.random.default_rng(0)
X = rng.normal(size=(4, 6, 5)).astype(np.float32)
Z = (X + 1j * rng.normal(size=X.shape)).astype(np.complex64)


# --- against NumPy --------------------------------------------------------------------------------

NUMPY_CASES = {
    "fft": lambda m: m.fft.fft(X),
    "fft_n_axis": lambda m: m.fft.fft(X, n=8, axis=0),
    "fft_crop": lambda m: m.fft.fft(Z, n=3, axis=1, norm="forward"),
    "ifft_ortho": lambda m: m.fft.ifft(Z, norm="ortho"),
    "fft2_s": lambda m: m.fft.fft2(Z, s=(3, 7)),
    "ifft2_axes": lambda m: m.fft.ifft2(Z, axes=(0, 2)),
    "fftn_axes": lambda m: m.fft.fftn(X, axes=(0, 2), norm="forward"),
    "fftn_negative_axes": lambda m: m.fft.fftn(X, s=(4, 2), axes=(-1, 0)),
    "ifftn": lambda m: m.fft.ifftn(Z),
    "rfft": lambda m: m.fft.rfft(X, n=7),
    "rfft_ortho": lambda m: m.fft.rfft(X, axis=1, norm="ortho"),
    "irfft": lambda m: m.fft.irfft(Z, n=9, axis=1),
    "irfft_default_n": lambda m: m.fft.irfft(Z),
    "rfft2": lambda m: m.fft.rfft2(X),
    "irfft2": lambda m: m.fft.irfft2(Z, axes=(0, 1)),
    "rfftn": lambda m: m.fft.rfftn(X, s=(2, 3, 4), axes=(0, 1, 2)),
    "irfftn": lambda m: m.fft.irfftn(Z, norm="ortho"),
    "hfft": lambda m: m.fft.hfft(Z, n=6),
    "ihfft": lambda m: m.fft.ihfft(X, axis=0),
    "fftfreq": lambda m: m.fft.fftfreq(7, 0.3),
    "rfftfreq": lambda m: m.fft.rfftfreq(8, 2.0),
    "fftshift": lambda m: m.fft.fftshift(X, axes=(0, 1)),
    "ifftshift": lambda m: m.fft.ifftshift(X),
    "ifftshift_int_axis": lambda m: m.fft.ifftshift(X, axes=2),
    "integers": lambda m: m.fft.fft(np.arange(6)),
    "four_axes": lambda m: m.fft.fftn(np.arange(48, dtype=np.float32).reshape(2, 3, 2, 4)),
    "five_axes_inverse": lambda m: m.fft.irfftn(
        (np.arange(36) % 5 + 1j).astype(np.complex64).reshape(2, 3, 2, 1, 3)),
}


@pytest.mark.parametrize("name", sorted(NUMPY_CASES))
def test_numpy_fft_matches_numpy(name):
    got, want = NUMPY_CASES[name](jnp), NUMPY_CASES[name](np)
    got = np.asarray(got)
    assert got.shape == np.shape(want)
    # float32 in, complex64 / float32 out, as in JAX (NumPy computes in double)
    assert got.dtype == (np.complex64 if np.iscomplexobj(want) else np.float32)
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5 * np.abs(want).max())


@settings(max_examples=15)     # each example compiles two programs: keep the suite fast
@given(st.lists(st.integers(1, 6), min_size=1, max_size=4), st.data())
def test_fftn_and_its_inverse_over_random_shapes_and_axes(shape, data):
    x = np.random.default_rng(len(shape)).normal(size=shape).astype(np.float32)
    k = data.draw(st.integers(1, len(shape)))
    axes = data.draw(st.permutations(range(len(shape)))) [:k]
    s = data.draw(st.lists(st.integers(1, 7), min_size=k, max_size=k))
    norm = data.draw(st.sampled_from([None, "backward", "ortho", "forward"]))
    np.testing.assert_allclose(jnp.fft.fftn(x, s, axes, norm), np.fft.fftn(x, s, axes, norm),
                               rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(jnp.fft.rfftn(x, s, axes, norm),
                               np.fft.rfftn(x, s, axes, norm), rtol=1e-4, atol=1e-4)
    spec = np.fft.rfftn(x, axes=axes)
    np.testing.assert_allclose(jnp.fft.irfftn(spec.astype(np.complex64), s, axes, norm),
                               np.fft.irfftn(spec, s, axes, norm), rtol=1e-4, atol=1e-4)


def test_float64_stays_double_with_x64():
    with spmdc.enable_x64(True):
        x = rng.normal(size=(5, 4))
        out = jnp.fft.rfft(x)
        assert out.dtype == np.complex128
        np.testing.assert_allclose(out, np.fft.rfft(x), rtol=1e-12)
        assert jnp.fft.irfft(out).dtype == np.float64


# --- against JAX ----------------------------------------------------------------------------------

RECORDED = oracle.recorded_cases("fft_reference.json")


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_values_and_derivatives_match_jax(name):
    rec = RECORDED[name]
    scale = np.abs(oracle.recorded_value(rec)).max()
    oracle.assert_matches_recorded(fft_cases.cases(spmdc)[name](), rec, name, rtol=2e-5,
                                   atol=2e-5 * scale)


# --- the primitive's rules ------------------------------------------------------------------------

PRIM_CASES = [
    ("FFT", (6,), Z[..., 0]),
    ("IFFT", (6, 5), Z[0]),
    ("FFT", (4, 6, 5), Z),
    ("RFFT", (5,), X),
    ("RFFT", (6, 5), X),
    ("IRFFT", (6, 8), Z),
    ("IRFFT", (9,), Z),
]


@pytest.mark.parametrize("fft_type, lengths, x", PRIM_CASES)
def test_primitive_lowering_and_batching(fft_type, lengths, x):
    params = {"fft_type": fft_type, "fft_lengths": lengths}
    check_lowering(fft_p, [x], params, rtol=1e-5, atol=1e-5)
    batched = np.stack([x, 2 * x, -x], axis=1)
    check_vmap(fft_p, [batched], params, [1], 3, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("fft_type, lengths", [("RFFT", (8,)), ("RFFT", (3, 5)),
                                               ("IRFFT", (7,)), ("IRFFT", (4, 6))])
def test_real_transforms_transpose_as_finite_differences_say(fft_type, lengths):
    # the gradient of a real loss through RFFT / IRFFT, in float64, against central
    # differences of that loss
    with spmdc.enable_x64(True):
        r = np.random.default_rng(1)
        if fft_type == "RFFT":
            x = r.normal(size=(2, *lengths))
            wr, wi = r.normal(size=(2, 2, *lengths[:-1], lengths[-1] // 2 + 1))
        else:
            x = r.normal(size=(2, *lengths[:-1], lengths[-1] // 2 + 1))
            wr = r.normal(size=(2, *lengths))

        def loss(v):
            if fft_type == "RFFT":
                y = lax.fft(v, "rfft", lengths)
                return jnp.sum(jnp.real(y) * wr + jnp.imag(y) * wi)
            y = lax.fft(v * (1 + 0.5j), "irfft", lengths)   # a complex input from a real v
            return jnp.sum(y * wr + y ** 2)
        g = np.asarray(spmdc.grad(loss)(x))
        np.testing.assert_allclose(g, oracle.numeric_grad(loss, x), rtol=1e-6, atol=1e-6)


def test_jvp_of_a_linear_transform_is_the_transform():
    t = rng.normal(size=X.shape).astype(np.float32)
    out, tangent = spmdc.jvp(lambda x: jnp.fft.rfftn(x), (X,), (t,))
    np.testing.assert_allclose(tangent, np.fft.rfftn(t), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(out, np.fft.rfftn(X), rtol=1e-4, atol=1e-4)


def test_the_lowering_is_stablehlo_fft():
    text = spmdc.jit(lambda x: jnp.fft.rfft(x)).lower(X).as_text()
    assert "stablehlo.fft %arg0, type = RFFT, length = [5]" in text


# --- errors ---------------------------------------------------------------------------------------

def test_bad_arguments_are_clear_errors():
    for call, error, fragment in [
        (lambda: jnp.fft.rfft(Z), ValueError, "must be real"),
        (lambda: jnp.fft.fftn(X, axes=(0, 0)), ValueError, "repeated axes"),
        (lambda: jnp.fft.fft(X, norm="sideways"), ValueError, "Invalid norm"),
        (lambda: jnp.fft.fft(X, axis=(0, 1)), ValueError, "multiple axes"),
        (lambda: jnp.fft.fft2(X, axes=(0,)), ValueError, "only supports 2 axes"),
        (lambda: jnp.fft.fftn(X, s=(2, 3), axes=(0,)), ValueError, "different lengths"),
        (lambda: jnp.fft.fft(X, n=0), ValueError, "must be positive"),
        (lambda: jnp.fft.fftn(X, axes=(3,)), ValueError, "out of range"),
        (lambda: jnp.fft.fftfreq([4]), ValueError, "n must be an int"),
        (lambda: lax.fft(X, "dct", (5,)), ValueError, "unknown fft_type"),
        (lambda: lax.fft(X, "fft", (4, 6, 5, 1)), ValueError, "at most 3"),
        (lambda: lax.fft(Z, "fft", (7,)), Exception, "fft_lengths"),
    ]:
        with pytest.raises(error, match=fragment):
            call()
    np.testing.assert_allclose(jnp.fft.fft(X), np.fft.fft(X), rtol=1e-4, atol=1e-4)
