"""spmdc.experimental: JAX's experimental namespace (``ode.odeint``)."""
