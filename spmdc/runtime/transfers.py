"""The transfer guards (``jax.transfer_guard*``): what the runtime does when a value moves
between the host and a device, or between devices, while a guard is set.

Note [transfer guards]
~~~~~~~~~~~~~~~~~~~~~~
JAX guards three directions, each at one of five levels (runtime/config_states.py):
'allow'; 'log' and 'disallow' act on *implicit* transfers; 'log_explicit' and
'disallow_explicit' on explicit ones too. A logged transfer is a WARNING, a disallowed
one jaxlib's JaxRuntimeError with JAX's text (``Disallowed host-to-device transfer:
aval=ShapedArray(float32[3]), dst_sharding=...``). In spmdc the transfers are:

- host to device, implicit: a NumPy array or a Python scalar placed as an argument of a
  compiled program (``jit(f)(np.ones(3))``), in runtime/launcher.py's ``place``, or made
  an operand of an operation (``jnp.sin(np.ones(3))``, ``jnp.asarray``, the ``1`` of an
  eager ``x + 1``: core/devices.py's ``put_implicitly``); explicit: ``device_put`` of a
  host value (inside ``explicit()``);
- device to device, implicit: an Array placed as the argument of a program on another
  device; explicit: ``device_put`` of an Array onto another device;
- device to host, implicit: reading an Array's value (``np.asarray(x)``, ``float(x)``,
  printing it); explicit: ``device_get``. On the CPU client a device's memory is the
  host's, and JAX's guard never fires there; neither does spmdc's.
"""
from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterator
from typing import Any

import numpy as np

from .. import errors
from . import config_states

__all__ = ["guard", "explicit", "HOST_TO_DEVICE", "DEVICE_TO_DEVICE", "DEVICE_TO_HOST"]

HOST_TO_DEVICE = "host-to-device"
DEVICE_TO_DEVICE = "device-to-device"
DEVICE_TO_HOST = "device-to-host"
_STATES = {HOST_TO_DEVICE: config_states.transfer_guard_host_to_device,
           DEVICE_TO_DEVICE: config_states.transfer_guard_device_to_device,
           DEVICE_TO_HOST: config_states.transfer_guard_device_to_host}
_log = logging.getLogger(__name__)
_local = threading.local()


@contextlib.contextmanager
def explicit() -> Iterator[None]:
    """Inside the block, this thread's transfers are explicit ones (``device_put``,
    ``device_get``)."""
    previous = getattr(_local, "explicit", False)
    _local.explicit = True
    try:
        yield
    finally:
        _local.explicit = previous


def _aval_text(shape: tuple[int, ...], dtype: Any, weak: bool) -> str:
    dims = ",".join(map(str, shape))
    weak_text = ", weak_type=True" if weak else ""
    return f"ShapedArray({np.dtype(dtype).name}[{dims}]{weak_text})"


def guard(direction: str, explicit: bool, shape: tuple[int, ...], dtype: Any,
          weak: bool, device: Any) -> None:
    """Log or refuse one transfer as the guard for ``direction`` says (Note [transfer
    guards]); ``device``: the destination (the source for device-to-host)."""
    if not (config_states.transfer_guard_all.is_on() or _STATES[direction].is_on()):
        return
    level = config_states.transfer_level(_STATES[direction])
    explicit = explicit or getattr(_local, "explicit", False)
    if level == "allow" or explicit and level in ("log", "disallow"):
        return
    if direction == DEVICE_TO_HOST and getattr(device, "platform", "cpu") == "cpu":
        return                              # the CPU client's memory is the host's
    where = ("src_sharding" if direction == DEVICE_TO_HOST else "dst_sharding")
    text = (f"{direction} transfer: aval={_aval_text(shape, dtype, weak)}, {where}="
            f"SingleDeviceSharding(device={device!r}, memory_kind=device)")
    if level.startswith("log"):
        _log.warning(text)
        return
    # jaxlib's class (errors.py's Note [jaxlib's runtime error]), as JAX raises
    raise errors.JaxRuntimeError(f"INVALID_ARGUMENT: Disallowed {text}")
