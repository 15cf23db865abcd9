"""multihost_utils' host-local / global conversions, live_devices and
ProcessFailureError in one process, with JAX 0.10.2's results and errors (recorded); the
several-process behaviour is tests/e2e/test_multiprocess.py's (_check_multihost)."""
from __future__ import annotations

import numpy as np
import pytest

import spmdc
from spmdc.experimental import multihost_utils as mh
from spmdc.sharding import NamedSharding
from spmdc.sharding import PartitionSpec as P

pytestmark = pytest.mark.devices(8)


def test_in_one_process_the_local_piece_is_the_global_array():
    mesh = spmdc.make_mesh((4, 2), ("x", "y"))
    x = np.arange(16, dtype=np.float64).reshape(8, 2)
    g = mh.host_local_array_to_global_array({"a": x, "b": np.int64(3)}, mesh,
                                            {"a": P("x", "y"), "b": P()})
    assert g["a"].dtype == np.float32 and g["a"].shape == (8, 2)        # as JAX
    assert g["a"].sharding == NamedSharding(mesh, P("x", "y"))
    np.testing.assert_array_equal(np.asarray(g["a"]), x)
    assert g["b"].dtype == np.int32 and int(g["b"]) == 3
    back = mh.global_array_to_host_local_array(g, mesh, {"a": P("x", "y"), "b": P()})
    assert back["a"] is g["a"]              # addressable already: returned, as JAX
    local = mh.global_array_to_host_local_array(x, mesh, P("x"))
    assert isinstance(local, spmdc.Array) and local.dtype == np.float32
    assert local.sharding.spec[0] == "x"
    np.testing.assert_array_equal(np.asarray(local), x)
    assert mh._local_mesh(mesh) is mesh


def test_bad_input_and_the_distributed_only_names():
    mesh = spmdc.make_mesh((8,), ("x",))
    x = np.ones((8, 2))
    for convert in (mh.host_local_array_to_global_array, mh.global_array_to_host_local_array):
        with pytest.raises(ValueError, match="`None` is not a valid input to the pspecs"):
            convert(x, mesh, None)
    with pytest.raises(RuntimeError, match="Distributed JAX not initialized"):
        with mh.live_devices(spmdc.devices()):
            pass
    e = mh.ProcessFailureError({spmdc.devices()[0]})
    assert e.failed_devices == {spmdc.devices()[0]}
    assert str(e) == f"Devices failed: {{{spmdc.devices()[0]!r}}}"
