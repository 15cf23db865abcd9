"""spmdc.debug's breakpoint (JAX's jdb, driven by a scripted stdin), log, and the debug
effects a jaxpr lists (texts as JAX 0.10.2 prints them)."""
from __future__ import annotations

import io
import logging
import sys

import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp


def _stopped(x):
    y = jnp.sin(x) * 2
    spmdc.debug.breakpoint()
    return y + 1


def test_breakpoint_under_jit_sees_the_computed_values(monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", io.StringIO("p y\np x.shape\nw\nno_such\npp [y[0]]\n"
                                                  "u\nd\nd\nc\n"))
    out = spmdc.jit(_stopped)(jnp.arange(3.0))
    np.testing.assert_allclose(np.asarray(out), np.sin(np.arange(3.0)) * 2 + 1, rtol=1e-6)
    text = capsys.readouterr().out
    line = _stopped.__code__.co_firstlineno + 2
    assert text.startswith("Entering jdb:\n(jdb) Array([0.       , 1.6829419, 1.8185948], "
                           "dtype=float32)\n(jdb) (3,)\n(jdb) Traceback:\n")
    assert f'  File "{__file__}", line {line}\n    spmdc.debug.breakpoint()\n' in text
    assert "(jdb) *** NameError: name 'no_such' is not defined\n" in text
    assert "(jdb) [Array(0., dtype=float32)]\n" in text
    assert f"(jdb) > {__file__}({line})\n" in text and "->      spmdc.debug.breakpoint()" in text
    assert "At bottommost frame." in text


def test_breakpoint_with_token_and_its_own_streams():
    out = io.StringIO()

    def f(x):
        z = x * 3
        return spmdc.debug.breakpoint(token=z, stdin=io.StringIO("p z\nc\n"), stdout=out)
    np.testing.assert_array_equal(np.asarray(spmdc.jit(f)(jnp.ones(2))), [3.0, 3.0])
    assert out.getvalue() == "Entering jdb:\n(jdb) Array([3., 3.], dtype=float32)\n(jdb) "
    with pytest.raises(ValueError, match="`ordered` and `token` are mutually exclusive"):
        spmdc.debug.breakpoint(token=jnp.ones(1), ordered=True)


def test_breakpoint_backends_register_and_quit_exits():
    seen = []
    spmdc.debug.register_debugger("recording", lambda frames, thread, **kw: seen.append(
        (frames[0].locals["a"], kw)), priority=5)
    try:
        def f(a):
            spmdc.debug.breakpoint(num_frames=1, note=1)
            return a
        spmdc.jit(f)(jnp.full(2, 7.0))
    finally:
        del spmdc.debug._debuggers["recording"]
    np.testing.assert_array_equal(np.asarray(seen[0][0]), [7.0, 7.0])
    assert seen[0][1] == {"note": 1}
    with pytest.raises(SystemExit):
        spmdc.debug.breakpoint(stdin=io.StringIO("q\n"), stdout=io.StringIO())


def test_debug_log_and_effects(caplog):
    def f(x):
        spmdc.debug.log("value {x}", x=x)
        return x
    with caplog.at_level(logging.INFO, logger="jax._src.debugging"):
        spmdc.jit(f)(jnp.ones(2))
    record = caplog.records[-1]
    assert (record.getMessage(), record.levelno) == ("value [1. 1.]", logging.INFO)
    assert (record.pathname, record.lineno) == (__file__, f.__code__.co_firstlineno + 1)

    def g(x):
        spmdc.debug.print("{}", x)
        spmdc.debug.print("{}", x, ordered=True)
        return x
    jaxpr = spmdc.make_jaxpr(g)(1.0)
    assert sorted(map(str, jaxpr.effects)) == ["Debug", "OrderedDebug"]
    assert [type(e) for e in jaxpr.eqns[0].effects] == [spmdc.debug.DebugEffect]
    assert [type(e) for e in jaxpr.eqns[1].effects] == [spmdc.debug.OrderedDebugEffect]
