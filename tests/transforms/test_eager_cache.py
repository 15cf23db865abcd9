"""Eager transformations trace every call and reuse the program compiled for an equal
one (Note [eager transformations trace every call] in spmdc/transforms/jit.py; Note
[programs equal by structure] in spmdc/runtime/executable.py): a fresh wrapper per step
compiles once, and nothing a fresh trace would see differently is ever stale."""
from __future__ import annotations

import importlib
import inspect

import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc.compiler.ir import Eqn, Func, Lit, TensorType, Var
from spmdc.compiler.primitives.callbacks import HostCallback
from spmdc.compiler.primitives.elementwise import add_p, mul_p
from spmdc.runtime.executable import ProgramCache, program_key

jit_module = importlib.import_module("spmdc.transforms.jit")


@pytest.fixture
def compiled(monkeypatch):
    """The programs eager transformations compiled during the test, by structure."""
    programs = ProgramCache(256)
    monkeypatch.setattr(jit_module, "_compiled", programs)
    return programs


def _line_of(marker: str) -> int:
    lines = inspect.getsource(inspect.getmodule(_line_of)).splitlines()
    return next(i for i, text in enumerate(lines, 1) if marker in text and "_line_of" not in text)


# --- the model of W17: an MLP whose parameters are a dict ----------------------------------

def _mlp_params(seed=0):
    rng = np.random.default_rng(seed)
    return {"w1": (rng.normal(size=(6, 8)) / 3).astype(np.float32),
            "b1": np.zeros(8, np.float32),
            "w2": (rng.normal(size=(8, 3)) / 3).astype(np.float32),
            "b2": np.zeros(3, np.float32)}


def _batch(seed):
    rng = np.random.default_rng(100 + seed)
    x = rng.normal(size=(5, 6)).astype(np.float32)
    y = np.eye(3, dtype=np.float32)[rng.integers(0, 3, size=5)]
    return x, y


def _loss(params, x, y):
    h = jnp.maximum(x @ params["w1"] + params["b1"], 0.0)
    logits = h @ params["w2"] + params["b2"]
    shifted = logits - jnp.max(logits, axis=-1, keepdims=True)
    log_probs = shifted - jnp.log(jnp.sum(jnp.exp(shifted), axis=-1, keepdims=True))
    return -jnp.mean(jnp.sum(y * log_probs, axis=-1))


def _numpy_loss_and_grads(p, x, y):
    """The same loss and its gradient, by hand in float64."""
    p = {k: v.astype(np.float64) for k, v in p.items()}
    pre = x @ p["w1"] + p["b1"]
    h = np.maximum(pre, 0.0)
    logits = h @ p["w2"] + p["b2"]
    shifted = logits - logits.max(-1, keepdims=True)
    soft = np.exp(shifted) / np.exp(shifted).sum(-1, keepdims=True)
    value = -np.mean(np.sum(y * np.log(soft), -1))
    d_logits = (soft - y) / len(x)
    d_h = d_logits @ p["w2"].T * (pre > 0)
    return value, {"w1": x.T @ d_h, "b1": d_h.sum(0), "w2": h.T @ d_logits,
                   "b2": d_logits.sum(0)}


def _check(value, grads, params, x, y):
    want_value, want = _numpy_loss_and_grads({k: np.asarray(v) for k, v in params.items()},
                                             x, y)
    np.testing.assert_allclose(value, want_value, rtol=1e-5)
    for k in want:
        np.testing.assert_allclose(grads[k], want[k], rtol=1e-4, atol=1e-6)


def test_a_fresh_wrapper_every_step_compiles_once(compiled):
    params = spmdc.device_put(_mlp_params())
    for step in range(4):
        x, y = (spmdc.device_put(a) for a in _batch(step))
        value, grads = spmdc.value_and_grad(_loss)(params, x, y)
        _check(value, grads, params, np.asarray(x), np.asarray(y))
        params = spmdc.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads)
    assert len(compiled) == 1


def test_a_lambda_over_a_new_batch_every_step_uses_that_batch(compiled):
    params = _mlp_params()
    for step in range(4):
        x, y = _batch(step)
        value, grads = spmdc.value_and_grad(lambda p: _loss(p, x, y))(params)  # noqa: B023
        _check(value, grads, params, x, y)
    assert len(compiled) == 1           # the batch is an argument of the program


