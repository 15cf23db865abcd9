"""spmdc.lax: low-level operations, collectives and structured control flow.

core.py holds the operations and the collectives (psum, all_gather ...), which do not
promote dtypes: operands must already agree, as in JAX. control_flow.py holds cond,
switch, while_loop, fori_loop, scan and map, built on core.py and the transforms.
"""
from . import core as _core
from .complex_parts import complex, conj, imag, real  # noqa: F401,A004
from .control_flow import cond, fori_loop, scan, switch, while_loop  # noqa: F401
from .control_flow import map_ as map  # noqa: F401,A004  (lax.map)
from .core import *  # noqa: F401,F403

__all__ = [*_core.__all__, "cond", "switch", "while_loop", "fori_loop", "scan", "map",
           "real", "imag", "conj", "complex"]
