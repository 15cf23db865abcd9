"""The older sharding names programs still import: jax.experimental.shard_map,
jax.experimental.pjit, jax.experimental.mesh_utils (run with ``jax`` aliased to spmdc)."""
from __future__ import annotations

import importlib
import sys

import numpy as np
import pytest

import spmdc
from spmdc import lax
from spmdc.sharding import Mesh, NamedSharding, PartitionSpec

pytestmark = pytest.mark.devices(8)      # its meshes span 8 devices

P = PartitionSpec


@pytest.fixture
def jax_alias():
    saved = {k: v for k, v in sys.modules.items() if k == "jax" or k.startswith("jax.")}
    sys.modules["jax"] = spmdc
    try:
        yield spmdc
    finally:
        for k in [k for k in sys.modules if k == "jax" or k.startswith("jax.")]:
            del sys.modules[k]
        sys.modules.update(saved)


def test_older_modules_resolve_and_work(jax_alias):
    mesh_utils = importlib.import_module("jax.experimental.mesh_utils")
    shard_map = importlib.import_module("jax.experimental.shard_map").shard_map
    pjit = importlib.import_module("jax.experimental.pjit").pjit
    devices = mesh_utils.create_device_mesh((2, 4))
    assert devices.shape == (2, 4) and [d.id for d in devices.flat] == list(range(8))
    mesh = Mesh(devices, ("x", "y"))
    a = np.arange(64, dtype=np.float32).reshape(8, 8)
    f = shard_map(lambda b: lax.psum(b, "y"), mesh, in_specs=P("x", "y"), out_specs=P("x"))
    np.testing.assert_allclose(f(a), sum(np.split(a, 4, axis=1)))
    with pytest.raises(ValueError, match="same on every device"):
        shard_map(lambda b: b, mesh, in_specs=P("x", "y"), out_specs=P("x"))(a)
    loose = shard_map(lambda b: b, mesh, in_specs=P("x", "y"), out_specs=P("x"),
                      check_rep=False)
    np.testing.assert_allclose(loose(a), a[:, :2])           # the first block along 'y'
    g = pjit(lambda x: x * 2, in_shardings=NamedSharding(mesh, P("x")))
    assert g(a).sharding.mesh == mesh
    np.testing.assert_allclose(g(a), 2 * a)
    assert mesh_utils.create_hybrid_device_mesh((2, 2), (1, 2)).shape == (2, 4)
    with pytest.raises(ValueError, match="needs 16 devices"):
        mesh_utils.create_device_mesh((4, 4))
    with pytest.raises(TypeError, match="contiguous_submeshes"):
        mesh_utils.create_device_mesh((2, 4), contiguous_submeshes="yes")