def test_grad_with_aux_and_argnums_compile_once(compiled):
    x, y = _batch(0)
    params = _mlp_params()
    for step in range(3):
        scale = np.float32(step + 1)
        g, aux = spmdc.grad(lambda p, s: (_loss(p, x, y) * s, s * 2), argnums=(0, 1),
                            has_aux=True)(params, scale)
        value, want = _numpy_loss_and_grads(params, x, y)
        np.testing.assert_allclose(g[0]["w2"], want["w2"] * scale, rtol=1e-4, atol=1e-6)
        np.testing.assert_allclose(g[1], value, rtol=1e-5)
        np.testing.assert_allclose(aux, 2 * scale)
    assert len(compiled) == 1


# --- never stale -----------------------------------------------------------------------------

def test_a_closure_cell_rebound_to_a_new_array_is_used():
    w = jnp.ones(3)

    def f(x):
        return jnp.sum(x * w)

    g = spmdc.grad(f)                         # one wrapper, called again
    x = jnp.arange(3.0)
    np.testing.assert_allclose(g(x), np.ones(3))
    w = jnp.full(3, 5.0)
    np.testing.assert_allclose(g(x), np.full(3, 5.0))
    np.testing.assert_allclose(spmdc.grad(f)(x), np.full(3, 5.0))


SCALE = 1.0
WEIGHTS = np.ones(3, np.float32)


def _scaled(x):
    return jnp.sum(x * x * WEIGHTS) * SCALE


def test_a_global_that_changes_is_seen():
    global SCALE, WEIGHTS
    g = spmdc.grad(_scaled)
    x = jnp.ones(3)
    try:
        np.testing.assert_allclose(g(x), np.full(3, 2.0))
        SCALE = 3.0                         # a Python scalar: a literal of the program
        np.testing.assert_allclose(g(x), np.full(3, 6.0))
        WEIGHTS = np.array([1.0, 2.0, 3.0], np.float32)   # an array: an argument
        np.testing.assert_allclose(g(x), [6.0, 12.0, 18.0])
        np.testing.assert_allclose(spmdc.value_and_grad(_scaled)(x)[0], 18.0)
    finally:
        SCALE, WEIGHTS = 1.0, np.ones(3, np.float32)


def test_a_captured_python_scalar_that_changes_is_a_new_program(compiled):
    x = jnp.ones(2)
    for lr in (0.5, 0.25, 0.5):
        np.testing.assert_allclose(spmdc.grad(lambda v: jnp.sum(v * v) * lr)(x),  # noqa: B023
                                   np.full(2, 2 * lr))
    assert len(compiled) == 2                 # 0.5's program is found again


def test_python_side_effects_run_every_call_as_in_jax():
    calls = []

    def f(x):
        calls.append(1)
        print("tracing f")
        return jnp.sum(jnp.sin(x))

    g = spmdc.grad(f)
    for _ in range(3):
        g(jnp.ones(2))
    spmdc.value_and_grad(f)(jnp.ones(2))
    spmdc.jvp(f, (jnp.ones(2),), (jnp.ones(2),))
    spmdc.vmap(f)(jnp.ones((2, 2)))
    assert len(calls) == 6


def test_vmap_and_jvp_wrappers_see_a_changed_closure():
    k = jnp.ones(3)
    v = spmdc.vmap(lambda x: x * k)
    np.testing.assert_allclose(v(jnp.ones((2, 3))), np.ones((2, 3)))
    k = jnp.full(3, 4.0)
    np.testing.assert_allclose(v(jnp.ones((2, 3))), np.full((2, 3), 4.0))
    for c in (2.0, 3.0):
        scale = jnp.asarray(c)
        _, t = spmdc.jvp(lambda x: x * scale, (jnp.ones(2),), (jnp.ones(2),))  # noqa: B023
        np.testing.assert_allclose(t, np.full(2, c))


def test_an_error_in_the_function_names_the_users_line_on_every_call():
    w = jnp.ones((3, 2))

    def f(x):
        return jnp.sum(x @ w)               # the line of the error (bad matmul)

    g = spmdc.grad(f)
    g(jnp.ones(3))
    w = jnp.ones((4, 2))
    for _ in range(2):
        with pytest.raises(TypeError) as info:
            g(jnp.ones(3))
        assert f"test_eager_cache.py:{_line_of('the line of the error')}" in str(info.value)


def test_a_host_callback_is_the_callback_of_this_call():
    seen = []
    for tag in ("a", "b"):
        def f(x, tag=tag):
            spmdc.debug.callback(lambda v: seen.append((tag, float(v))), x)
            return x * x
        np.testing.assert_allclose(spmdc.grad(f)(2.0), 4.0)
    assert seen == [("a", 2.0), ("b", 2.0)]


