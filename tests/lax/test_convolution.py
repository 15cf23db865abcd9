"""conv_general_dilated (compiler/primitives/conv.py, spmdc/lax/convolution.py): the
primitive against its NumPy reference (lowering, vmap with the batch on either or both operands and
with groups, grad vs finite differences, jvp), hypothesis over small shapes and every
option; the frontend against values recorded from JAX 0.10.2 (`tools/record.py conv`);
shape and argument errors; conv_general_dilated_local against loops."""
from __future__ import annotations

import json

import numpy as np
import oracle
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from primcheck import check_grad, check_lowering, check_vmap

import spmdc
import spmdc.numpy as jnp
from spmdc import lax
from spmdc.compiler.primitives.conv import conv_general_dilated_p as conv_p

FEW = settings(max_examples=8, deadline=None)
DATA = oracle.recorded("conv_reference.npz")


@st.composite
def conv_cases(draw, max_spatial=2):
    """(lhs shape, rhs shape, params) of a valid convolution, small, any layout."""
    nsp = draw(st.integers(1, max_spatial))
    n = nsp + 2
    groups = draw(st.sampled_from(["none", "feature", "batch"]))
    g = draw(st.integers(2, 3)) if groups != "none" else 1
    G, B = (g, 1) if groups == "feature" else (1, g) if groups == "batch" else (1, 1)
    batch = B * draw(st.integers(1, 2))
    in_per_group = draw(st.integers(1, 2))
    out_features = G * B * draw(st.integers(1, 2))
    window = [draw(st.integers(1, 3)) for _ in range(nsp)]
    strides = tuple(draw(st.integers(1, 2)) for _ in range(nsp))
    lhs_dil = tuple(draw(st.integers(1, 2)) for _ in range(nsp))
    rhs_dil = tuple(draw(st.integers(1, 2)) for _ in range(nsp))
    sizes = [draw(st.integers(1, 5)) for _ in range(nsp)]
    padding = tuple((draw(st.integers(-1, 2)), draw(st.integers(-1, 2))) for _ in range(nsp))
    padding = tuple((lo if s + lo + hi >= 0 else 0, hi if s + lo + hi >= 0 else 0)
                    for (lo, hi), s in zip(padding, sizes, strict=True))
    specs = tuple(tuple(draw(st.permutations(range(n)))) for _ in range(3))
    canon_lhs = (batch, G * in_per_group, *sizes)
    canon_rhs = (out_features, in_per_group, *window)
    lhs_shape = [0] * n
    rhs_shape = [0] * n
    for i in range(n):
        lhs_shape[specs[0][i]] = canon_lhs[i]
        rhs_shape[specs[1][i]] = canon_rhs[i]
    params = dict(window_strides=strides, padding=padding, lhs_dilation=lhs_dil,
                  rhs_dilation=rhs_dil, dimension_numbers=specs, feature_group_count=G,
                  batch_group_count=B)
    return tuple(lhs_shape), tuple(rhs_shape), params


def _normal(rng, shape, dtype=np.float32):
    return rng.normal(size=shape).astype(dtype)


@FEW
@given(case=conv_cases(), seed=st.integers(0, 2**31),
       dtype=st.sampled_from([np.float32, np.float16, np.int32]))
def test_conv_lowering_matches_reference(case, seed, dtype):
    lhs_shape, rhs_shape, params = case
    rng = np.random.default_rng(seed)
    if dtype == np.int32:
        args = [rng.integers(-4, 5, s).astype(dtype) for s in (lhs_shape, rhs_shape)]
    else:
        args = [_normal(rng, s, dtype) for s in (lhs_shape, rhs_shape)]
    tol = 1e-2 if dtype == np.float16 else 1e-4
    check_lowering(conv_p, args, params, rtol=tol, atol=tol)


