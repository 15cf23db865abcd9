"""checkpoint/remat, its policies, checkpoint_name, print_saved_residuals, and the scan VJP
that stores per-step residuals (Note [checkpoint], Note [scan residuals])."""
from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import spmdc as jax
import spmdc.numpy as jnp
from spmdc import lax
from spmdc.ad_checkpoint import checkpoint_name, print_saved_residuals, saved_residuals
from spmdc.cli import main

P = jax.checkpoint_policies
POLICIES = {
    "default": None,
    "nothing_saveable": P.nothing_saveable,
    "everything_saveable": P.everything_saveable,
    "dots_saveable": P.dots_saveable,
    "checkpoint_dots": P.checkpoint_dots,
    "dots_with_no_batch_dims_saveable": P.dots_with_no_batch_dims_saveable,
    "save_only_these_names": P.save_only_these_names("z"),
    "save_any_names_but_these": P.save_any_names_but_these("z"),
    "save_anything_except_these_names": P.save_anything_except_these_names("z"),
    "save_from_both_policies": P.save_from_both_policies(P.dots_saveable,
                                                         P.save_only_these_names("z")),
}
RNG = np.random.default_rng(0)
W = (RNG.normal(size=(4, 4)) / 2).astype(np.float32)
X = RNG.normal(size=(3, 4)).astype(np.float32)


def f(w, x):
    y = jnp.sin(x @ w)
    z = checkpoint_name(jnp.cos(y), "z")
    return jnp.sum(z * y)


def count(func, name: str) -> int:
    """Equations of primitive ``name`` in ``func`` and its sub-Funcs."""
    return str(func).count(f" = {name}(")


def close(a, b, tol=1e-5):
    for p, q in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b), strict=True):
        np.testing.assert_allclose(np.asarray(p), np.asarray(q), rtol=tol, atol=tol)


# --- checkpoint ------------------------------------------------------------------------------

@pytest.mark.parametrize("name", POLICIES)
def test_checkpoint_gradients_equal_plain_gradients(name):
    g = jax.jit(jax.grad(jax.checkpoint(f, policy=POLICIES[name]), argnums=(0, 1)))(W, X)
    close(g, jax.grad(f, argnums=(0, 1))(W, X))


SAVED = {   # what the VJP keeps beyond the arguments, per policy (prims of the savers)
    "nothing_saveable": [],
    "everything_saveable": ["output of sin", "named 'z'", "output of neg", "output of cos"],
    "dots_saveable": ["output of dot_general"],
    "dots_with_no_batch_dims_saveable": ["output of dot_general"],
    "save_only_these_names": ["named 'z'"],
    "save_any_names_but_these": [],
    "save_anything_except_these_names": ["output of sin", "output of cos", "output of neg",
                                         "output of cos"],
}


@pytest.mark.parametrize("name", SAVED)
def test_saved_residuals_per_policy(name):
    res = saved_residuals(jax.checkpoint(f, policy=POLICIES[name]), W, X)
    assert [src for _, src in res[:2]] == ["from the argument w", "from the argument x"]
    got = sorted(re.sub(r" from .*", "", src) for _, src in res[2:])
    assert got == sorted(SAVED[name])
    assert all(str(t) == "f32[3,4]" for t, _ in res[2:])


def test_print_saved_residuals(capsys):
    print_saved_residuals(jax.checkpoint(f, policy=P.dots_saveable), W, X)
    lines = capsys.readouterr().out.splitlines()
    assert lines[:2] == ["f32[4,4] from the argument w", "f32[3,4] from the argument x"]
    assert re.fullmatch(r"f32\[3,4\] output of dot_general from .*test_ad_checkpoint\.py:\d+:16 "
                        r"\(f\)", lines[2]), lines
    assert len(lines) == 3
    print_saved_residuals(lambda p: jnp.sum(p["a"] * p["a"]), {"a": X})
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "f32[3,4] from the argument p['a']"


def _two_layers(w1, w2, x):
    x = jnp.sin(jnp.dot(w1, x))
    x = jnp.sin(jnp.dot(w2, x))
    return x


