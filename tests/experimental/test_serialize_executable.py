"""jax.experimental.serialize_executable (spmdc/experimental/serialize_executable.py) and
jax.experimental.compilation_cache.compilation_cache: a compiled program as bytes, loaded
back in this process and in another, and the persistent cache's directory set and
reset."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc.experimental import serialize_executable as se
from spmdc.experimental.compilation_cache import compilation_cache as cc
from spmdc.runtime import cache

W = np.array([[0.3, -0.2], [0.1, 0.4], [-0.5, 0.6]], np.float32)
X = np.arange(12, dtype=np.float32).reshape(4, 3) / 10


def program(w, x, *, shift):
    return {"y": jnp.tanh(x @ w) + shift, "l": jnp.linalg.cholesky(w.T @ w + jnp.eye(2))}


def _want(shift: float) -> dict[str, np.ndarray]:
    return {"y": np.tanh(X @ W) + shift, "l": np.linalg.cholesky(W.T @ W + np.eye(2))}


def test_serialize_and_load_in_this_process() -> None:
    compiled = spmdc.jit(program).lower(W, X, shift=np.float32(1.0)).compile()
    blob, in_tree, out_tree = se.serialize(compiled)
    assert in_tree == spmdc.tree_util.tree_structure(((W, X), {"shift": 1.0}))
    assert out_tree == spmdc.tree_util.tree_structure({"l": 0, "y": 0})
    loaded = se.deserialize_and_load(blob, in_tree, out_tree,
                                     backend=spmdc.extend.backend.get_backend())
    assert loaded.in_tree == in_tree and loaded.out_tree == out_tree
    got = loaded(W, X, shift=np.float32(2.0))
    for k, want in _want(2.0).items():
        np.testing.assert_allclose(np.asarray(got[k]), want, rtol=1e-5, atol=1e-6)


def test_refusals() -> None:
    def printing(x):
        spmdc.debug.print("{x}", x=x)
        return x + 1
    with pytest.raises(ValueError, match="does not support serialization"):
        se.serialize(spmdc.jit(printing).lower(X).compile())
    with pytest.raises(TypeError, match="expected a compiled program"):
        se.serialize(spmdc.jit(printing))
    with pytest.raises(ValueError, match="not a serialized spmdc executable"):
        se.deserialize_and_load(b"junk", None, None)
    blob, in_tree, out_tree = se.serialize(spmdc.jit(lambda x: x * 2).lower(X).compile())
    with pytest.raises(ValueError, match="not this process's platform"):
        se.deserialize_and_load(blob, in_tree, out_tree, backend="tpu")


@pytest.mark.slow
def test_load_in_another_process(tmp_path) -> None:
    compiled = spmdc.jit(program).lower(W, X, shift=np.float32(1.0)).compile()
    blob, _, _ = se.serialize(compiled)
    (tmp_path / "exe.bin").write_bytes(blob)
    script = textwrap.dedent(f"""
        import json, numpy as np, spmdc
        from spmdc.experimental import serialize_executable as se
        tree = spmdc.tree_util.tree_structure
        c = se.deserialize_and_load(open({str(tmp_path / "exe.bin")!r}, "rb").read(),
                                    tree(((0, 0), {{"shift": 0}})), tree({{"l": 0, "y": 0}}))
        w = np.array({W.tolist()}, np.float32); x = np.array({X.tolist()}, np.float32)
        print(json.dumps(np.asarray(c(w, x, shift=np.float32(3.0))["y"]).tolist()))
    """)
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         env=dict(os.environ), timeout=120)
    assert run.returncode == 0, run.stderr
    np.testing.assert_allclose(np.array(json.loads(run.stdout.strip())), _want(3.0)["y"], rtol=1e-5)


def test_compilation_cache_dir_and_reset(tmp_path) -> None:
    before = spmdc.config.read("jax_compilation_cache_dir")
    try:
        cc.set_cache_dir(tmp_path / "cache")
        spmdc.jit(lambda x: x * 3.0 - 7.25)(X)
        store = cache.cache()
        assert store is not None and store.directory == str(tmp_path / "cache")
        assert any(n.endswith(".exe") for n in os.listdir(tmp_path / "cache"))
        cc.reset_cache()
        assert cache.cache() is not store and cache.cache().directory == store.directory
        with pytest.raises(TypeError, match="directory path"):
            cc.set_cache_dir(3)
    finally:
        spmdc.config.update("jax_compilation_cache_dir", before)
