"""``Array.committed``, as JAX's (Note [committed arrays] in spmdc/runtime/array.py).
The expected flags are JAX 0.10.2's for the same calls."""
import numpy as np

import spmdc
import spmdc.numpy as jnp


def test_committed_follows_jax():
    dev = spmdc.devices()[0]
    x = jnp.arange(3.0)
    c = spmdc.device_put(x, dev)
    double = spmdc.jit(lambda a: a * 2)
    got = {
        "jnp.array": x.committed,
        "device_put(x)": spmdc.device_put(x).committed,
        "device_put(numpy)": spmdc.device_put(np.ones(2)).committed,
        "device_put(x, device)": c.committed,
        "device_put(committed)": spmdc.device_put(c).committed,
        "device_put(x, sharding)": spmdc.device_put(
            x, spmdc.sharding.SingleDeviceSharding(dev)).committed,
        "x + 1": (x + 1).committed,
        "c + 1": (c + 1).committed,
    }
    # twice more: the C++ dispatcher launches the later calls (Note [dispatch fast path])
    for _ in range(3):
        got["jit(uncommitted)"] = double(x).committed
        got["jit(committed)"] = double(c).committed
        got["jit(mixed)"] = spmdc.jit(lambda a, b: a + b)(x, c).committed
    # JAX 0.10.2
    assert got == {"jnp.array": False, "device_put(x)": False, "device_put(numpy)": False,
                   "device_put(x, device)": True, "device_put(committed)": True,
                   "device_put(x, sharding)": True, "x + 1": False, "c + 1": True,
                   "jit(uncommitted)": False, "jit(committed)": True, "jit(mixed)": True}
    np.testing.assert_array_equal(np.asarray(double(c)), [0.0, 2.0, 4.0])
