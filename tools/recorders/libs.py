"""The libs case set: JAX 0.10.2's values for the spmdc.nn, spmdc.scipy and
spmdc.example_libraries tests (activations and their gradients, special functions,
distributions, the programs of tests/libs_programs.py, initializers), recorded into
tests/data/libs_reference.npz. The tests read that file and never import jax.
"""
from __future__ import annotations

import types

import numpy as np

from recorders import tests_on_path, write_arrays

# Shared with tests/nn/test_functions.py: the inputs the activations are recorded on.
X = np.array([-1e4, -30., -6., -3., -1., -0.5, -1e-3, 0., 1e-3, 0.5, 1., 3., 6., 30., 1e4],
             np.float32)
W = np.linspace(-1.0, 2.0, X.size).astype(np.float32)   # weights for <f(x), w> gradients

UNARY = ["relu", "relu6", "softplus", "sigmoid", "log_sigmoid", "silu", "elu", "selu", "celu",
         "soft_sign", "hard_tanh", "leaky_relu", "hard_sigmoid", "hard_silu", "mish",
         "squareplus", "sparse_plus", "sparse_sigmoid", "softmax", "log_softmax", "standardize"]


def _record_nn(out: dict) -> None:
    import jax
    import jax.numpy as jnp
    x = jnp.asarray(X)
    fns = {name: getattr(jax.nn, name) for name in UNARY}
    fns["gelu_tanh"] = lambda v: jax.nn.gelu(v, approximate=True)
    fns["gelu_erf"] = lambda v: jax.nn.gelu(v, approximate=False)
    fns["logsumexp"] = lambda v: jax.nn.logsumexp(v)
    for name, f in fns.items():
        out[f"nn.{name}"] = np.asarray(f(x))
        out[f"nn.{name}.grad"] = np.asarray(jax.grad(lambda v, f=f: jnp.sum(f(v) * W))(x))
    m = np.array([[1., 2., 3., 4.], [0.5, -1., 7., 2.], [3., 3., 3., 3.]], np.float32)
    mask = np.array([[True, False, True, True], [True, True, False, False],
                     [False, False, False, True]])
    out["nn.softmax.axis0"] = np.asarray(jax.nn.softmax(m, axis=0))
    out["nn.softmax.where"] = np.asarray(jax.nn.softmax(m, where=mask))
    out["nn.log_softmax.where"] = np.asarray(jax.nn.log_softmax(m, where=mask))
    out["nn.logsumexp.where"] = np.asarray(jax.nn.logsumexp(m, axis=1, where=mask))
    out["nn.standardize.where"] = np.asarray(jax.nn.standardize(m, axis=1, where=mask))
    out["nn.standardize.stable"] = np.asarray(jax.nn.standardize(m, axis=0, algorithm="stable"))
    out["nn.glu"] = np.asarray(jax.nn.glu(m, axis=1))
    ints = jnp.array([1, 7, -2])
    for name in ["relu", "relu6", "hard_tanh", "elu", "softmax", "log_softmax", "standardize",
                 "leaky_relu", "celu"]:
        out[f"nn.int.{name}"] = np.asarray(getattr(jax.nn, name)(ints))


# Shared with tests/scipy/test_special.py.
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


def _record_special(out: dict) -> None:
    import jax
    import jax.scipy.special as sp
    for name, x in SPECIAL_UNARY.items():
        out[f"special.{name}"] = np.asarray(getattr(sp, name)(x))
    for name in DIFFERENTIABLE:
        x = SPECIAL_UNARY[name]
        out[f"special.{name}.grad"] = np.asarray(jax.vmap(jax.grad(getattr(sp, name)))(x))
    for name in SPECIAL_BINARY:
        out[f"special.{name}"] = np.asarray(getattr(sp, name)(PAIR_A, PAIR_B))
    out["special.multigammaln"] = np.asarray(sp.multigammaln(POSITIVE[3:] + 2, 3))
    out["special.polygamma"] = np.asarray(sp.polygamma(np.arange(3)[:, None], POSITIVE))
    out["special.logsumexp.b"] = np.asarray(sp.logsumexp(PAIR_A, b=PAIR_B - 2.))
    lse, sign = sp.logsumexp(PAIR_A, b=PAIR_B - 2., return_sign=True)
    out["special.logsumexp.sign"] = np.stack([np.asarray(lse), np.asarray(sign)])


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


def _record_stats(out: dict) -> None:
    import jax.scipy.stats as st
    for table, x in ((STATS, STATS_X), (STATS_Q, UNIT)):
        for name, (args, kwargs) in table.items():
            module, fn = name.split(".")
            f = getattr(getattr(st, module), fn)
            out[f"stats.{name}"] = np.asarray(f(x, *args, **kwargs))
    simplex = np.array([[0.2, 0.1], [0.3, 0.6], [0.5, 0.3]], np.float32)
    alpha = np.array([1.5, 2., 3.], np.float32)
    out["stats.dirichlet.logpdf"] = np.asarray(st.dirichlet.logpdf(simplex, alpha))
    out["stats.dirichlet.logpdf.short"] = np.asarray(st.dirichlet.logpdf(simplex[:2], alpha))


def _record_examples(out: dict) -> None:
    import jax
    import jax.numpy as jnp
    tests_on_path()
    import libs_programs
    losses, final = libs_programs.mlp_adam(jax)
    out["examples.mlp_adam.losses"] = losses
    for k, leaf in enumerate(final):
        out[f"examples.mlp_adam.param{k}"] = leaf
    losses, final, _ = libs_programs.stax_classifier(jax)
    out["examples.stax.losses"] = losses
    for k, leaf in enumerate(final):
        out[f"examples.stax.param{k}"] = leaf
    for name, value in libs_programs.every_optimizer(jax).items():
        out[f"examples.optimizer.{name}"] = value
    from jax.nn import initializers as init
    key = jax.random.PRNGKey(3)
    inits = {"glorot_normal": init.glorot_normal(), "glorot_uniform": init.glorot_uniform(),
             "he_normal": init.he_normal(), "he_uniform": init.he_uniform(),
             "lecun_normal": init.lecun_normal(), "lecun_uniform": init.lecun_uniform(),
             "normal": init.normal(0.5), "uniform": init.uniform(2.0),
             "truncated_normal": init.truncated_normal(0.3, lower=-1., upper=1.5),
             "variance_scaling": init.variance_scaling(0.7, "fan_geo_avg", "normal",
                                                       in_axis=0, out_axis=(1, 2))}
    for name, f in inits.items():
        out[f"init.{name}"] = np.asarray(f(key, (4, 3, 5)))
    out["init.glorot_normal.typed_key"] = np.asarray(
        init.glorot_normal()(jax.random.key(11), (6, 2), jnp.float16))


def record_libs(cases: types.ModuleType, paths, mode) -> None:
    write_arrays(paths[0], [_record_nn, _record_special, _record_stats, _record_examples])


def libs_names(cases: types.ModuleType, mode) -> list[str]:
    return ([f"nn.{name}" for name in UNARY] + ["nn.gelu_tanh", "nn.gelu_erf", "nn.logsumexp"]
            + [f"special.{name}" for name in [*SPECIAL_UNARY, *SPECIAL_BINARY]]
            + [f"stats.{name}" for name in [*STATS, *STATS_Q]]
            + ["examples.mlp_adam", "examples.stax", "examples.optimizer", "init"])
