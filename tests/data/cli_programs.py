"""Small programs for tests/e2e/test_cli.py (``spmdc dump`` / ``spmdc check``)."""
import numpy as np

import spmdc
import spmdc.numpy as jnp
from spmdc import lax


def loss(w, x):
    return jnp.tanh(x @ w).sum()


def scale(x):
    return jnp.sin(x) * 2.0


batched = spmdc.vmap(scale)                  # dumped as jit(vmap(scale))


def power(x, k):
    return x ** k


def local_loss(w, x):
    return jnp.sum(lax.psum(x * w, "i"))            # psum of an f32[5,3] per device


step = spmdc.pmap(spmdc.grad(local_loss), axis_name="i", in_axes=(None, 0))


def example():
    return np.ones(3, np.float32), np.ones((4, 5, 3), np.float32)


@spmdc.jit
def sharded_matmul(a, w):          # laid out over a 2 x 4 mesh: XLA's partitioner splits it
    from spmdc.sharding import AxisType, NamedSharding, PartitionSpec
    # Auto axes: the partitioner chooses (over make_mesh's default Explicit axes the
    # contraction split on both sides would need out_sharding=, as in JAX)
    mesh = spmdc.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
    a = lax.with_sharding_constraint(a, NamedSharding(mesh, PartitionSpec("x", "y")))
    w = lax.with_sharding_constraint(w, NamedSharding(mesh, PartitionSpec("y")))
    return a @ w
