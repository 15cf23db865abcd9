"""Installed into the spmdc virtual environment by tools/ecosystem.py, with a ``.pth`` file
that imports it when the interpreter starts: from then on ``import jax`` anywhere (a
library, its tests, their conftest) gets spmdc. That environment has no ``jax``
distribution at all, so without this module ``import jax`` fails."""
import sys

import spmdc

sys.modules["jax"] = spmdc