def test_conv_lowering_integer_and_complex():
    rng = np.random.default_rng(0)
    params = dict(window_strides=(1, 2), padding=((1, 0), (0, 1)), lhs_dilation=(1, 1),
                  rhs_dilation=(1, 1), dimension_numbers=((0, 1, 2, 3),) * 3,
                  feature_group_count=1, batch_group_count=1)
    x = rng.integers(-5, 5, (2, 3, 4, 5)).astype(np.int32)
    w = rng.integers(-5, 5, (2, 3, 2, 2)).astype(np.int32)
    check_lowering(conv_p, [x, w], params)
    xc = (_normal(rng, (2, 3, 4, 5)) + 1j * _normal(rng, (2, 3, 4, 5))).astype(np.complex64)
    wc = (_normal(rng, (2, 3, 2, 2)) + 1j * _normal(rng, (2, 3, 2, 2))).astype(np.complex64)
    check_lowering(conv_p, [xc, wc], params, rtol=1e-4, atol=1e-4)


@FEW
@given(case=conv_cases(), which=st.sampled_from(["lhs", "rhs", "both"]),
       seed=st.integers(0, 2**31), data=st.data())
def test_conv_vmap(case, which, seed, data):
    lhs_shape, rhs_shape, params = case
    rng = np.random.default_rng(seed)
    size = 2
    dims = [data.draw(st.integers(0, len(lhs_shape))) if which != "rhs" else None,
            data.draw(st.integers(0, len(rhs_shape))) if which != "lhs" else None]
    args = []
    for shape, d in zip((lhs_shape, rhs_shape), dims, strict=True):
        shape = list(shape)
        if d is not None:
            shape.insert(d, size)
        args.append(_normal(rng, tuple(shape)))
    check_vmap(conv_p, args, params, dims, size, rtol=1e-4, atol=1e-4)


@FEW
@given(case=conv_cases(), seed=st.integers(0, 2**31))
def test_conv_grad_and_jvp(case, seed):
    lhs_shape, rhs_shape, params = case
    rng = np.random.default_rng(seed)
    check_grad(conv_p, [rng.normal(size=lhs_shape), rng.normal(size=rhs_shape)], params,
               rtol=1e-4, atol=1e-5)


def test_conv_second_order_grad():
    rng = np.random.default_rng(1)
    params = dict(window_strides=(2,), padding=((1, 1),), lhs_dilation=(1,),
                  rhs_dilation=(2,), dimension_numbers=((0, 2, 1), (2, 1, 0), (0, 2, 1)),
                  feature_group_count=2, batch_group_count=1)
    check_grad(conv_p, [rng.normal(size=(2, 5, 4)), rng.normal(size=(2, 2, 4))], params,
               second_order=True)


# --- the frontend against JAX ----------------------------------------------------------------

def _cases(table):
    return sorted({k.split(".")[1] for k in DATA.files if k.startswith(table + ".")
                   and k.endswith(".kwargs")})


def _kwargs(key):
    kw = json.loads(str(DATA[f"{key}.kwargs"]))
    for name, v in kw.items():
        if name == "padding" and isinstance(v, list):
            kw[name] = [tuple(p) for p in v]
    if isinstance(kw.get("dimension_numbers"), list) and not isinstance(
            kw["dimension_numbers"][0], str):
        kw["dimension_numbers"] = lax.ConvDimensionNumbers(*map(tuple, kw["dimension_numbers"]))
    return kw


@pytest.mark.parametrize("table,name", [("conv", n) for n in _cases("conv")]
                         + [("conv_transpose", n) for n in _cases("conv_transpose")])