def test_print_saved_residuals_as_jax(capsys):
    # JAX 0.10.2 prints these lines for this function (Note [residuals in JAX's order]):
    # each operation's own residuals before the next operation's, at file:line:column.
    print_saved_residuals(_two_layers, jnp.ones((5, 4)), jnp.ones((6, 5)), jnp.ones(4))
    line = _two_layers.__code__.co_firstlineno
    at = f"{__file__}:{{}}:8 (_two_layers)"
    assert capsys.readouterr().out.splitlines() == [
        "f32[5,4] from the argument w1", "f32[6,5] from the argument w2",
        "f32[4] from the argument x",
        f"f32[5] output of sin from {at.format(line + 1)}",
        f"f32[5] output of cos from {at.format(line + 1)}",
        f"f32[6] output of cos from {at.format(line + 2)}"]


def test_recomputation_is_in_the_gradient_program():
    """nothing_saveable: the backward pass recomputes the forward ops behind a barrier."""
    plain = jax.make_ir(jax.grad(f))(W, X)
    remat = jax.make_ir(jax.grad(jax.checkpoint(f)))(W, X)
    assert count(plain, "optimization_barrier") == 0
    assert count(remat, "optimization_barrier") == 1
    # the sin of the forward pass and the recomputed one (the forward one is dead here:
    # grad does not return the value), the recomputation reads the barrier's results
    text = str(remat)
    barrier = text.index("optimization_barrier(")
    assert text.index("dot_general(", barrier) > barrier
    # value_and_grad keeps the forward pass: the dot runs twice (forward and recomputed)
    both = jax.make_ir(jax.value_and_grad(jax.checkpoint(f)))(W, X)
    assert count(both, "dot_general") == count(jax.make_ir(jax.value_and_grad(f))(W, X),
                                               "dot_general") + 1
    saving = jax.make_ir(jax.value_and_grad(jax.checkpoint(f, policy=P.dots_saveable)))(W, X)
    assert count(saving, "dot_general") == count(both, "dot_general") - 1
    assert re.search(r"= checkpoint\(.*num_residuals=1", str(saving), re.S)


def test_recomputation_survives_xla():
    """The compiled program really recomputes (Note [the barrier on the CPU]) and needs
    less temporary memory than the plain gradient."""
    rng = np.random.default_rng(1)
    ws = [(rng.normal(size=(32, 256)).astype(np.float32) / 6,
           rng.normal(size=(256, 32)).astype(np.float32) / 16) for _ in range(4)]
    x = rng.normal(size=(512, 32)).astype(np.float32)

    def block(w, h):
        return h + jnp.tanh(h @ w[0]) @ w[1]

    def loss(ws, x, remat):
        layer = jax.checkpoint(block) if remat else block
        for w in ws:
            x = layer(w, x)
        return jnp.sum(x ** 2)

    compiled = {r: jax.jit(jax.grad(lambda ws, x: loss(ws, x, r), argnums=1))
                .lower(ws, x).compile() for r in (False, True)}
    dots = {r: len(re.findall(r"\bdot\(", c.as_text())) for r, c in compiled.items()}
    assert dots[True] == dots[False] + 4
    temp = {r: c.memory_analysis().temp_size_in_bytes for r, c in compiled.items()}
    assert temp[True] < temp[False] / 2, temp
    close(compiled[True](ws, x), compiled[False](ws, x), 1e-4)


def test_prevent_cse_false_has_no_barrier_in_the_executable():
    g = jax.jit(jax.grad(jax.checkpoint(f, prevent_cse=False))).lower(W, X).compile()
    assert "opt-barrier" not in g.as_text() and "conditional" not in g.as_text()
    close(g(W, X), jax.grad(f)(W, X))


def test_static_argnums_and_pytrees():
    def g(params, n, scale=1.0):
        for _ in range(n):                  # Python control flow on the static argument
            params = {"w": jnp.sin(params["w"]) * scale, "b": params["b"]}
        return jnp.sum(params["w"] * params["b"])
    ck = jax.checkpoint(g, static_argnums=(1,))
    p = {"w": X, "b": X + 1}
    close(jax.grad(lambda p: ck(p, 3))(p), jax.grad(lambda p: g(p, 3))(p))
    close(jax.jit(jax.grad(lambda p: ck(p, 2, scale=2.0)))(p),
          jax.grad(lambda p: g(p, 2, scale=2.0))(p))
    assert jax.remat is jax.checkpoint
    close(jax.checkpoint(g, static_argnums=1)(p, 2), g(p, 2))     # eager