def test_programs_kept_are_bounded_and_cleared(monkeypatch):
    monkeypatch.setattr(jit_module, "_compiled", ProgramCache(2))
    for c in (1.0, 2.0, 3.0, 4.0):
        np.testing.assert_allclose(spmdc.grad(lambda x: x * c)(1.0), c)  # noqa: B023
    assert len(jit_module._compiled) <= 2
    spmdc.clear_caches()
    assert not jit_module._compiled


# --- program_key -----------------------------------------------------------------------------

def _one_eqn(prim, literal, **params):
    t = TensorType((), np.dtype(np.float32))
    x, out = Var(t), Var(t)
    return Func("f", (x,), (Eqn(prim, (x, Lit(literal, t)), params, (out,)),), (out,))


def test_program_key_is_equal_exactly_for_the_same_program():
    f = spmdc.make_ir(lambda x, y: jnp.sin(x) * y + 1.0)
    a = f(np.ones(3, np.float32), np.ones(3, np.float32))
    b = f(np.zeros(3, np.float32), np.ones(3, np.float32))
    assert program_key(a) == program_key(b) and hash(program_key(a)) == hash(program_key(b))
    c = f(np.ones(4, np.float32), np.ones(4, np.float32))
    assert program_key(a) != program_key(c)
    assert program_key(_one_eqn(add_p, 0.0)) != program_key(_one_eqn(add_p, -0.0))
    assert program_key(_one_eqn(add_p, 1)) != program_key(_one_eqn(add_p, True))
    assert program_key(_one_eqn(add_p, 1.0)) != program_key(_one_eqn(mul_p, 1.0))
    assert program_key(_one_eqn(add_p, 1.0, k=1)) != program_key(_one_eqn(add_p, 1.0, k=1.0))


def test_a_parameter_compared_by_identity_gives_no_key():
    callback = HostCallback(print, "print")
    assert program_key(_one_eqn(add_p, 1.0, callback=callback)) is None
    nested = _one_eqn(add_p, 1.0, body=_one_eqn(add_p, 1.0, callback=callback))
    assert program_key(nested) is None


def test_vjp_runs_the_function_once_and_pulls_back_through_that_run():
    calls = []
    w = jnp.full(3, 2.0)

    def f(x):
        calls.append(1)
        return jnp.sin(x) * w, {"sum": jnp.sum(x)}

    x = jnp.arange(3.0)
    out, vjp_fn, aux = spmdc.vjp(f, x, has_aux=True)
    np.testing.assert_allclose(out, np.sin(np.arange(3.0)) * 2, rtol=1e-6)
    np.testing.assert_allclose(aux["sum"], 3.0)
    w = jnp.full(3, 7.0)                # after vjp: the pullback is of the run vjp made
    for _ in range(2):
        (ct,) = vjp_fn(jnp.ones(3))
        np.testing.assert_allclose(ct, np.cos(np.arange(3.0)) * 2, rtol=1e-6)
    np.testing.assert_allclose(spmdc.vmap(vjp_fn)(jnp.eye(3))[0],
                               np.diag(np.cos(np.arange(3.0)) * 2), rtol=1e-6, atol=1e-7)
    assert len(calls) == 1              # as in JAX: vjp_fn does not run f again


@pytest.mark.devices(8)
def test_over_sharded_arguments_a_program_capturing_nothing_is_reused(compiled):
    from spmdc.sharding import NamedSharding, P, make_mesh
    sharding = NamedSharding(make_mesh((8,), ("x",)), P("x"))
    x = spmdc.device_put(jnp.arange(8.0), sharding)
    for c in (2.0, 3.0):
        w = spmdc.device_put(jnp.full(8, c), sharding)
        np.testing.assert_allclose(spmdc.grad(lambda v, w: jnp.sum(v * v * w))(x, w),
                                   2 * c * np.arange(8.0))
    assert len(compiled) == 1
    g = spmdc.grad(lambda v: jnp.sum(v * v * w))      # captures w: compiled per call
    np.testing.assert_allclose(g(x), 6 * np.arange(8.0))
    w = spmdc.device_put(jnp.full(8, 5.0), sharding)
    np.testing.assert_allclose(g(x), 10 * np.arange(8.0))
    assert len(compiled) == 1


def test_the_programs_kept_do_not_keep_the_values_a_call_captured(compiled):
    import gc
    import weakref

    def step(k):
        batch = np.arange(4.0, dtype=np.float32) + k
        np.testing.assert_allclose(spmdc.grad(lambda v: jnp.sum(v * batch))(jnp.ones(4)),
                                   batch)
        return weakref.ref(batch)

    captured = [step(k) for k in range(3)]
    assert len(compiled) == 1             # compiled by the first step, kept
    gc.collect()
    assert captured[0]() is None and captured[1]() is None
