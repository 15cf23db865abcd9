"""Differential testing: random programs run on spmdc and checked against oracles.

See docs/TESTING.md. ``program`` holds the program description and prints it as a
script, ``generate`` makes random programs from a seed, ``reference`` is the NumPy
oracle (spmdc's IR interpreter plus finite differences), ``run`` runs programs on each
backend, compares, and minimises mismatches; ``python tools/fuzz`` is the command line.
This package imports neither spmdc nor jax at import time, so a JAX-only interpreter can
run its worker.
"""