def test_decorator_form_and_eager_checkpoint_name():
    @jax.checkpoint
    def g(x):
        return jnp.sum(jnp.exp(x))

    @jax.checkpoint(policy=P.dots_saveable)
    def h(x):
        return jnp.sum(x @ x.T)
    close(jax.grad(g)(X), np.exp(X))
    close(jax.grad(h)(W), 2 * (W + W.T) @ np.ones((4, 4), np.float32) / 2 * 0 + jax.grad(
        lambda x: jnp.sum(x @ x.T))(W))
    assert checkpoint_name(X, "a") is X


def test_higher_order_vmap_jvp_pmap():
    g = lambda x: jnp.sum(jnp.sin(x) ** 3)        # noqa: E731
    ck = jax.checkpoint(g)
    close(jax.grad(lambda x: jax.grad(ck)(x).sum())(X),
          jax.grad(lambda x: jax.grad(g)(x).sum())(X))
    close(jax.hessian(ck)(X[0]), jax.hessian(g)(X[0]))
    close(jax.vmap(jax.grad(ck))(X), jax.vmap(jax.grad(g))(X))
    close(jax.grad(lambda x: jax.vmap(ck)(x).sum())(X),
          jax.grad(lambda x: jax.vmap(g)(x).sum())(X))
    close(jax.jvp(ck, (X,), (X,)), jax.jvp(g, (X,), (X,)))
    n = jax.device_count()
    xs = RNG.normal(size=(n, 5)).astype(np.float32)
    close(jax.pmap(jax.grad(ck))(xs), jax.vmap(jax.grad(g))(xs))
    # with a collective in the checkpointed function (psum transposes to psum)
    got = jax.pmap(jax.grad(lambda x: jax.checkpoint(
        lambda y: jnp.sum(jax.lax.psum(jnp.sin(y), "i") * y))(x)), axis_name="i")(xs)
    want = jax.pmap(jax.grad(lambda y: jnp.sum(jax.lax.psum(jnp.sin(y), "i") * y)),
                    axis_name="i")(xs)
    close(got, want)


def test_nested_checkpoints():
    inner = jax.checkpoint(lambda x: jnp.sin(jnp.cos(x)))
    outer = jax.checkpoint(lambda x: jnp.sum(inner(x) * inner(x * 2)), policy=P.everything_saveable)
    plain = lambda x: jnp.sum(jnp.sin(jnp.cos(x)) * jnp.sin(jnp.cos(x * 2)))  # noqa: E731
    close(jax.jit(jax.grad(outer))(X), jax.grad(plain)(X))


def test_policy_errors():
    with pytest.raises(TypeError, match="should be a bool or `ad_checkpoint.Recompute`"):
        jax.grad(jax.checkpoint(f, policy=lambda *a, **k: "offload"))(W, X)
    with pytest.raises(TypeError, match="policy must be a function"):
        jax.checkpoint(f, policy="dots")
    with pytest.raises(TypeError, match="names"):
        P.save_only_these_names(3)
    with pytest.raises(ValueError, match="static_argnums 5 is out of range"):
        jax.jit(jax.checkpoint(f, static_argnums=5))(W, X)
    with pytest.raises(TypeError, match="static_argnums"):
        jax.jit(lambda x: jax.checkpoint(lambda x, s: x * len(s))(x, "abc"))(X)


def test_dump_shows_the_checkpoint_and_its_residuals(capsys):
    prog = Path(__file__).parent / "data" / "remat_programs.py"
    status = main(["dump", f"{prog}:step", "--arg", "f32[4,4]", "--arg", "f32[3,4]",
                   "--stage", "grad"])
    out = capsys.readouterr().out
    assert status == 0
    assert re.search(r"= checkpoint\(.*num_residuals=1, policy=dots_saveable", out, re.S)
    assert "optimization_barrier(" in out


def test_import_jax_ad_checkpoint_under_the_alias():
    saved = sys.modules.get("jax")
    sys.modules["jax"] = jax
    try:
        import jax.ad_checkpoint as ad  # noqa: PLC0415
        from jax.ad_checkpoint import checkpoint_name as cn  # noqa: PLC0415
        assert ad is sys.modules["spmdc.ad_checkpoint"] and cn is checkpoint_name
    finally:
        for key in [k for k in sys.modules if k == "jax" or k.startswith("jax.")]:
            del sys.modules[key]
        if saved is not None:
            sys.modules["jax"] = saved


