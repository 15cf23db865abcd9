"""The SPMDC_* environment variables, parsed strictly.

Every variable spmdc reads is read here, by one of these parsers, so that each one accepts
the same spellings and a mistake is an error naming the variable rather than a silent
default (``SPMDC_ENABLE_X64=on`` once meant *off*):

- ``flag``: true for ``1``, ``true``, ``yes``, ``on`` (also ``t``, ``y``), false for
  ``0``, ``false``, ``no``, ``off`` (also ``f``, ``n``) and for the empty string or an
  unset variable; case and surrounding blanks do not matter (JAX's ``bool_env`` accepts
  the same words). Anything else raises ``EnvironmentVariableError``.
- ``positive_int``: a decimal integer >= 1; unset or empty means the default.
- ``path``: a directory; unset or empty means none.

This module imports only the leaf spmdc/errors.py (where ``EnvironmentVariableError`` is
defined), so every layer (the compiler included) may use it.
"""
from __future__ import annotations

import os

from .errors import EnvironmentVariableError

__all__ = ["flag", "positive_int", "path", "VARIABLES"]

VARIABLES = {
    "SPMDC_CPU_DEVICES": "how many virtual CPU devices the CPU client creates (default 8)",
    "SPMDC_ENABLE_X64": "keep float64/int64 instead of converting them to 32 bits",
    "SPMDC_CHECKS": "run the IR verifier after every pass",
    "SPMDC_CACHE_DIR": "keep compiled programs in this directory (a persistent cache)",
    "SPMDC_CACHE_MAX_BYTES": "the persistent cache's size bound (default 1 GiB)",
    "SPMDC_COORDINATOR_ADDRESS": "host:port of process 0's coordination service (multi-process)",
    "SPMDC_NUM_PROCESSES": "how many processes the multi-process program runs as",
    "SPMDC_PROCESS_ID": "this process's id, 0 to SPMDC_NUM_PROCESSES - 1",
    "SPMDC_COORDINATOR_PORT": "the coordinator's port under SLURM or Open MPI (default: "
                              "derived from the job id)",
    "SPMDC_RUN_TOKEN": "a secret every process of one multi-process run shares, so that no "
                       "one else can join it (spmdc.launch sets a fresh one)",
    "SPMDC_CHECK_LAUNCHES": "across processes, check that every process launches the same "
                            "programs in the same order (a debugging aid)",
    "SPMDC_PLATFORM": "cpu (the default) or cuda: which PJRT client runs the programs",
    "SPMDC_LOCAL_DEVICE_IDS": "the GPUs this process uses, e.g. 0,1 (default: all, or the "
                              "cluster's local rank)",
}
"""Every variable spmdc reads, with what it does (docs/configuration.md lists the same)."""

_TRUE = frozenset({"1", "true", "t", "yes", "y", "on"})
_FALSE = frozenset({"", "0", "false", "f", "no", "n", "off"})


def flag(name: str, default: bool = False) -> bool:
    """The boolean variable ``name`` (see the module docstring); ``default`` when unset."""
    raw = os.environ.get(name)
    if raw is None:
        return default
    word = raw.strip().lower()
    if word in _TRUE:
        return True
    if word in _FALSE:
        return False
    raise EnvironmentVariableError(
        f"environment variable {name}={raw!r} is not a boolean: use 1/true/yes/on to turn "
        "it on, or 0/false/no/off (or leave it empty or unset) to turn it off")


def path(name: str) -> str | None:
    """The directory variable ``name``: its value, or None when unset or empty."""
    raw = os.environ.get(name)
    return raw if raw and raw.strip() else None


def positive_int(name: str, default: int) -> int:
    """The integer variable ``name`` (>= 1); ``default`` when unset or empty."""
    raw = os.environ.get(name)
    if raw is None or not raw.strip():
        return default
    text = raw.strip()
    if not text.isdigit() or int(text) < 1:
        raise EnvironmentVariableError(
            f"environment variable {name}={raw!r} must be a positive integer (e.g. "
            f"{name}={default}), or unset for the default {default}")
    return int(text)
