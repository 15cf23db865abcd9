"""``spmdc.example_libraries``: JAX's small example libraries on spmdc, ``optimizers`` and
``stax``, imported as submodules (``from spmdc.example_libraries import optimizers, stax``).
"""
