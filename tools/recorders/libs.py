"""The libs case set: JAX 0.10.2's values for the spmdc.nn, spmdc.scipy and
spmdc.example_libraries tests (activations and their gradients, special functions,
distributions, the programs of tests/libs_programs.py, initializers), recorded into
tests/data/libs_reference.npz. The inputs and argument tables are tests/libs_cases.py's,
which the tests read too; the tests read the recorded file and never import jax.
"""
from __future__ import annotations

import functools
import types

import numpy as np

from recorders import tests_on_path, write_arrays


def _record_nn(lc: types.ModuleType, out: dict) -> None:
    import jax
    import jax.numpy as jnp
    x = jnp.asarray(lc.X)
    fns = {name: getattr(jax.nn, name) for name in lc.UNARY}
    fns["gelu_tanh"] = lambda v: jax.nn.gelu(v, approximate=True)
    fns["gelu_erf"] = lambda v: jax.nn.gelu(v, approximate=False)
    fns["logsumexp"] = lambda v: jax.nn.logsumexp(v)
    for name, f in fns.items():
        out[f"nn.{name}"] = np.asarray(f(x))
        out[f"nn.{name}.grad"] = np.asarray(jax.grad(lambda v, f=f: jnp.sum(f(v) * lc.W))(x))
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


def _record_special(lc: types.ModuleType, out: dict) -> None:
    import jax
    import jax.scipy.special as sp
    for name, x in lc.SPECIAL_UNARY.items():
        out[f"special.{name}"] = np.asarray(getattr(sp, name)(x))
    for name in lc.DIFFERENTIABLE:
        x = lc.SPECIAL_UNARY[name]
        out[f"special.{name}.grad"] = np.asarray(jax.vmap(jax.grad(getattr(sp, name)))(x))
    for name in lc.SPECIAL_BINARY:
        out[f"special.{name}"] = np.asarray(getattr(sp, name)(lc.PAIR_A, lc.PAIR_B))
    out["special.multigammaln"] = np.asarray(sp.multigammaln(lc.POSITIVE[3:] + 2, 3))
    out["special.polygamma"] = np.asarray(sp.polygamma(np.arange(3)[:, None], lc.POSITIVE))
    out["special.logsumexp.b"] = np.asarray(sp.logsumexp(lc.PAIR_A, b=lc.PAIR_B - 2.))
    lse, sign = sp.logsumexp(lc.PAIR_A, b=lc.PAIR_B - 2., return_sign=True)
    out["special.logsumexp.sign"] = np.stack([np.asarray(lse), np.asarray(sign)])


def _record_stats(lc: types.ModuleType, out: dict) -> None:
    import jax.scipy.stats as st
    for table, x in ((lc.STATS, lc.STATS_X), (lc.STATS_Q, lc.UNIT)):
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
    on_cases = [functools.partial(part, cases) for part in (_record_nn, _record_special,
                                                            _record_stats)]
    write_arrays(paths[0], [*on_cases, _record_examples])


def libs_names(cases: types.ModuleType, mode) -> list[str]:
    return ([f"nn.{name}" for name in cases.UNARY]
            + ["nn.gelu_tanh", "nn.gelu_erf", "nn.logsumexp"]
            + [f"special.{name}" for name in [*cases.SPECIAL_UNARY, *cases.SPECIAL_BINARY]]
            + [f"stats.{name}" for name in [*cases.STATS, *cases.STATS_Q]]
            + ["examples.mlp_adam", "examples.stax", "examples.optimizer", "init"])
