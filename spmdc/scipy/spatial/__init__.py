"""``spmdc.scipy.spatial`` (JAX's ``jax.scipy.spatial``): ``transform``, rotations in three
dimensions (``Rotation``, ``Slerp``)."""
from spmdc.scipy.spatial import transform  # noqa: F401
