"""The function transformations: jit, vmap, grad and friends, pmap.

spmdc/__init__.py re-exports them; this package re-exports nothing, so that each
transform's module and function can share a name (``transforms.jit`` is the module).
"""