UNARY = [jnp.sin, jnp.tanh, jnp.exp, lambda v: v * v, jnp.cos,
         lambda v: checkpoint_name(v, "z")]


@settings(max_examples=12)
@given(ops=st.lists(st.tuples(st.integers(0, len(UNARY)), st.booleans()), min_size=1,
                    max_size=5),
       policy=st.sampled_from(sorted(POLICIES)))
def test_checkpoint_of_random_programs(ops, policy):
    def prog(w, x):
        for k, use_dot in ops:
            x = x @ w if k == len(UNARY) else UNARY[k](x)
            if use_dot:
                x = jnp.tanh(x) + x
        return jnp.sum(x)
    with jax.enable_x64(True):
        w, x = W.astype(np.float64) / 2, X.astype(np.float64) / 2
        got = jax.grad(jax.checkpoint(prog, policy=POLICIES[policy]), argnums=(0, 1))(w, x)
        close(got, jax.grad(prog, argnums=(0, 1))(w, x), 1e-9)


# --- scan ------------------------------------------------------------------------------------

def rnn_loss(w, b, xs, h0, remat=False):
    def step(h, x):
        h = jnp.tanh(h @ w + x + b)
        return h, jnp.sin(h).sum()
    h, ys = lax.scan(jax.checkpoint(step, prevent_cse=False) if remat else step, h0, xs)

    def outer(c, x):                     # a nested scan with a const (w) and reverse
        c2, zs = lax.scan(lambda cc, xx: (cc * jnp.cos(xx) + w[0, 0], cc.sum()), c, x,
                          reverse=True)
        return c2, c2.sum() + zs.sum()
    c, zs = lax.scan(outer, h, xs.reshape(5, 2, 3))
    return (c ** 2).sum() + ys.sum() + zs.sum()


def rnn_args(dtype=np.float64):
    rng = np.random.default_rng(2)
    return (rng.normal(size=(3, 3)).astype(dtype) / 2, rng.normal(size=3).astype(dtype),
            rng.normal(size=(10, 3)).astype(dtype), rng.normal(size=3).astype(dtype))


def test_scan_vjp_against_finite_differences():
    with jax.enable_x64(True):
        args = rnn_args()
        grads = jax.jit(jax.grad(rnn_loss, argnums=(0, 1, 2, 3)))(*args)
        f64 = jax.jit(rnn_loss)
        eps = 1e-6
        for k, arg in enumerate(args):
            fd = np.zeros_like(arg)
            for idx in np.ndindex(arg.shape):
                up, dn = list(args), list(args)
                up[k], dn[k] = arg.copy(), arg.copy()
                up[k][idx] += eps
                dn[k][idx] -= eps
                fd[idx] = (float(f64(*up)) - float(f64(*dn))) / (2 * eps)
            np.testing.assert_allclose(np.asarray(grads[k]), fd, rtol=1e-6, atol=1e-7)


def test_scan_stored_residuals_equal_the_recompute_path():
    with jax.enable_x64(True):
        args = rnn_args()
        close(jax.grad(rnn_loss, argnums=(0, 1, 2, 3))(*args),
              jax.grad(lambda *a: rnn_loss(*a, remat=True), argnums=(0, 1, 2, 3))(*args),
              1e-12)


def tanh_rnn(w, xs, remat=False):
    body = lambda h, x: (jnp.tanh(h @ w + x), None)      # noqa: E731
    return lax.scan(jax.checkpoint(body) if remat else body, jnp.zeros(4), xs)[0].sum()


