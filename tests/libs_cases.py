"""The inputs of the libs case set: the arrays and argument tables that
`tools/record.py libs` (tools/recorders/libs.py) runs JAX 0.10.2's spmdc.nn,
spmdc.scipy.special and spmdc.scipy.stats counterparts on, and that tests/nn/test_functions.py,
tests/scipy/test_special.py and tests/scipy/test_stats.py run spmdc's on to compare with the
recorded values in tests/data/libs_reference.npz. One table, read by both sides.
"""
from __future__ import annotations

import numpy as np

# --- nn: the activations, and the weights of the <f(x), w> gradients --------------------------

X = np.array([-1e4, -30., -6., -3., -1., -0.5, -1e-3, 0., 1e-3, 0.5, 1., 3., 6., 30., 1e4],
             np.float32)
W = np.linspace(-1.0, 2.0, X.size).astype(np.float32)   # weights for <f(x), w> gradients

UNARY = ["relu", "relu6", "softplus", "sigmoid", "log_sigmoid", "silu", "elu", "selu", "celu",
         "soft_sign", "hard_tanh", "leaky_relu", "hard_sigmoid", "hard_silu", "mish",
         "squareplus", "sparse_plus", "sparse_sigmoid", "softmax", "log_softmax", "standardize"]


# --- scipy.special: unary functions on their domains, binary ones on pairs ---------------------

SPECIAL_X = np.array([-40., -12., -6., -1.5, -1e-3, 0., 1e-3, 0.3, 1., 4., 6., 9., 30.],
                     np.float32)
POSITIVE = np.array([1e-3, 0.1, 0.5, 1., 2.5, 7., 9., 40., 1e3], np.float32)
UNIT = np.array([0., 1e-30, 1e-10, 1e-3, 0.1, 0.3, 0.5, 0.8, 0.9, 0.99, 1 - 1e-7, 1.],
                np.float32)
SPECIAL_UNARY = {"erf": SPECIAL_X, "erfc": SPECIAL_X, "ndtr": SPECIAL_X, "log_ndtr": SPECIAL_X,
                 "i0e": SPECIAL_X, "i1e": SPECIAL_X, "i0": SPECIAL_X[2:-1],
                 "i1": SPECIAL_X[2:-1], "expit": SPECIAL_X, "entr": SPECIAL_X,
                 "gammaln": POSITIVE, "digamma": POSITIVE, "gamma": SPECIAL_X[3:-2],
                 "gammasgn": SPECIAL_X, "erfinv": UNIT * 2 - 1, "ndtri": UNIT,
                 "logit": UNIT}
PAIR_A = np.array([0.5, 1., 3., 10., 100., 1e4, 2., 0.], np.float32)
PAIR_B = np.array([2., 9., 50., 1e3, 1., 7., 0., 3.], np.float32)
SPECIAL_BINARY = ["betaln", "xlogy", "xlog1py", "rel_entr", "kl_div", "beta"]
DIFFERENTIABLE = ["erf", "erfc", "ndtr", "log_ndtr", "i0e", "i1e", "expit", "gammaln",
                  "digamma", "ndtri", "logit", "erfinv"]


# --- scipy.stats: densities, mass functions and CDFs on STATS_X, quantiles on UNIT -----------

STATS_X = np.array([-30., -3., -1., -0.2, 0., 0.2, 0.5, 0.9, 1., 2., 7., 40.], np.float32)
STATS = {  # name: (function, extra arguments)
    "norm.logpdf": ((), {}), "norm.pdf": ((), {"loc": 1., "scale": 2.}),
    "norm.cdf": ((), {}), "norm.logcdf": ((), {}), "norm.sf": ((), {"loc": -1.}),
    "norm.logsf": ((), {}), "bernoulli.logpmf": ((0.3,), {}), "bernoulli.pmf": ((0.3,), {}),
    "bernoulli.cdf": ((0.3,), {}), "beta.logpdf": ((2., 3.), {}), "beta.pdf": ((0.5, 0.5), {}),
    "gamma.logpdf": ((2.5,), {}), "gamma.pdf": ((0.5,), {"scale": 2.}),
    "poisson.logpmf": ((3.,), {}), "poisson.pmf": ((3.,), {}),
    "uniform.logpdf": ((), {}), "uniform.pdf": ((), {"loc": -1., "scale": 3.}),
    "uniform.cdf": ((), {}), "t.logpdf": ((3.,), {}), "t.pdf": ((1.5,), {"scale": 2.}),
    "cauchy.logpdf": ((), {}), "cauchy.pdf": ((), {}), "cauchy.cdf": ((), {}),
    "cauchy.logcdf": ((), {}), "cauchy.sf": ((), {}), "cauchy.logsf": ((), {}),
    "laplace.logpdf": ((), {}), "laplace.pdf": ((), {}), "laplace.cdf": ((), {}),
    "logistic.logpdf": ((), {}), "logistic.pdf": ((), {}), "logistic.cdf": ((), {}),
    "logistic.sf": ((), {}), "expon.logpdf": ((), {}), "expon.pdf": ((), {}),
    "expon.cdf": ((), {}), "expon.sf": ((), {}), "expon.logsf": ((), {}),
    "expon.logcdf": ((), {}), "geom.logpmf": ((0.3,), {}), "geom.pmf": ((0.3,), {}),
    "pareto.logpdf": ((1.5,), {}), "pareto.pdf": ((1.5,), {}), "pareto.cdf": ((1.5,), {}),
    "pareto.logcdf": ((1.5,), {}), "pareto.sf": ((1.5,), {}), "pareto.logsf": ((1.5,), {}),
    "gumbel_r.logpdf": ((), {}), "gumbel_r.pdf": ((), {}), "gumbel_r.cdf": ((), {}),
    "gumbel_r.logcdf": ((), {}), "gumbel_r.sf": ((), {}), "gumbel_r.logsf": ((), {}),
    "gumbel_l.logpdf": ((), {}), "gumbel_l.pdf": ((), {}), "gumbel_l.cdf": ((), {}),
    "gumbel_l.logcdf": ((), {}), "gumbel_l.sf": ((), {}), "gumbel_l.logsf": ((), {}),
    "binom.logpmf": ((9., 0.3), {}), "binom.pmf": ((9., 0.3), {}),
    "nbinom.logpmf": ((4., 0.3), {}), "nbinom.pmf": ((4., 0.3), {}),
    "chi2.logpdf": ((3.,), {}), "chi2.pdf": ((2.5,), {"scale": 2.}),
    "vonmises.logpdf": ((2.,), {}), "vonmises.pdf": ((0.5,), {})}
STATS_Q = {"norm.ppf": ((), {}), "norm.isf": ((), {"loc": 2.}), "bernoulli.ppf": ((0.3,), {}),
           "uniform.ppf": ((), {}), "cauchy.ppf": ((), {}), "cauchy.isf": ((), {}),
           "logistic.ppf": ((), {}), "logistic.isf": ((), {}), "expon.ppf": ((), {}),
           "pareto.ppf": ((1.5,), {}), "gumbel_r.ppf": ((), {}), "gumbel_l.ppf": ((), {})}
