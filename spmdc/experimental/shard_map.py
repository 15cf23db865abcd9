"""``jax.experimental.shard_map``: the older home of shard_map, still what many programs
import (``from jax.experimental.shard_map import shard_map``). ``check_rep`` is today's
``check_vma``."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..transforms.shard_map import shard_map as _shard_map

__all__ = ["shard_map"]


def shard_map(f: Callable[..., Any], mesh: Any, in_specs: Any, out_specs: Any,
              check_rep: bool = True) -> Any:
    """``spmdc.shard_map(f, mesh=mesh, in_specs=in_specs, out_specs=out_specs,
    check_vma=check_rep)``."""
    return _shard_map(f, mesh=mesh, in_specs=in_specs, out_specs=out_specs,
                      check_vma=check_rep)
