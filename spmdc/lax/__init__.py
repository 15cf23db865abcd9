"""spmdc.lax: low-level operations, collectives and structured control flow.

core.py holds the operations and collectives, control_flow.py cond/switch/while_loop/
fori_loop/scan/map.
"""
from .core import *  # noqa: F401,F403
from .core import __all__  # noqa: F401
