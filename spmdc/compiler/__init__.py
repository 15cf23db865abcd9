"""The compiler: IR in, IR or StableHLO out. Imports nothing else from spmdc.

Importing it registers every primitive family (and with them their rules)."""
from . import builder, ir  # noqa: F401
from .primitives import elementwise, reductions, structural  # noqa: F401  (registration)
from .primitives.core import registry  # noqa: F401
