"""``jax.experimental.colocated_python``: running a Python function on the CPU devices
colocated with its arguments' devices (Note [colocated Python in this process] in
func.py)."""
from __future__ import annotations

from . import func, serialization
from .api import colocated_cpu_devices, colocated_python, colocated_python_class

__all__ = ["colocated_cpu_devices", "colocated_python", "colocated_python_class", "func",
           "serialization"]
