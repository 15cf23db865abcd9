"""``jax.extend.ifrt_programs``: ``ifrt_programs``, jaxlib's module of IFRT program
builders (``make_hlo_program``, ``make_plugin_program``, ``make_colocated_python_program``
and their compile options), the object JAX names here."""
from __future__ import annotations

from ..runtime.pjrt import ifrt_programs

__all__ = ["ifrt_programs"]
