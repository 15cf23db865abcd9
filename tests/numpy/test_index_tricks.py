"""Index tricks (mgrid, ogrid, r_, c_), vectorize, frompyfunc ufuncs and their methods,
apply_along_axis, block, histograms, vecdot/matvec, einsum paths, and the array-API and
host-io names: against JAX 0.10.2's recorded results (tests/jnp_misc_cases.py, through
tests/oracle.py), against NumPy, and their errors."""
from __future__ import annotations

import jnp_misc_cases
import numpy as np
import oracle
import pytest

import spmdc
import spmdc.numpy as jnp

RECORDED = oracle.recorded_cases("jnp_misc_reference.json")
CASES = jnp_misc_cases.cases(spmdc)


def test_every_recorded_case_is_run():
    assert set(RECORDED) == set(CASES)


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_matches_jax(name):
    oracle.assert_matches_recorded(CASES[name](), RECORDED[name], name)


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")   # NumPy's r_['r', ...]
def test_index_tricks_match_numpy():
    for key in [np.s_[0:5], np.s_[0:1:4j], np.s_[0:3, 0:4], np.s_[-1:1:3j, 2:5]]:
        np.testing.assert_allclose(jnp.mgrid[key], np.mgrid[key], rtol=1e-6)
        for g, w in zip(jnp.ogrid[key] if isinstance(key, tuple) else [jnp.ogrid[key]],
                        np.ogrid[key] if isinstance(key, tuple) else [np.ogrid[key]],
                        strict=True):
            np.testing.assert_allclose(g, w, rtol=1e-6)
    a, b = np.arange(6).reshape(2, 3), np.ones((2, 2), np.int64)
    for got, want in [(jnp.r_["-1", a, b], np.r_["-1", a, b]),
                      (jnp.r_["1,3,1", [1, 2], [3, 4]], np.r_["1,3,1", [1, 2], [3, 4]]),
                      (jnp.c_[a, b], np.c_[a, b]), (jnp.r_["r", 1:4], np.r_["r", 1:4])]:
        np.testing.assert_array_equal(got, want)
    assert jnp.s_[1:2, ::3] == np.s_[1:2, ::3] and jnp.index_exp[2] == (2,)


def test_vectorize_under_jit_and_its_errors():
    dot = jnp.vectorize(jnp.dot, signature="(n),(n)->()")
    a, v = np.ones((3, 4), np.float32), np.arange(4, dtype=np.float32)
    np.testing.assert_allclose(spmdc.jit(dot)(a, v), a @ v)
    with pytest.raises(ValueError, match="inconsistent size for core dimension 'n'"):
        dot(a, np.ones(5))
    with pytest.raises(ValueError, match="not a valid gufunc signature"):
        jnp.vectorize(jnp.dot, signature="(n)->")(v)
    with pytest.raises(ValueError, match="does not match its core dimensions"):
        jnp.vectorize(lambda x: x, signature="(n)->()")(v)
    with pytest.raises(TypeError, match="excluded"):
        jnp.vectorize(jnp.dot, excluded={1.5})


def test_array_api_names_and_errors():
    assert jnp.isdtype(np.float32, "real floating") and jnp.isdtype(jnp.bfloat16, "numeric")
    assert jnp.isdtype(np.int8, ("bool", "signed integer"))
    assert not jnp.isdtype(np.uint8, "signed integer")
    with pytest.raises(ValueError, match="unknown kind"):
        jnp.isdtype(np.float32, "floating")
    assert not bool(jnp.array_equiv([1, 2], [1, 2, 3]))      # NumPy's answer, no error
    assert jnp.character is np.character and jnp.object_ is np.object_
    add = jnp.frompyfunc(lambda x, y: x + y, 2, 1)
    with pytest.raises(ValueError, match="inplace=False"):
        add.at(np.zeros(3), [0], [1.0])
    with pytest.raises(ValueError, match="needs initial"):
        add.reduce(np.ones(3), where=np.ones(3, bool))
    neg = jnp.frompyfunc(lambda x: -x, 1, 1)
    with pytest.raises(ValueError, match="only binary ufuncs"):
        neg.reduce(np.ones(3))
    with pytest.raises(ValueError, match="out= argument is not supported"):
        jnp.einsum("i->", np.ones(3), out=np.ones(()))
    with pytest.raises(ValueError, match="does not fit"):
        jnp.einsum("ij,jk,kl->il", np.ones((2, 2)), np.ones((2, 2)), np.ones((2, 2)),
                   optimize=[(0, 5)])


def test_linspace_ends_exactly_at_stop_so_histograms_keep_the_maximum():
    # regression: linspace computed start + i * step, missing stop by an ulp, so the
    # histogram's last edge fell below the data's maximum and that sample was dropped
    r = np.random.default_rng(0)
    for seed in range(5):
        x = r.normal(size=40).astype(np.float32) * (seed + 1)
        for bins in (3, 4, 7):
            counts, edges = jnp.histogram(x, bins)
            assert int(np.asarray(counts).sum()) == 40
            assert np.asarray(edges)[-1] == x.max() and np.asarray(edges)[0] == x.min()
        stop = np.float32(x.max())
        assert np.asarray(jnp.linspace(np.float32(x.min()), stop, 9))[-1] == stop
        assert np.asarray(spmdc.jit(lambda a, b: jnp.linspace(a, b, 6))(x.min(), stop))[-1] \
            == stop
    np.testing.assert_allclose(jnp.linspace(np.array([0.0, 1.0]), np.array([1.0, 5.0]), 3,
                                            axis=1), [[0, 0.5, 1], [1, 3, 5]])
    values, step = jnp.linspace(2.0, 3.0, 5, retstep=True)
    assert float(step) == 0.25 and np.asarray(values)[-1] == 3.0


def test_host_io_and_printing_names(tmp_path):
    import io
    x = jnp.arange(3.0)
    buf = io.BytesIO()
    jnp.save(buf, np.asarray(x))
    buf.seek(0)
    loaded = jnp.load(buf)
    assert isinstance(loaded, spmdc.Array) and np.array_equal(loaded, [0, 1, 2])
    np.savez(tmp_path / "a.npz", a=np.ones(2))
    assert np.array_equal(jnp.load(tmp_path / "a.npz")["a"], [1, 1])
    np.testing.assert_array_equal(jnp.frombuffer(b"\x01\x02", dtype=np.uint8), [1, 2])
    np.testing.assert_array_equal(jnp.fromstring("1 2 3", sep=" "), [1, 2, 3])
    np.testing.assert_array_equal(jnp.from_dlpack(np.arange(4)), np.arange(4))
    with pytest.raises(ValueError, match="copy=False"):
        jnp.from_dlpack(np.arange(4), copy=False)
    with jnp.printoptions(precision=2):
        assert "3.14" in repr(jnp.asarray(np.pi)) and "3.142" not in repr(jnp.asarray(np.pi))
    assert jnp.array_str(np.asarray(x)) == "[0. 1. 2.]"
