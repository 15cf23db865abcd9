"""The jax.scipy.stats names added after the first round (truncnorm, gennorm, wrapcauchy,
betabinom, multinomial, poisson.entropy, mode, rankdata, sem), run on spmdc and on JAX
0.10.2 (`tools/record.py stats_more` records JAX's results in
tests/data/stats_more_reference.json; tests/scipy/test_stats_more.py compares)."""
from __future__ import annotations

import numpy as np

rng = np.random.default_rng(11)
X = np.linspace(-4.0, 4.0, 17).astype(np.float32)
LOWER = np.array([-np.inf, -2.0, -1.0, 0.5, 2.5, -30.0], np.float32)[:, None]
UPPER = np.array([np.inf, 1.0, 3.0, 2.0, 6.0, -25.0], np.float32)[:, None]
TAIL = np.array([-31.0, -29.0, -27.5, -26.0, -25.0, 0.0], np.float32)
ANGLES = np.linspace(-0.5, 7.0, 12).astype(np.float32)
BETAS = np.array([0.5, 1.0, 2.0, 3.5], np.float32)[:, None]
K = np.arange(-1, 12).astype(np.float32)
COUNTS = np.array([[2, 0, 3], [1, 1, 3], [5, 0, 0], [2, 2, 2]], np.int32)
P3 = np.array([0.2, 0.3, 0.5], np.float32)
MU = np.array([0.0, 0.3, 4.0, 9.9, 10.0, 55.0, 99.0, 100.0, 400.0], np.float32)
SAMPLE = rng.integers(0, 5, size=(6, 7)).astype(np.float32)
TIES = np.array([3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0, 5.0, 3.0, 5.0], np.float32)
NORMAL = rng.normal(size=(5, 8)).astype(np.float32)


def cases(lib):
    st = lib.scipy.stats
    out = {}
    for fn in ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"):
        f = getattr(st.truncnorm, fn)
        out[f"truncnorm.{fn}"] = lambda f=f: f(X, LOWER, UPPER)
        out[f"truncnorm.{fn}.loc_scale"] = lambda f=f: f(X, LOWER, UPPER, 0.5, 2.0)
        out[f"truncnorm.{fn}.tail"] = lambda f=f: f(TAIL, -30.0, -25.0)
    for fn in ("logpdf", "pdf", "cdf"):
        f = getattr(st.gennorm, fn)
        out[f"gennorm.{fn}"] = lambda f=f: f(X, BETAS)
    concentrations = np.array([[-0.1], [0.3], [0.8], [1.0]], np.float32)
    for fn in ("logpdf", "pdf"):
        f = getattr(st.wrapcauchy, fn)
        out[f"wrapcauchy.{fn}"] = lambda f=f: f(ANGLES, concentrations)
    for fn in ("logpmf", "pmf"):
        f, g = getattr(st.betabinom, fn), getattr(st.multinomial, fn)
        out[f"betabinom.{fn}"] = lambda f=f: f(K, 10.0, 2.5, 0.7)
        out[f"betabinom.{fn}.bad"] = lambda f=f: f(
            3.0, np.array([-1.0, 5.0, 5.0]), np.array([1.0, 0.0, 1.0]), 1.0)
        out[f"multinomial.{fn}"] = lambda g=g: g(COUNTS[0], 5, P3)
        out[f"multinomial.{fn}.wrong_n"] = lambda g=g: g(COUNTS[0], 6, P3)
    out["poisson.entropy"] = lambda: st.poisson.entropy(MU)
    out["mode.axis0"] = lambda: tuple(st.mode(SAMPLE))
    out["mode.axis1_keepdims"] = lambda: tuple(st.mode(SAMPLE, axis=1, keepdims=True))
    out["mode.none"] = lambda: tuple(st.mode(SAMPLE, axis=None))
    for method in ("average", "min", "max", "dense", "ordinal"):
        out[f"rankdata.{method}"] = lambda m=method: st.rankdata(TIES, m)
        out[f"rankdata.{method}.axis1"] = lambda m=method: st.rankdata(SAMPLE, m, axis=1)
    out["rankdata.nan"] = lambda: st.rankdata(np.array([1.0, np.nan, 0.5], np.float32))
    out["sem"] = lambda: st.sem(NORMAL)
    out["sem.axis1_ddof0"] = lambda: st.sem(NORMAL, axis=1, ddof=0, keepdims=True)
    out["sem.none"] = lambda: st.sem(NORMAL, axis=None)
    out["sem.omit"] = lambda: st.sem(np.where(NORMAL > 1.0, np.nan, NORMAL),
                                     nan_policy="omit")
    return out
