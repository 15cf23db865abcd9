"""spmdc.typing (``jax.typing``), ``spmdc.Device`` and the version names: the unions and
the instance tests give what JAX 0.10.2 gives (recorded below), and the alias resolves
them as Optax, NumPyro and chex import them."""
from __future__ import annotations

import textwrap
import typing

import alias_programs
import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc.typing import ArrayLike, DTypeLike


def test_arraylike_accepts_what_jax_accepts():
    values = [np.float32(1), [1], (1,), jnp.ones(2), True, 1, 2.0, 1j, np.ones(2), "x",
              None, np.int8(3)]
    # JAX 0.10.2: [isinstance(v, jax.typing.ArrayLike) for v in values]
    jax_answers = [True, False, False, True, True, True, True, True, True, False, False, True]
    assert [isinstance(v, ArrayLike) for v in values] == jax_answers


def test_the_unions_have_jaxs_members():
    assert typing.get_args(ArrayLike) == (spmdc.Array, np.ndarray, np.bool_, np.number, bool,
                                          int, float, complex)
    members = typing.get_args(DTypeLike)
    assert members[:3] == (str, type[typing.Any], np.dtype)
    assert isinstance(jnp.float32, members[3]) and not isinstance(3, members[3])
    # as in JAX: a str is found first; for a type, type[Any] makes it a TypeError
    assert isinstance("float32", DTypeLike)
    with pytest.raises(TypeError):
        isinstance(np.float32, DTypeLike)


def test_devices_are_instances_of_device():
    assert all(isinstance(d, spmdc.Device) for d in spmdc.devices())
    assert not isinstance("cpu:0", spmdc.Device)


def test_the_version_is_the_jax_api_spmdc_implements():
    assert spmdc.__version__ == "0.10.2" and spmdc.__version_info__ == (0, 10, 2)
    assert spmdc.__version_info__ >= (0, 4, 36)          # the libraries' checks pass
    assert isinstance(spmdc.__spmdc_version__, str)
    assert spmdc.version.__version_info__ == (0, 10, 2)       # Flax reads jax.version's
    assert spmdc.version.__version__ == spmdc.__version__


ALIAS_PROGRAM = alias_programs.register("typing", textwrap.dedent("""
    import sys, spmdc
    sys.modules['jax'] = spmdc
    import jax
    from jax.typing import ArrayLike, DTypeLike
    from jax import Device
    import jax.typing
    assert jax.typing is spmdc.typing and Device is spmdc.Device
    print(jax.__version_info__ >= (0, 4, 36), isinstance(jax.devices()[0], jax.Device))
    """))


def test_the_names_resolve_under_the_jax_alias():
    out = alias_programs.run(ALIAS_PROGRAM)      # one child for the alias programs
    assert out.stdout.split() == ["True", "True"], out.stderr
