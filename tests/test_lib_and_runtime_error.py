"""``jax.lib.__version__`` is jaxlib's version, and ``jax.errors.JaxRuntimeError`` is the
class jaxlib raises (Note [jaxlib's runtime error] in spmdc/errors.py), so programs that
catch it by that name (Equinox's filter_jit) catch what the runtime raises."""
from __future__ import annotations

import textwrap

import alias_programs
import jaxlib
import jaxlib._jax
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc.errors import JaxRuntimeError


def test_jax_lib_version_is_jaxlibs():
    assert spmdc.lib.__version__ == jaxlib.__version__
    assert spmdc.lib.__all__ == ["__version__"]


def test_jax_runtime_error_is_the_class_jaxlib_raises():
    assert JaxRuntimeError is jaxlib._jax.JaxRuntimeError
    assert issubclass(JaxRuntimeError, RuntimeError)
    assert "JaxRuntimeError" in spmdc.errors.__all__
    x = jnp.arange(3.0)
    x.delete()
    with pytest.raises(RuntimeError, match="deleted"):
        x + 1                  # spmdc's own check comes first: a RuntimeError


def test_adopting_something_else_is_refused():
    with pytest.raises(TypeError, match="RuntimeError subclass"):
        spmdc.errors.adopt_runtime_error(ValueError)


ALIAS_PROGRAM = alias_programs.register("lib_and_runtime_error", textwrap.dedent("""
    import sys, spmdc
    sys.modules["jax"] = spmdc
    from jax.errors import JaxRuntimeError
    import jax.lib, jaxlib, jaxlib._jax
    assert JaxRuntimeError is jaxlib._jax.JaxRuntimeError
    assert jax.lib.__version__ == jaxlib.__version__
    print("ok")
"""))


def test_both_names_resolve_under_the_alias():
    out = alias_programs.run(ALIAS_PROGRAM)      # one child for the alias programs
    assert out.stdout.strip() == "ok", out.stderr
