"""Importing spmdc under JAX's name (spmdc/aliases.py): after ``sys.modules['jax'] = spmdc``
the submodules resolve to spmdc's own modules, loaded once. Each case runs in a fresh
interpreter, since the alias changes sys.modules."""
from __future__ import annotations

import subprocess
import sys


def test_jax_alias_resolves_submodules():
    code = ("import sys, spmdc; sys.modules['jax'] = spmdc\n"
            "from jax.scipy.special import logsumexp\n"
            "from jax.scipy.stats import norm\n"
            "import jax.nn, jax.scipy.stats.t\n"
            "assert logsumexp is spmdc.scipy.special.logsumexp\n"
            "assert norm.__file__ == spmdc.scipy.stats.norm.__file__\n"
            "assert jax.nn.relu.__code__ is spmdc.nn.relu.__code__\n"
            "print('ok')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "ok", out.stderr
