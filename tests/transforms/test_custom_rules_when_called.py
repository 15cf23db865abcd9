"""A custom_jvp rule runs when its call is made, inside grad/vjp/linearize/jvp (eager,
or a grad under jit), where an argument is perturbed, as JAX runs it: its errors are
raised from the call, where the caller can catch them, and never for a value JAX sees
unperturbed (Note [custom rules run when the call is made] in
transforms/custom_derivatives.py). The logs are JAX 0.10.2's for the same program."""
from __future__ import annotations

import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc import lax
from spmdc.custom_derivatives import SymbolicZero


@spmdc.custom_jvp
def refuse(x):
    return x


def _refuse_jvp(primals, tangents):
    raise RuntimeError("refuse was differentiated")


refuse.defjvp(_refuse_jvp)


@spmdc.custom_jvp
def stop_second(x, y):
    return x, y


def _stop_second_jvp(primals, tangents):
    return primals, (tangents[0], SymbolicZero(spmdc.typeof(primals[1])))


stop_second.defjvp(_stop_second_jvp, symbolic_zeros=True)

RAISED_FOR_A = [("a", "raised"), ("b", "ok"), ("stopped", "ok"), ("int", "ok")]


def _logged(log):
    def f(x):
        a, b = stop_second(x * 2.0, x * 3.0)
        for name, v in [("a", a), ("b", b), ("stopped", lax.stop_gradient(a)),
                        ("int", jnp.int32(3) + 1)]:
            try:
                refuse(v)
                log.append((name, "ok"))
            except RuntimeError:
                log.append((name, "raised"))
        return a + b
    return f


@pytest.mark.parametrize("transform", [
    lambda f: spmdc.grad(f)(1.0),
    lambda f: spmdc.linearize(f, 1.0),
    lambda f: spmdc.jvp(f, (1.0,), (1.0,)),
    lambda f: spmdc.vjp(f, 1.0),
    lambda f: spmdc.jit(spmdc.grad(f))(1.0),
], ids=["grad", "linearize", "jvp", "vjp", "jit_of_grad"])
def test_rule_errors_are_raised_from_the_call_where_perturbed(transform):
    log = []
    transform(_logged(log))
    assert log == RAISED_FOR_A


def test_no_rule_runs_without_differentiation():
    log = []
    assert float(spmdc.jit(_logged(log))(1.0)) == 5.0
    assert log == [("a", "ok"), ("b", "ok"), ("stopped", "ok"), ("int", "ok")]
