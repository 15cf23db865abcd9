"""``spmdc.scipy.stats``: log-densities, densities and distribution functions of common
distributions (JAX's ``jax.scipy.stats``), one module per distribution."""
from spmdc.scipy.stats import (  # noqa: F401
    bernoulli,
    beta,
    cauchy,
    dirichlet,
    expon,
    gamma,
    laplace,
    logistic,
    norm,
    poisson,
    t,
    uniform,
)
