"""``jax._src.state.primitives``: JAX's functions reading and writing a mutable array
reference at an index, on spmdc's refs (spmdc/core/refs.py)."""
from __future__ import annotations

from ...core.refs import addupdate as ref_addupdate
from ...core.refs import get as ref_get
from ...core.refs import set_ as ref_set
from ...core.refs import swap as ref_swap

__all__ = ["ref_get", "ref_set", "ref_swap", "ref_addupdate"]
