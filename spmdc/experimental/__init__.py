"""``spmdc.experimental``: names JAX keeps under ``jax.experimental`` (``io_callback``,
``ode.odeint``)."""
from ..callbacks import io_callback

__all__ = ["io_callback"]
