"""``jax._src.compiler`` (spmdc/_src/compiler.py, Note [the compile hook]): every
compilation goes through its ``backend_compile_and_load``, so replacing it, as chex's
``restrict_backends`` does, refuses compiling for a platform; restoring it compiles
again."""
import pytest

import spmdc
from spmdc._src import compiler


def test_replacing_backend_compile_and_load_sees_every_compilation():
    original = compiler.backend_compile_and_load
    platforms = []

    def refuse(backend, *args, **kwargs):
        platforms.append(backend.platform)
        raise RuntimeError(f"compiling for {backend.platform} is forbidden")

    compiler.backend_compile_and_load = refuse
    try:
        with pytest.raises(RuntimeError, match="compiling for cpu is forbidden"):
            spmdc.jit(lambda x: x * 3 + 17)(2.0)
    finally:
        compiler.backend_compile_and_load = original
    assert platforms == ["cpu"]
    assert float(spmdc.jit(lambda x: x * 3 + 17)(2.0)) == 23.0
