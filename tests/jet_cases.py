"""jax.experimental.jet on one program per Taylor rule, run on spmdc and on JAX 0.10.2
(`tools/record.py jet` records JAX's results in tests/data/jet_reference.json;
tests/experimental/test_jet.py compares, and checks every program against repeated jvp):
each program's jet at third order under jit, the options (unscaled terms, a pytree of
outputs, a fifth order, a jet inside a jet, vmap and grad of a jet), and bad input and
primitives without a rule (recorded as JAX's exception)."""
from __future__ import annotations

import importlib

import numpy as np

rng = np.random.default_rng(27)
POSITIVE = np.array([0.25, 0.4, 0.55, 0.8], np.float32)        # in (0, 1): log, erf_inv, atanh
SIGNED = np.array([-1.3, -0.4, 0.6, 1.7], np.float32)
OTHER = np.array([0.9, 0.4, 1.6, 1.1], np.float32)             # ties POSITIVE at [1]
MATRIX = rng.normal(size=(3, 4)).astype(np.float32)
RIGHT = rng.normal(size=(4, 2)).astype(np.float32)
TIED = np.array([[0.5, 1.5, 1.5], [2.0, -1.0, 0.25]], np.float32)
ORDER = 3


def _terms(shape, order=ORDER):
    return tuple(rng.normal(size=shape).astype(np.float32) for _ in range(order))


TERMS = {name: _terms(x.shape) for name, x in (("positive", POSITIVE), ("signed", SIGNED),
                                                ("other", OTHER), ("matrix", MATRIX),
                                                ("right", RIGHT), ("tied", TIED))}
TERMS5 = _terms(SIGNED.shape, 5)
INDICES = np.array([2, 0, 2], np.int32)


def programs(lib):
    """name -> (function, primals, series): a program per Taylor rule (the name says
    which), with third-order series."""
    jnp, lax = lib.numpy, lib.lax
    p, s, o = POSITIVE, SIGNED, OTHER
    tp, ts, to = TERMS["positive"], TERMS["signed"], TERMS["other"]
    unary = {
        "exp": (jnp.exp, s, ts), "log": (jnp.log, p, tp), "sin": (jnp.sin, s, ts),
        "cos": (jnp.cos, s, ts), "sinh": (jnp.sinh, s, ts), "cosh": (jnp.cosh, s, ts),
        "tanh": (jnp.tanh, s, ts), "logistic": (lax.logistic, s, ts),
        "erf": (lax.erf, s, ts), "erf_inv": (lax.erf_inv, p, tp), "erfc": (lax.erfc, s, ts),
        "expm1": (lax.expm1, s, ts), "log1p": (lax.log1p, p, tp), "sqrt": (lax.sqrt, p, tp),
        "rsqrt": (lax.rsqrt, p, tp), "asinh": (lax.asinh, s, ts),
        "acosh": (lambda x: lax.acosh(x + 1), p, tp), "atanh": (lax.atanh, p, tp),
        "abs": (lax.abs, s, ts), "neg": (lambda x: -jnp.sin(x), s, ts),
        "integer_pow.3": (lambda x: lax.integer_pow(x, 3), s, ts),
        "integer_pow.-2": (lambda x: lax.integer_pow(x, -2), s, ts),
        "integer_pow.0": (lambda x: lax.integer_pow(x, 0), s, ts),
        "pow.constant": (lambda x: x ** 2.5, p, tp),
        "reduce_sum": (lambda x: jnp.sum(jnp.sin(x)), s, ts),
        "cumsum": (lambda x: lax.cumsum(jnp.sin(x)), s, ts),
        "cumprod": (lax.cumprod, s, ts), "cummax": (lax.cummax, s, ts),
        "cummin": (lambda x: lax.cummin(x, reverse=True), s, ts),
        "select_n": (lambda x: jnp.where(x > 0, x * x, jnp.sin(x)), s, ts),
        "gather": (lambda x: jnp.exp(x)[INDICES], s, ts),
        "dynamic_slice": (lambda x: lax.dynamic_slice(jnp.cos(x), (1,), (2,)), s, ts),
        "structural": (lambda x: jnp.pad(jnp.concatenate([x, x[::-1]]).reshape(2, 4).T,
                                         ((1, 0), (0, 1)))[1:, :2] * jnp.sin(x)[:, None],
                       s, ts),
        "broadcast": (lambda x: jnp.broadcast_to(x, (2, 4)) * jnp.cos(x), s, ts),
        "zero_rules": (lambda x: jnp.sign(x) * x + jnp.round(x) + jnp.floor(x * 3)
                       + lax.stop_gradient(x) * x + jnp.where(jnp.isfinite(x), 1., 0.), s, ts),
        "convert": (lambda x: x.astype(jnp.int32) + jnp.sin(x), s, ts),
        "fft": (lambda x: jnp.real(jnp.fft.ifft(jnp.fft.fft(x * x) * 2)), s, ts),
        "reduce_window_sum": (lambda x: lax.reduce_window(x * x, 0., lax.add, (2,), (1,),
                                                          "VALID"), s, ts),
        "logsumexp": (lib.scipy.special.logsumexp, s, ts),
        "gelu": (lib.nn.gelu, s, ts),
        "softplus": (lib.nn.softplus, s, ts),
    }
    out = {name: (f, (x,), (t,)) for name, (f, x, t) in unary.items()}
    binary = {
        "mul": lax.mul, "div": lax.div, "pow": lax.pow, "atan2": lax.atan2, "rem": lax.rem,
        "max": lax.max, "min": lax.min, "sub": lambda x, y: jnp.sin(x - y),
        "complex": lambda x, y: jnp.real(lax.complex(x, y) * lax.conj(lax.complex(y, x)))
        + lax.imag(lax.complex(x * x, y)),
        "scatter_add": lambda x, y: x.at[INDICES].add(y[:3] * y[:3]),
        "dynamic_update_slice": lambda x, y: lax.dynamic_update_slice(x, jnp.exp(y[:2]), (1,)),
    }
    out.update({name: (f, (p, o), (tp, to)) for name, f in binary.items()})
    out["clamp"] = (lambda x: lax.clamp(jnp.full_like(x, 0.3), x, jnp.full_like(x, 0.6)),
                    (p,), (tp,))
    out["dot_general"] = (jnp.dot, (MATRIX, RIGHT), (TERMS["matrix"], TERMS["right"]))
    out["conv_general_dilated"] = (
        lambda x, k: lax.conv_general_dilated(x[None, None], k[None, None], (1,), "VALID"),
        (s, p[:3]), (ts, tuple(t[:3] for t in tp)))
    out["reduce_max"] = (lambda x: jnp.max(x, axis=1), (TIED,), (TERMS["tied"],))
    out["reduce_min"] = (lambda x: jnp.min(x, axis=0), (TIED,), (TERMS["tied"],))
    return out


