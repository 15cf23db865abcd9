"""spmdc: a from-scratch SPMD tracing compiler for JAX-style Python."""
import os as _os

_os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")   # keep the PJRT client's device log quiet
