"""``backend=`` of spmdc.devices / device_count / local_devices / local_device_count:
the platform spmdc runs on, in any case; another platform's name is a RuntimeError, as in
JAX, because libraries probe for accelerators with ``try: jax.devices('gpu') except
RuntimeError`` (chex's restrict_backends tests, its device-count assertions)."""
from __future__ import annotations

import pytest

import spmdc


def test_an_absent_backend_is_a_runtime_error_as_in_jax():
    for probe in (lambda: spmdc.devices("gpu"), lambda: spmdc.device_count("tpu"),
                  lambda: spmdc.local_devices(backend="gpu"),
                  lambda: spmdc.local_device_count("gpu")):
        with pytest.raises(RuntimeError, match="Unknown backend: '(gpu|tpu)' requested"):
            probe()
    with pytest.raises(TypeError, match="backend must be a platform name"):
        spmdc.devices(3)


def test_the_present_backend_in_any_case():
    assert spmdc.devices("cpu") == spmdc.devices()
    assert spmdc.device_count("CPU") == len(spmdc.devices())
