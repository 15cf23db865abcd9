"""Eager autodiff: outside jit, grad/vjp/jvp/linearize/jacfwd/jacrev/hessian/vmap see
concrete primal values, so Python control flow on values works (Note [concrete values
while tracing] in spmdc/core/concrete.py); under jit the same code is still an error."""
import inspect

import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc import lax
from spmdc.core.tracing import ConcretizationTypeError


def abs_val(x):
    if x > 0:
        return x
    else:
        return -x


def doubling(x):                        # a Python while loop on a value
    while x < 10:
        x = x * 2
    return x


def test_readme_example():
    assert spmdc.grad(abs_val)(1.0) == 1.0
    assert spmdc.grad(abs_val)(-1.0) == -1.0
    g = spmdc.grad(abs_val)             # one wrapper, alternating branches
    assert [float(g(v)) for v in (2.0, -3.0, 4.0, -5.0)] == [1.0, -1.0, 1.0, -1.0]
    assert float(g(jnp.float32(-2.0))) == -1.0
    assert float(g(np.float32(2.0))) == 1.0


def test_while_loop_on_a_value_every_transformation():
    # 1.5 doubles three times: f(x) = 8 x near 1.5; 3.0 twice: f(x) = 4 x.
    assert float(spmdc.grad(doubling)(1.5)) == 8.0
    assert float(spmdc.grad(doubling)(3.0)) == 4.0
    value, g = spmdc.value_and_grad(doubling)(1.5)
    assert (float(value), float(g)) == (12.0, 8.0)
    out, pull = spmdc.vjp(doubling, 1.5)
    assert float(out) == 12.0 and float(pull(1.0)[0]) == 8.0
    out, t = spmdc.jvp(doubling, (1.5,), (1.0,))
    assert (float(out), float(t)) == (12.0, 8.0)
    out, lin = spmdc.linearize(doubling, 1.5)
    assert float(lin(2.0)) == 16.0
    assert float(spmdc.jacfwd(doubling)(1.5)) == 8.0
    assert float(spmdc.jacrev(doubling)(1.5)) == 8.0
    assert float(spmdc.hessian(lambda x: doubling(x) ** 2)(1.5)) == 128.0


def test_branch_on_array_values_and_pytrees():
    def f(params):
        w, b = params["w"], params["b"]
        if (w * b).sum() > 0:
            return (w ** 2).sum()
        return -(w * b).sum()
    w = jnp.arange(1.0, 4.0)
    g = spmdc.grad(f)({"w": w, "b": jnp.ones(3)})
    np.testing.assert_allclose(g["w"], 2 * np.arange(1.0, 4.0))
    np.testing.assert_allclose(g["b"], 0.0)
    g = spmdc.grad(f)({"w": w, "b": -jnp.ones(3)})
    np.testing.assert_allclose(g["w"], 1.0)
    np.testing.assert_allclose(g["b"], -np.arange(1.0, 4.0))


def test_jacobians_of_vector_functions_with_branches():
    def f(x):
        return jnp.sin(x) if x.sum() > 0 else x ** 3
    x = jnp.array([0.5, 1.0])
    np.testing.assert_allclose(spmdc.jacrev(f)(x), np.diag(np.cos([0.5, 1.0])), rtol=1e-6)
    np.testing.assert_allclose(spmdc.jacfwd(f)(-x), np.diag(3 * np.array([0.5, 1.0]) ** 2),
                               rtol=1e-6)


def test_int_item_and_index_read_primals():
    seen = []

    def f(x):
        n = int(x)
        seen.append((n, x.item(), [10, 20, 30, 40][x.astype(jnp.int32)]))
        return x * n + jnp.sum(jnp.ones(3)[:n])
    assert float(spmdc.grad(f)(3.0)) == 3.0
    assert seen == [(3, 3.0, 40)]


def test_float_and_complex_stay_errors_as_in_jax():
    # float() would cut the derivative silently, so JAX refuses it even in eager grad.
    with pytest.raises(ConcretizationTypeError, match="float"):
        spmdc.grad(lambda x: x * float(x))(2.0)
    with pytest.raises(TypeError, match="NumPy array"):
        spmdc.grad(lambda x: x * np.asarray(x))(2.0)


def test_newton_iteration_to_tolerance():
    def sqrt(a):
        y = a
        while abs_val(y * y - a) > 1e-5:
            y = 0.5 * (y + a / y)
        return y
    np.testing.assert_allclose(spmdc.grad(sqrt)(2.0), 0.5 / np.sqrt(2.0), rtol=1e-4)


def test_nested_grad_with_branches():
    def cube(x):
        return x ** 3 if x > 0 else -x ** 3
    assert float(spmdc.grad(spmdc.grad(cube))(2.0)) == 12.0
    assert float(spmdc.grad(spmdc.grad(cube))(-2.0)) == 12.0
    # the inner grad reads the outer trace's value through the closure
    assert float(spmdc.grad(lambda a: spmdc.grad(lambda b: a * b if a > 0 else -a * b)(1.0))(
        -3.0)) == -1.0


