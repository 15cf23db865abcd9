"""The core every namespace stands on: tracing (Tracer, bind), dtypes, pytrees.

Nothing here imports a user-facing namespace (spmdc.numpy, spmdc.lax, the transforms).
"""
