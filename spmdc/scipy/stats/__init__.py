"""``spmdc.scipy.stats``: log-densities, densities and distribution functions of common
distributions (JAX's ``jax.scipy.stats``), one module per distribution, ``gaussian_kde``
and the sample statistics ``mode``, ``rankdata`` and ``sem``."""
from spmdc.scipy.stats import (  # noqa: F401
    bernoulli,
    beta,
    betabinom,
    binom,
    cauchy,
    chi2,
    dirichlet,
    expon,
    gamma,
    gennorm,
    geom,
    gumbel_l,
    gumbel_r,
    laplace,
    logistic,
    multinomial,
    multivariate_normal,
    nbinom,
    norm,
    pareto,
    poisson,
    t,
    truncnorm,
    uniform,
    vonmises,
    wrapcauchy,
)
from spmdc.scipy.stats.descriptive import mode, rankdata, sem  # noqa: F401
from spmdc.scipy.stats.kde import gaussian_kde  # noqa: F401
