"""``spmdc.scipy.cluster`` (JAX's ``jax.scipy.cluster``): vector quantisation, ``vq``."""
from spmdc.scipy.cluster import vq  # noqa: F401
