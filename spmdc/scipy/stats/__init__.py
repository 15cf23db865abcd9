"""``spmdc.scipy.stats``: log-densities, densities and distribution functions of common
distributions (JAX's ``jax.scipy.stats``), one module per distribution, and
``gaussian_kde``."""
from spmdc.scipy.stats import (  # noqa: F401
    bernoulli,
    beta,
    binom,
    cauchy,
    chi2,
    dirichlet,
    expon,
    gamma,
    geom,
    gumbel_l,
    gumbel_r,
    laplace,
    logistic,
    multivariate_normal,
    nbinom,
    norm,
    pareto,
    poisson,
    t,
    uniform,
    vonmises,
)
from spmdc.scipy.stats.kde import gaussian_kde  # noqa: F401