def test_same_as_jax(table, name):
    key = f"{table}.{name}"
    fn = lax.conv_general_dilated if table == "conv" else lax.conv_transpose
    kw = _kwargs(key)
    x, w, weights = DATA[f"{key}.x"], DATA[f"{key}.w"], DATA[f"{key}.weights"]
    f = spmdc.jit(lambda a, b: fn(a, b, **kw))
    np.testing.assert_allclose(f(x, w), DATA[f"{key}.out"], rtol=1e-5, atol=1e-5)
    gx, gw = spmdc.jit(spmdc.grad(lambda a, b: jnp.sum(fn(a, b, **kw) * weights),
                                  argnums=(0, 1)))(x, w)
    np.testing.assert_allclose(gx, DATA[f"{key}.gx"], rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(gw, DATA[f"{key}.gw"], rtol=1e-4, atol=1e-4)


def test_preferred_element_type_int8_to_int32():
    x, w = DATA["conv.int8_preferred.x"], DATA["conv.int8_preferred.w"]
    y = lax.conv_general_dilated(x, w, (1, 1), "SAME", preferred_element_type=np.int32)
    assert y.dtype == np.int32
    np.testing.assert_array_equal(y, DATA["conv.int8_preferred.out"])


def test_convenience_forms_and_dimension_numbers():
    rng = np.random.default_rng(0)
    x, w = _normal(rng, (2, 3, 6, 5)), _normal(rng, (4, 3, 3, 2))
    full = lax.conv_general_dilated(x, w, (1, 2), "SAME")
    np.testing.assert_allclose(lax.conv(x, w, (1, 2), "SAME"), full, rtol=1e-6)
    np.testing.assert_allclose(
        lax.conv_with_general_padding(x, w, (1, 1), ((1, 1), (0, 2)), None, (2, 1)),
        lax.conv_general_dilated(x, w, (1, 1), ((1, 1), (0, 2)), rhs_dilation=(2, 1)),
        rtol=1e-6)
    dn = lax.conv_dimension_numbers((2, 6, 5, 3), (3, 2, 3, 4), ("NHWC", "HWIO", "NHWC"))
    assert dn == lax.ConvDimensionNumbers((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))
    assert lax.conv_dimension_numbers((1, 2, 3), (1, 2, 3), None).lhs_spec == (0, 1, 2)
    assert lax.padtype_to_pads((5, 6), (3, 2), (2, 2), "SAME") == [(1, 1), (0, 0)]
    assert lax.padtype_to_pads((4,), (3,), (1,), "SAME_LOWER") == [(1, 1)]
    assert lax.padtype_to_pads((4,), (2,), (1,), "SAME_LOWER") == [(1, 0)]


@pytest.mark.devices(8)
def test_conv_under_vmap_and_pmap_frontend():
    rng = np.random.default_rng(0)
    xs, w = _normal(rng, (8, 2, 5, 5, 3)), _normal(rng, (3, 3, 3, 4))

    def f(x):
        return lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                        dimension_numbers=("NHWC", "HWIO", "NHWC"))
    want = np.stack([f(x) for x in xs])
    np.testing.assert_allclose(spmdc.vmap(f)(xs), want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(spmdc.pmap(f)(xs), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("call,error,fragment", [
    (lambda x, w: lax.conv_general_dilated(x, w.astype(np.int32), (1, 1), "SAME"),
     TypeError, "same dtypes"),
    (lambda x, w: lax.conv_general_dilated(x, w, (1,), "SAME"), ValueError,
     "window_strides has 1 entries"),
    (lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "FULL"), ValueError,
     "unrecognised padding"),
    (lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME", lhs_dilation=(2, 1)),
     ValueError, "string padding"),
    (lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME", feature_group_count=2),
     TypeError, "feature_group_count"),
    (lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                           dimension_numbers=("NHWC", "HWIO", "NHW")),
     TypeError, "dimension_numbers[2]"),
    (lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                           dimension_numbers=("NHWC", "HWOO", "NHWC")),
     TypeError, "exactly once"),
    (lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME", precision="bogus"),
     ValueError, "unknown precision"),
    (lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                           preferred_element_type=np.float16),
     TypeError, "narrower"),
    (lambda x, w: lax.conv_general_dilated(x, w[:, :2], (1, 1), "VALID"), TypeError,
     "rhs input feature dimension"),
    (lambda x, w: lax.conv_general_dilated(x, w, (0, 1), "VALID"), TypeError,
     "window_strides must be positive"),
])
def test_errors(call, error, fragment):
    rng = np.random.default_rng(0)
    x, w = _normal(rng, (2, 3, 6, 5)), _normal(rng, (4, 3, 3, 2))
    with pytest.raises(error, match=None) as info:
        call(x, w)
    assert fragment in str(info.value)
    with pytest.raises(error) as info:
        spmdc.jit(call)(x, w)
    assert fragment in str(info.value)


