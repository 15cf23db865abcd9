"""jnp.iscomplexobj / isrealobj of the scalar types themselves (optax's tests call
``jnp.iscomplexobj(dtype)`` with ``jnp.float32``/``jnp.complex64``): JAX 0.10.2 answers
from the dtype they name (recorded: complex64 True, float32 False, bfloat16 False)."""
import spmdc.numpy as jnp


def test_scalar_types_are_their_dtypes():
    got = {t.__name__: (jnp.iscomplexobj(t), jnp.isrealobj(t))
           for t in (jnp.complex64, jnp.complex128, jnp.float32, jnp.bfloat16, jnp.int32)}
    assert got == {"complex64": (True, False), "complex128": (True, False),
                   "float32": (False, True), "bfloat16": (False, True),
                   "int32": (False, True)}


def test_values_still_answer_by_their_dtype():
    assert [jnp.iscomplexobj(v) for v in (1j, [1j], 1.0, jnp.ones(2), None)] == \
        [True, True, False, False, False]