def test_scan_stores_residuals_and_checkpoint_recomputes():
    xs = RNG.normal(size=(6, 4)).astype(np.float32)
    stored = jax.make_ir(jax.grad(tanh_rnn))(W, xs)
    remat = jax.make_ir(jax.grad(lambda w, xs: tanh_rnn(w, xs, True)))(W, xs)
    scans = [e for e in stored.eqns if e.prim.name == "scan"]
    forward, backward = scans[0].params["body"], scans[1].params["body"]
    assert count(forward, "tanh") == 1 and count(backward, "tanh") == 0
    assert len(forward.outputs) > 2                 # the carry, the stacked residuals
    scans = [e for e in remat.eqns if e.prim.name == "scan"]
    assert count(scans[1].params["body"], "tanh") == 1          # recomputed per step
    assert count(scans[1].params["body"], "dot_general") == 3   # the step's + its VJP's
    close(jax.grad(tanh_rnn)(W, xs), jax.grad(lambda w, xs: tanh_rnn(w, xs, True))(W, xs))


def test_scan_invariant_values_are_not_stacked():
    def loss(w, xs):
        def body(h, x):
            wt = jnp.sin(w).T                  # depends on the const only
            return jnp.tanh(h @ wt + x), None
        return lax.scan(body, jnp.zeros(4), xs)[0].sum()
    xs = RNG.normal(size=(6, 4)).astype(np.float32)
    func = jax.make_ir(jax.grad(loss))(W, xs)
    forward = [e for e in func.eqns if e.prim.name == "scan"][0]
    assert all(v.type.shape != (6, 4, 4) for v in forward.outputs)


def test_scan_grad_under_vmap_pmap_and_grad_of_grad():
    xs = RNG.normal(size=(6, 4)).astype(np.float32)
    batch = RNG.normal(size=(3, 6, 4)).astype(np.float32)
    close(jax.vmap(jax.grad(tanh_rnn), in_axes=(None, 0))(W, batch),
          np.stack([jax.grad(tanh_rnn)(W, b) for b in batch]))
    close(jax.grad(lambda w: jax.vmap(tanh_rnn, in_axes=(None, 0))(w, batch).sum())(W),
          sum(jax.grad(tanh_rnn)(W, b) for b in batch), 1e-4)
    n = jax.device_count()
    per_dev = RNG.normal(size=(n, 6, 4)).astype(np.float32)
    got = jax.pmap(jax.grad(tanh_rnn), in_axes=(None, 0))(W, per_dev)
    close(got, np.stack([jax.grad(tanh_rnn)(W, b) for b in per_dev]), 1e-4)
    with jax.enable_x64(True):
        w, x = W.astype(np.float64), xs.astype(np.float64)
        g2 = jax.jit(lambda v: jnp.sum(jax.grad(lambda u: tanh_rnn(u, x))(v) ** 2))
        eps, d = 1e-6, np.zeros_like(w)
        d[1, 2] = 1.0
        fd = (float(g2(w + eps * d)) - float(g2(w - eps * d))) / (2 * eps)
        for remat in (False, True):
            hvp = jax.jit(jax.grad(lambda w: jnp.sum(
                jax.grad(lambda v: tanh_rnn(v, x, remat))(w) ** 2)))
            np.testing.assert_allclose(float(hvp(w)[1, 2]), fd, rtol=1e-5)


def test_policies_answer_with_saveable_and_recompute():
    from spmdc.ad_checkpoint import Recompute, Saveable

    def only_sin(prim, *_, **__):       # JAX's enum answers, as save_and_offload_... gives
        return Saveable if prim.name == "sin" else Recompute
    res = saved_residuals(jax.checkpoint(f, policy=only_sin), W, X)
    assert {re.sub(r" from .*", "", src) for _, src in res[2:]} == {"output of sin"}
    close(jax.grad(jax.checkpoint(f, policy=only_sin))(W, X), jax.grad(f)(W, X))
    with pytest.raises(TypeError, match="should be a bool or `ad_checkpoint.Recompute`"):
        saved_residuals(jax.checkpoint(f, policy=lambda *_, **__: "keep"), W, X)


def test_eager_checkpoint_traces_its_arguments_as_jax():
    # JAX binds remat eagerly too: the function sees traced arrays (a Python bool becomes
    # a traced bool, as Flax's nn.remat without static_argnums checks), static ones stay
    seen = []

    def f(x, train, mode):
        seen.append((isinstance(train, jax.Array), mode))
        return x * 2 + train

    out = jax.checkpoint(f, static_argnums=(2,))(np.ones(2, np.float32), True, "m")
    np.testing.assert_allclose(out, [3.0, 3.0])
    assert seen == [(True, "m")]