def _jet(lib):
    return importlib.import_module(f"{lib.__name__}.experimental.jet").jet


def _jitted(lib, f, **options):
    jet = _jet(lib)
    return lib.jit(lambda primals, series: jet(f, primals, series, **options))


def cases(lib):
    jnp, lax = lib.numpy, lib.lax
    jet = _jet(lib)
    out = {f"rule.{name}": (lambda f=f, x=x, t=t: _jitted(lib, f)(x, t))
           for name, (f, x, t) in programs(lib).items()}
    s, ts = SIGNED, TERMS["signed"]
    out["option.unscaled"] = lambda: _jitted(lib, jnp.exp, factorial_scaled=False)((s,), (ts,))
    out["option.pytree_out"] = lambda: _jitted(
        lib, lambda x, y: {"a": jnp.sin(x), "b": (x * y, jnp.ones(2))})(
            (s, OTHER), (ts, TERMS["other"]))
    out["option.order5"] = lambda: _jitted(lib, lambda x: jnp.tanh(jnp.sin(x)))((s,), (TERMS5,))
    out["option.eager"] = lambda: jet(jnp.sin, (0.5,), ((1.0, 0.0),))
    out["option.nested"] = lambda: _jitted(
        lib, lambda x: jet(jnp.sin, (x,), ((jnp.ones_like(x),),))[1][0] * x)((s,), (ts,))
    out["option.vmap"] = lambda: lib.jit(lib.vmap(
        lambda x, t: jet(jnp.sin, (x,), ((t, t),))))(s, ts[0])
    out["option.grad"] = lambda: lib.jit(lib.grad(
        lambda x: jet(jnp.sin, (x,), ((1.0, 0.0),))[1][1]))(0.5)
    out["error.no_rule"] = lambda: jet(jnp.tan, (0.3,), ((1.0, 0.0),))
    out["error.cond"] = lambda: jet(lambda x: lax.cond(x > 0, jnp.sin, jnp.cos, x), (0.5,),
                                    ((1.0, 0.0),))
    out["error.argmax"] = lambda: jet(jnp.argmax, (s,), (ts,))
    out["error.lengths"] = lambda: jet(lax.mul, (0.5, 0.2), ((1.0, 0.0), (1.0,)))
    out["error.pytree_primal"] = lambda: jet(lambda d: d["a"], ({"a": 1.0},), (({"a": 1.0},),))
    out["error.pytree_term"] = lambda: jet(lambda d: d, (1.0,), (([1.0],),))
    out["error.series_not_tuples"] = lambda: jet(jnp.sin, (0.5,), (1.0,))
    return out
