"""spmdc.numpy: NumPy's API over spmdc primitives (users import it as ``jnp``).

core.py holds dtypes, conversion, elementwise and creation functions; shape_ops.py
reshaping and joining; reductions.py reductions; products.py dot/matmul/einsum;
indexing.py advanced indexing and ``.at[]``; array_methods.py the Array/Tracer methods.
"""
from .core import *  # noqa: F401,F403
