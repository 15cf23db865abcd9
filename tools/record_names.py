"""Record the public names of JAX's array namespaces into tests/data/jax_names.json.

Run once with a JAX installation (``/path/to/jax-python tools/record_names.py``); the
coverage test (tests/test_coverage.py) compares spmdc's namespaces against this list, so
it runs without JAX. A public name is one of ``dir(module)`` that does not start with an
underscore; submodules (``jax.numpy.fft`` ...) count as names of their parent.
"""
from __future__ import annotations

import importlib
import json
import os
import sys

NAMESPACES = ["jax.numpy", "jax.lax", "jax.numpy.linalg", "jax.scipy.linalg", "jax.numpy.fft"]
OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                   "tests", "data", "jax_names.json")


def main() -> int:
    import jax
    names = {ns: sorted(n for n in dir(importlib.import_module(ns)) if not n.startswith("_"))
             for ns in NAMESPACES}
    with open(OUT, "w", encoding="utf-8") as fh:
        json.dump({"jax_version": jax.__version__, "names": names}, fh, indent=0)
        fh.write("\n")
    for ns, ns_names in names.items():
        print(f"{ns:20} {len(ns_names)} names")
    return 0


if __name__ == "__main__":
    sys.exit(main())