def test_under_jit_it_is_still_an_error_naming_the_line():
    line = inspect.getsourcelines(abs_val)[1] + 1          # the `if x > 0` line
    with pytest.raises(ConcretizationTypeError, match=rf"test_concrete.py:{line}\b"):
        spmdc.jit(spmdc.grad(abs_val))(1.0)
    with pytest.raises(ConcretizationTypeError):           # a constant inside jit too
        spmdc.jit(lambda: spmdc.grad(abs_val)(1.0))()
    with pytest.raises(ConcretizationTypeError):           # jit inside eager grad
        spmdc.grad(lambda x: spmdc.jit(abs_val)(x))(1.0)
    with pytest.raises(ConcretizationTypeError):           # a loop body is traced abstractly
        spmdc.grad(lambda x: lax.fori_loop(0, 2, lambda i, c: abs_val(c), x))(1.0)
    with pytest.raises(ConcretizationTypeError):
        spmdc.make_jaxpr(spmdc.grad(abs_val))(1.0)
    assert float(spmdc.grad(abs_val)(-1.0)) == -1.0        # and spmdc keeps working


def test_vmap_reads_unmapped_values_not_mapped_ones():
    c = jnp.array(1.0)
    np.testing.assert_allclose(spmdc.vmap(lambda y: y * (2 if c > 0 else 1))(jnp.ones(3)), 2.0)
    np.testing.assert_allclose(
        spmdc.vmap(lambda y, s: y * (2 if s > 0 else 1), in_axes=(0, None))(jnp.ones(3), -1.0),
        1.0)
    with pytest.raises(ConcretizationTypeError):
        spmdc.vmap(lambda y: y * (2 if y > 0 else 1))(jnp.ones(3))


def test_functions_are_traced_every_call_and_specialised_ones_never_reused():
    calls = []

    def smooth(x):
        calls.append(1)
        return jnp.sin(x) * 2

    g = spmdc.grad(smooth)
    for v in (1.0, 2.0, 3.0):
        np.testing.assert_allclose(g(v), 2 * np.cos(v), rtol=1e-6)
    # traced every call, as JAX runs it every call; compiled once (Note [eager
    # transformations trace every call] in transforms/jit.py)
    assert len(calls) == 3

    calls.clear()

    def branchy(x):
        calls.append(1)
        return abs_val(x)

    g = spmdc.grad(branchy)
    assert [float(g(v)) for v in (1.0, -1.0, 1.0)] == [1.0, -1.0, 1.0]
    assert len(calls) == 3              # a program read values: never reused


def test_readme_section_runs():
    import pathlib
    import re
    readme = (pathlib.Path(__file__).parents[2] / "README.md").read_text()
    section = readme.split("## Eager autodiff", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert blocks
    for block in blocks:
        exec(compile(block, "README.md", "exec"), {})


def test_custom_rules_may_branch_on_primal_values_outside_jit():
    @spmdc.custom_jvp
    def clip_gradient(x):
        return x

    @clip_gradient.defjvp
    def _(primals, tangents):
        (x,), (t,) = primals, tangents
        return x, t * (1.0 if x < 2 else 0.5)        # a branch on the primal, as in JAX

    assert float(spmdc.grad(lambda x: clip_gradient(x) * 3)(1.0)) == 3.0
    assert float(spmdc.grad(lambda x: clip_gradient(x) * 3)(3.0)) == 1.5

    @spmdc.custom_vjp
    def scaled(x):
        return x * 2

    def fwd(x):
        return x * 2, (10.0 if x > 0 else -10.0)

    scaled.defvjp(fwd, lambda m, ct: (ct * m,))
    assert float(spmdc.grad(scaled)(1.0)) == 10.0
    assert float(spmdc.grad(scaled)(-1.0)) == -10.0
    with pytest.raises(ConcretizationTypeError):
        spmdc.jit(spmdc.grad(lambda x: clip_gradient(x)))(1.0)
    # a rule runs every call, as the function does (Note [eager transformations trace
    # every call] in transforms/jit.py)
    calls = []

    @spmdc.custom_jvp
    def smooth(x):
        return jnp.sin(x)

    @smooth.defjvp
    def _(primals, tangents):
        calls.append(1)
        return jnp.sin(primals[0]), jnp.cos(primals[0]) * tangents[0]

    g = spmdc.grad(smooth)
    for v in (0.1, 0.2, 0.3):
        np.testing.assert_allclose(g(v), np.cos(v), rtol=1e-6)
    assert len(calls) == 3


@pytest.mark.devices(8)
def test_sharded_arguments_never_reuse_a_specialised_program():
    from spmdc.sharding import NamedSharding, P, make_mesh
    mesh = make_mesh((8,), ("x",))

    def f(x):
        if x.sum() > 0:
            return (x ** 2).sum()
        return -x.sum()

    g = spmdc.grad(f)
    for sign, want in ((1.0, 2.0), (-1.0, -1.0), (1.0, 2.0)):
        x = spmdc.device_put(jnp.full(8, sign), NamedSharding(mesh, P("x")))
        np.testing.assert_allclose(g(x), want)
