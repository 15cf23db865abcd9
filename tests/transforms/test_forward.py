"""Forward mode (issue 14): jvp, linearize, jacfwd, hessian, linear_transpose through the
forward pass, checked against central finite differences (float64) and reverse mode; the
control flow (cond, while_loop, fori_loop, scan), compositions with vmap, jit, pmap and
collectives, JAX's float0 tangents for integers, jvp/vjp consistency over random
programs (hypothesis), the ``jvp`` stage of the dump, and user-facing errors."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracle import numeric_grad
from primcheck import check_jvp

import spmdc
import spmdc.numpy as jnp
from spmdc import lax
from spmdc.compiler.passes import recording
from spmdc.core import dtypes


@pytest.fixture(autouse=True)
def x64():
    previous = dtypes.enable_x64(True)
    yield
    dtypes.enable_x64(previous)


def close(got, want, rtol=1e-7, atol=1e-9):
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=rtol, atol=atol)


def directional(f, x, v, eps=1e-6):
    """Central finite difference of f at x along v (float64)."""
    return (np.asarray(f(x + eps * v)) - np.asarray(f(x - eps * v))) / (2 * eps)


def f_mix(x):
    return jnp.tanh(x) * jnp.exp(-x ** 2) + jnp.sum(jnp.sin(x)) / (1.0 + x ** 2)


# --- jvp -------------------------------------------------------------------------------------

def test_jvp_matches_finite_differences_and_returns_the_value():
    x, v = np.linspace(-1.0, 1.2, 5), np.random.default_rng(0).normal(size=5)
    y, t = spmdc.jvp(f_mix, (x,), (v,))
    close(y, f_mix(x))
    close(t, directional(f_mix, x, v), rtol=1e-6)


def test_jvp_pytrees_several_arguments_and_has_aux():
    def f(p, s):
        return {"a": p["w"] * s, "b": (jnp.sum(p["w"] ** 2), s * 3.0)}, {"n": 3}

    p, s = {"w": np.array([1.0, -2.0])}, 0.5
    tp, ts = {"w": np.array([0.1, 0.3])}, 2.0
    out, tangent, aux = spmdc.jvp(f, (p, s), (tp, ts), has_aux=True)
    assert int(aux["n"]) == 3
    close(out["a"], p["w"] * s)
    close(tangent["a"], tp["w"] * s + p["w"] * ts)
    close(tangent["b"][0], 2 * np.sum(p["w"] * tp["w"]))
    close(tangent["b"][1], 3 * ts)


def test_integer_primals_take_float0_tangents_and_integer_outputs_give_float0():
    t0 = np.zeros((), spmdc.float0)
    (y, n2), (ty, tn) = spmdc.jvp(lambda x, n: (x * n, n * 2), (1.5, 3), (1.0, t0))
    close(y, 4.5)
    close(ty, 3.0)
    assert int(n2) == 6
    assert tn.dtype == spmdc.float0 and tn.shape == ()
    with pytest.raises(TypeError, match="float0"):
        spmdc.jvp(lambda x, n: x * n, (1.5, 3), (1.0, 1))


def test_jvp_errors_name_the_mismatch():
    with pytest.raises(ValueError, match=r"tangent 0 has shape \(2,\)"):
        spmdc.jvp(jnp.sin, (np.ones(3),), (np.ones(2),))
    with pytest.raises(TypeError, match="float32"):
        spmdc.jvp(jnp.sin, (np.ones(3),), (np.ones(3, np.float32),))
    with pytest.raises(TypeError, match="same tree structure"):
        spmdc.jvp(lambda a: a[0], ((np.ones(2), 1.0),), ([np.ones(2), 1.0],))
    with pytest.raises(TypeError, match="tuples or lists"):
        spmdc.jvp(jnp.sin, np.ones(3), np.ones(3))
    # and forward mode still works afterwards
    close(spmdc.jvp(jnp.sin, (0.0,), (1.0,))[1], 1.0)


def test_top_level_jvp_sees_a_changed_global_as_jax_does():
    scale = {"k": 1.0}

    def f(x):
        return x * scale["k"]
    close(spmdc.jvp(f, (1.0,), (1.0,))[1], 1.0)
    scale["k"] = 3.0
    close(spmdc.jvp(f, (1.0,), (1.0,))[1], 3.0)


# --- linearize -------------------------------------------------------------------------------

def test_linearize_equals_jvp_is_reusable_and_does_no_primal_work():
    x = np.linspace(0.1, 1.0, 4)
    with recording() as stages:
        y, f_jvp = spmdc.linearize(f_mix, x)
    close(y, f_mix(x))
    linear = [f for name, f in stages if name == "cleanup" and f.name.endswith("_linear")][-1]
    prims = {e.prim.name for e in linear.eqns}
    assert not prims & {"tanh", "exp", "sin", "cos"}, prims       # tangent arithmetic only
    rng = np.random.default_rng(1)
    for _ in range(3):
        v = rng.normal(size=4)
        close(f_jvp(v), spmdc.jvp(f_mix, (x,), (v,))[1])


def test_linearize_through_a_while_loop_and_under_jit():
    def g(x):
        return lax.while_loop(lambda c: c[0] < 4, lambda c: (c[0] + 1, jnp.sin(c[1]) * x),
                              (0, x))[1]

    y, f_jvp = spmdc.linearize(g, 0.7)
    close(y, g(0.7))
    close(f_jvp(1.0), directional(g, 0.7, 1.0), rtol=1e-6)
    close(spmdc.jit(lambda x, v: spmdc.linearize(g, x)[1](v))(0.7, 2.0),
          2 * directional(g, 0.7, 1.0), rtol=1e-6)


# --- jacfwd, hessian, linear_transpose -----------------------------------------------------

def test_jacfwd_equals_jacrev_with_argnums_and_pytrees():
    def f(x, y):
        return {"u": jnp.sin(x) * y[0], "v": jnp.outer(x, y[1])}

    x, y = np.array([0.3, -0.2, 1.1]), (2.0, np.array([1.0, 4.0]))
    fwd = spmdc.jacfwd(f, argnums=(0, 1))(x, y)
    close(fwd["u"][0], np.diag(np.cos(x) * 2.0))
    close(fwd["u"][1][0], np.sin(x))
    assert fwd["v"][0].shape == (3, 2, 3) and fwd["v"][1][1].shape == (3, 2, 2)
    rev = spmdc.jacrev(lambda a: jnp.tanh(a) * jnp.sum(a))(x)
    close(spmdc.jacfwd(lambda a: jnp.tanh(a) * jnp.sum(a))(x), rev)


def test_jacfwd_has_aux_integer_outputs_and_integer_inputs():
    jac, aux = spmdc.jacfwd(lambda x: (x ** 2, x.sum()), has_aux=True)(np.arange(3.0))
    close(jac, np.diag(2 * np.arange(3.0)))
    close(aux, 3.0)
    j_float, j_int = spmdc.jacfwd(lambda x: (x ** 2, x.astype(int)))(np.arange(3.0))
    assert j_int.dtype.kind == "i" and j_int.shape == (3, 3) and not np.asarray(j_int).any()
    with pytest.raises(TypeError, match="real-valued"):
        spmdc.jacfwd(lambda n: n * 2)(np.arange(3))


def test_hessian_is_forward_over_reverse_and_matches_finite_differences():
    def f(x):
        return jnp.sum(jnp.sin(x) * x ** 2) + jnp.prod(x)

    x = np.array([0.3, -0.7, 1.2])
    with recording() as stages:
        h = spmdc.hessian(f)(x)
    assert "jvp" in [name for name, _ in stages]
    want = np.stack([numeric_grad(lambda z, i=i: spmdc.grad(f)(z)[i], x) for i in range(3)])
    close(h, want, rtol=1e-5, atol=1e-6)
    close(h, spmdc.jacrev(spmdc.jacrev(f))(x), rtol=1e-10)


def test_linear_transpose_and_its_refusal_of_nonlinear_functions():
    a = np.array([[1.0, 2.0, 0.5], [0.0, -1.0, 3.0]])

    def f(x):
        return a @ x, 2.0 * x.sum()

    (ct,) = spmdc.linear_transpose(f, np.ones(3))((np.array([1.0, -1.0]), 3.0))
    close(ct, a.T @ np.array([1.0, -1.0]) + 6.0)
    with pytest.raises(TypeError, match="not linear"):
        spmdc.linear_transpose(jnp.sin, np.ones(3))
    with pytest.raises(TypeError, match="structure"):
        spmdc.linear_transpose(f, np.ones(3))(np.ones(2))


@pytest.mark.parametrize("reverse", [False, True])
def test_cumprod_jvp_is_finite_at_zeros(reverse):
    from spmdc.compiler.primitives.cumulative import cumprod_p
    x = np.array([[0.5, 0.0, 2.0, -1.5, 0.0], [1.2, -0.7, 0.3, 2.0, 0.9]])
    check_jvp(cumprod_p, [x], {"axis": 1, "reverse": reverse})   # finite differences


# --- control flow ----------------------------------------------------------------------------

def test_jvp_through_cond_while_fori_and_scan():
    def branchy(x):
        return lax.cond(jnp.sum(x) > 0, lambda z: jnp.sin(z) * 2.0, lambda z: z ** 3, x)

    def loopy(x):
        return lax.while_loop(lambda c: c[1] < 3, lambda c: (c[0] * jnp.cos(c[0]), c[1] + 1),
                              (x, 0))[0]

    def fori_dynamic(x, n):
        return lax.fori_loop(0, n, lambda i, c: c * x + jnp.sin(c), x)

    def scanned(x):
        def step(c, xi):
            c = jnp.tanh(c * xi + x[0])
            return c, c * xi
        c, ys = lax.scan(step, x[1], x)
        return jnp.sum(ys) + c

    rng = np.random.default_rng(2)
    for f in [branchy, lambda x: branchy(-x), loopy, lambda x: fori_dynamic(x, 3),
              lambda x: lax.fori_loop(0, 3, lambda i, c: c * jnp.sin(x), x), scanned]:
        x, v = rng.normal(size=4), rng.normal(size=4)
        y, t = spmdc.jvp(f, (x,), (v,))
        close(y, f(x))
        close(t, directional(f, x, v), rtol=1e-5, atol=1e-7)
    # a traced trip count: forward mode works where reverse mode cannot (as in JAX)
    x, v = rng.normal(size=4), rng.normal(size=4)
    t = spmdc.jit(lambda x, v, n: spmdc.jvp(lambda z: fori_dynamic(z, n), (x,), (v,))[1])(
        x, v, 3)
    close(t, directional(lambda z: fori_dynamic(z, 3), x, v), rtol=1e-5)


def test_jacfwd_of_a_while_loop_whose_reverse_mode_is_an_error():
    def f(x):
        return lax.while_loop(lambda c: jnp.max(jnp.abs(c)) < 10.0, lambda c: c * 1.5 + x, x)

    x = np.array([0.5, 1.0])
    jac = spmdc.jacfwd(f)(x)
    want = np.stack([directional(f, x, e) for e in np.eye(2)], axis=-1)
    close(jac, want, rtol=1e-5)


# --- compositions ----------------------------------------------------------------------------

def test_vmap_of_jvp_and_jvp_of_vmap_agree():
    xs, vs = np.random.default_rng(3).normal(size=(2, 5, 3))
    per = spmdc.vmap(lambda x, v: spmdc.jvp(f_mix, (x,), (v,))[1])(xs, vs)
    whole = spmdc.jvp(spmdc.vmap(f_mix), (xs,), (vs,))[1]
    close(per, whole)
    close(per[2], directional(f_mix, xs[2], vs[2]), rtol=1e-6)


def test_jvp_of_grad_and_grad_of_jvp():
    def f(x):
        return jnp.sum(jnp.sin(x) ** 2 * x)

    x, v = np.array([0.2, 0.9, -0.4]), np.array([1.0, 0.5, -2.0])
    hvp = spmdc.jvp(spmdc.grad(f), (x,), (v,))[1]
    close(hvp, spmdc.hessian(f)(x) @ v, rtol=1e-10)
    g = spmdc.grad(lambda z: spmdc.jvp(f, (z,), (v,))[1])(x)
    close(g, hvp, rtol=1e-10)


@pytest.mark.devices(4)
@pytest.mark.parametrize("collective", ["psum", "pmax", "all_gather", "ppermute"])
def test_pmap_of_jvp_with_collectives_matches_named_vmap(collective):
    n = 4

    def body(x):
        y = jnp.sin(x) * 1.5
        if collective == "psum":
            return lax.psum(y, "i") * x
        if collective == "pmax":
            return lax.pmax(y, "i") + x
        if collective == "all_gather":
            return jnp.sum(lax.all_gather(y, "i"), axis=0) * x
        return lax.ppermute(y, "i", [(k, (k + 1) % n) for k in range(n)]) * x

    def jvp_body(x, v):
        return spmdc.jvp(body, (x,), (v,))

    rng = np.random.default_rng(4)
    xs, vs = rng.normal(size=(n, 3)), rng.normal(size=(n, 3))
    got = spmdc.pmap(jvp_body, axis_name="i")(xs, vs)
    want = spmdc.vmap(jvp_body, axis_name="i")(xs, vs)
    close(got[0], want[0], rtol=1e-12)
    close(got[1], want[1], rtol=1e-12)
    whole = spmdc.vmap(body, axis_name="i")
    close(want[1], directional(whole, xs, vs), rtol=1e-5, atol=1e-7)


def test_jacfwd_is_vmap_of_jvp_in_the_dump():
    with recording() as stages:
        spmdc.jit(spmdc.jacfwd(jnp.sin)).lower(np.ones(3))
    names = [name for name, _ in stages]
    assert "jvp" in names and "vmap" in names and "grad" not in names


# --- jvp against vjp over random programs --------------------------------------------------

UNARY = [jnp.sin, jnp.tanh, jnp.exp, lambda x: jnp.log1p(x * x), jnp.cos,
         lambda x: jnp.sqrt(x * x + 1.0), lambda x: x ** 3, jnp.abs, jnp.arctan]
BINARY = [jnp.add, jnp.multiply, jnp.subtract, lambda a, b: a / (b * b + 1.0), jnp.maximum,
          jnp.arctan2, lambda a, b: jnp.where(a > b, a * b, a - b)]
SHAPING = [lambda x: x.T, lambda x: jnp.cumsum(x, axis=-1), lambda x: jnp.flip(x, 0),
           lambda x: jnp.sum(x, axis=0, keepdims=True) * x, lambda x: x @ x.T @ x,
           lambda x: jnp.concatenate([x, x[::-1] * 2.0], axis=0)[1:1 + x.shape[0]],
           lambda x: jnp.max(x, axis=-1, keepdims=True) + x,
           lambda x: jnp.pad(x, ((1, 0), (0, 1)))[:-1, 1:]]


@st.composite
def programs(draw):
    ops = draw(st.lists(st.tuples(st.sampled_from(["u", "b", "s"]), st.integers(0, 20)),
                        min_size=1, max_size=5))
    shape = draw(st.tuples(st.integers(1, 4), st.integers(1, 4)))
    shape = (shape[0], shape[0]) if any(k == "s" for k, _ in ops) else shape

    def f(x, y):
        for kind, k in ops:
            if kind == "u":
                x = UNARY[k % len(UNARY)](x)
            elif kind == "b":
                x, y = BINARY[k % len(BINARY)](x, y), x
            else:
                x = SHAPING[k % len(SHAPING)](x)
        return x * 0.5 + y
    return f, shape


@settings(max_examples=15, deadline=None)
@given(programs(), st.integers(0, 2 ** 16))
def test_jvp_and_vjp_are_transposes(program, seed):
    f, shape = program
    rng = np.random.default_rng(seed)
    x, y, vx, vy = rng.normal(size=(4, *shape))
    out, tangent = spmdc.jvp(f, (x, y), (vx, vy))
    u = rng.normal(size=np.shape(out))
    _, pull = spmdc.vjp(f, x, y)
    gx, gy = pull(u)
    lhs = np.sum(np.asarray(tangent) * u)
    rhs = np.sum(vx * np.asarray(gx)) + np.sum(vy * np.asarray(gy))
    np.testing.assert_allclose(lhs, rhs, rtol=1e-8, atol=1e-8)


def test_spmdc_dump_shows_the_jvp_stage_and_the_custom_rule(tmp_path, capsys):
    from spmdc import cli
    src = tmp_path / "prog.py"
    src.write_text(
        "import spmdc, spmdc.numpy as jnp\n"
        "@spmdc.custom_jvp\n"
        "def softplus(x):\n"
        "    return jnp.log1p(jnp.exp(x))\n"
        "softplus.defjvps(lambda t, ans, x: t / (1.0 + jnp.exp(-x)))\n"
        "def f(x):\n"
        "    return jnp.sum(jnp.sin(x) * softplus(x))\n"
        "hvp = spmdc.jit(lambda x, v: spmdc.jvp(spmdc.grad(f), (x,), (v,))[1])\n")
    assert cli.main(["dump", f"{src}:hvp", "--arg", "f32[3]", "--arg", "f32[3]",
                     "--stages"]) == 0
    assert "jvp" in capsys.readouterr().out.split()
    assert cli.main(["dump", f"{src}:hvp", "--arg", "f32[3]", "--arg", "f32[3]",
                     "--color", "never"]) == 0
    out = capsys.readouterr().out
    assert "custom_jvp_call" in out and "== jvp ==" in out
