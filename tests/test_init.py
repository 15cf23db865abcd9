"""The top-level names of spmdc (spmdc/__init__.py) that no other module's tests cover:
the backend and process names, __version__, spmdc.dtypes' helpers."""
from __future__ import annotations

import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp


@pytest.mark.cpu_platform
def test_small_module_level_names():
    assert spmdc.default_backend() == "cpu"
    assert spmdc.process_index() == 0 and spmdc.process_count() == 1
    assert isinstance(spmdc.__version__, str)
    assert spmdc.dtypes.canonicalize_dtype(np.float64) == np.float32
    assert spmdc.dtypes.result_type(1.0, np.int32) == np.float32
    assert spmdc.dtypes.issubdtype(spmdc.dtypes.bfloat16, np.floating)
    assert spmdc.dtypes.itemsize_bits(spmdc.dtypes.bfloat16) == 16
    x = jnp.arange(3.0)
    x.copy_to_host_async()
    np.testing.assert_allclose(x, [0.0, 1.0, 2.0])