@pytest.mark.parametrize("name", ["patches_nchw", "patches_nhwc"])
def test_conv_general_dilated_patches_same_as_jax(name):
    kw = json.loads(str(DATA[f"patches.{name}.kwargs"]))
    x = DATA[f"patches.{name}.x"]
    np.testing.assert_allclose(lax.conv_general_dilated_patches(x, **kw),
                               DATA[f"patches.{name}.out"], rtol=1e-6, atol=1e-6)


def _local_reference(x, w, fs, strides, padding, rhs_dilation=(1, 1)):
    """NCHW/OIHW by loops: output position (i, j) contracts its (dilated) window of the
    padded input, features major, with w[:, :, i, j]."""
    n, c, h, wd = x.shape
    (plo, phi), (qlo, qhi) = padding
    xp = np.pad(x, ((0, 0), (0, 0), (plo, phi), (qlo, qhi)))
    oh, ow = w.shape[2:]
    out = np.zeros((n, w.shape[0], oh, ow), np.float64)
    for i in range(oh):
        for j in range(ow):
            rows = i * strides[0] + rhs_dilation[0] * np.arange(fs[0])
            cols = j * strides[1] + rhs_dilation[1] * np.arange(fs[1])
            patch = xp[:, :, rows][:, :, :, cols].reshape(n, -1)     # (n, c*fh*fw)
            out[:, :, i, j] = patch @ w[:, :, i, j].T
    return out


def test_conv_general_dilated_local_matches_loops_and_layouts():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 3, 6, 5)).astype(np.float32)
    fs = (3, 2)
    w = rng.normal(size=(4, 3 * 6, 3, 2)).astype(np.float32)     # the output is 3 x 2
    pads = ((1, 1), (0, 1))
    out = lax.conv_general_dilated_local(x, w, (2, 2), pads, fs, rhs_dilation=(1, 2),
                                         precision="highest")
    np.testing.assert_allclose(out, _local_reference(x, w, fs, (2, 2), pads, (1, 2)),
                               rtol=1e-5, atol=1e-5)
    # the same in NHWC / HWIO layouts
    out_nhwc = lax.conv_general_dilated_local(
        np.moveaxis(x, 1, -1), np.moveaxis(w, (0, 1), (-1, -2)), (2, 2), pads, fs,
        rhs_dilation=(1, 2), dimension_numbers=("NHWC", "HWIO", "NHWC"))
    np.testing.assert_allclose(np.moveaxis(np.asarray(out_nhwc), -1, 1), out, rtol=1e-5,
                               atol=1e-5)
    text = spmdc.jit(lambda x, w: lax.conv_general_dilated_local(
        x, w, (2, 2), pads, fs, rhs_dilation=(1, 2), precision="highest")).lower(x, w).as_text()
    assert "precision = [HIGHEST, HIGHEST]" in text


def test_conv_general_dilated_local_grad_and_vmap():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(1, 2, 4, 4)).astype(np.float32)
    w = rng.normal(size=(3, 2 * 4, 3, 3)).astype(np.float32)
    f = lambda x, w: lax.conv_general_dilated_local(x, w, (1, 1), "VALID", (2, 2))  # noqa
    ct = rng.normal(size=(1, 3, 3, 3)).astype(np.float32)
    gw = spmdc.grad(lambda w: jnp.sum(f(x, w) * ct))(w)
    patches = np.asarray(lax.conv_general_dilated_patches(x, (2, 2), (1, 1), "VALID"))
    np.testing.assert_allclose(gw, np.einsum("nkhw,nohw->okhw", patches, ct), rtol=1e-5,
                               atol=1e-5)
    xs = np.stack([x, 2 * x])
    np.testing.assert_allclose(spmdc.vmap(f, (0, None))(xs, w),
                               np.stack([f(x, w), f(2 * x, w)]), rtol=1e-5, atol=1e-5)
    with pytest.raises(TypeError, match="rhs dimension"):
        f(x, w[:, :5])
