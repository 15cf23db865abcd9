"""Importing spmdc under JAX's name (spmdc/aliases.py): after ``sys.modules['jax'] = spmdc``
the submodules resolve to spmdc's own modules, loaded once. Each case runs in a fresh
interpreter, since the alias changes sys.modules."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest


def test_jax_alias_resolves_submodules():
    # The heavier namespaces load on first use (Note [lazy submodules] in spmdc/__init__.py).
    code = ("import sys, spmdc; sys.modules['jax'] = spmdc\n"
            "lazy = ['experimental', 'nn', 'profiler', 'scipy']\n"
            "loaded = [m for m in lazy if 'spmdc.' + m in sys.modules]\n"
            "assert not loaded, loaded\n"
            "assert set(lazy) <= set(dir(spmdc))\n"
            "import jax\n"
            "assert jax.profiler is sys.modules['spmdc.profiler'] is spmdc.profiler\n"
            "assert spmdc.experimental.io_callback is spmdc.callbacks.io_callback\n"
            "from jax.scipy.special import logsumexp\n"
            "from jax.scipy.stats import norm\n"
            "import jax.nn, jax.scipy.stats.t\n"
            "assert logsumexp is spmdc.scipy.special.logsumexp\n"
            "assert norm.__file__ == spmdc.scipy.stats.norm.__file__\n"
            "assert jax.nn.gelu.__code__ is spmdc.nn.gelu.__code__\n"
            "print('ok')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "ok", out.stderr


def _run(code, **env):
    full = {**os.environ, **env}
    full.pop("SPMDC_CPU_DEVICES", None)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=full,
                          capture_output=True, text=True, timeout=120)


def test_import_as_jax_resolves_the_new_modules():
    r = _run("""
        import sys, spmdc
        sys.modules['jax'] = spmdc
        import jax.tree, jax.tree_util, jax.dtypes, jax.test_util
        from jax import config
        from jax.tree_util import Partial, register_dataclass
        print(jax.tree.leaves([1, [2]]), config.jax_enable_x64)
        """)
    assert r.stdout.strip() == "[1, 2] False", r.stderr


@pytest.mark.cpu_platform
def test_alias_loads_no_second_copy_and_runs():
    r = _run("""
        import sys, spmdc
        sys.modules['jax'] = spmdc
        import jax, jax.numpy as jnp, jax.random, jax.scipy.special
        from jax.scipy.special import logsumexp
        from jax import lax, random
        assert jnp is spmdc.numpy and jax.random is spmdc.random and lax is spmdc.lax
        assert sys.modules['jax.scipy.special'] is spmdc.scipy.special
        print(float(jax.jit(lambda x: logsumexp(x * 2))(jnp.zeros(2))),
              jax.pmap(lambda x: x * 2)(jnp.ones(2)).tolist())
        import jax.core
        from spmdc.core.tracing import Tracer
        assert jax.core is spmdc._src.core and jax.core.Tracer is Tracer
        for private in ('jax.compiler', 'jax.runtime', 'jax.nothing'):
            try:
                __import__(private)
            except ModuleNotFoundError:
                pass
            else:
                raise AssertionError(private)
        print('checked')
        """, XLA_FLAGS="--xla_force_host_platform_device_count=2")
    assert r.stdout.split() == ["0.6931471824645996", "[2.0,", "2.0]", "checked"], r.stderr


def test_jax_core_and_the_extension_api_under_the_alias():
    # ``from jax import core`` before any ``import jax.core`` (Flax's order) gets JAX's
    # names too, and ``import jax`` alone makes jax.interpreters usable, as in JAX.
    r = _run("""
        import sys, spmdc
        sys.modules['jax'] = spmdc
        import jax
        from jax import core
        from spmdc.core.tracing import Tracer
        assert core.Tracer is Tracer and core.ShapedArray is spmdc.ShapedArray
        assert jax.interpreters.ad.primitive_jvps is not None
        import jax.core, jax.extend.core, jax._src.core
        from jax.extend import linear_util
        from jax.interpreters import ad, batching, mlir, partial_eval
        assert jax.core is core is jax._src.core
        assert jax.extend.core.Primitive is core.Primitive
        print('ok')
        """)
    assert r.stdout.strip() == "ok", r.stderr


def test_a_module_imported_under_the_alias_keeps_its_own_spec():
    """Importing ``jax.tree_util`` must not give spmdc.tree_util the alias's __spec__:
    its functions' relative imports (register_dataclass's) would warn
    ``__package__ != __spec__.parent``, an error under ``-W error`` (Flax's tests)."""
    r = _run("""
        import dataclasses, sys, warnings, spmdc
        sys.modules['jax'] = spmdc
        import jax.tree_util
        warnings.simplefilter('error')
        @dataclasses.dataclass
        class P:
            a: float
        jax.tree_util.register_dataclass(P, ['a'], [])
        print(spmdc.tree_util.__spec__.name, jax.tree_util.tree_leaves(P(1.0)))
        """)
    assert r.stdout.strip() == "spmdc.tree_util [1.0]", r.stderr
