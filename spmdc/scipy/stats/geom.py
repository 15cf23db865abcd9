"""The geometric distribution (``scipy.stats.geom``)."""
from __future__ import annotations

from typing import Any

import numpy as np

import spmdc.numpy as jnp
from spmdc.scipy.special import xlog1py
from spmdc.scipy.stats._common import const, promote


def logpmf(k: Any, p: Any, loc: Any = 0) -> Any:
    k, p, loc = promote(k, p, loc)
    x = k - loc
    log_probs = xlog1py(x - const(k, 1), -p) + jnp.log(p)
    return jnp.where(x <= 0, const(k, -np.inf), log_probs)


def pmf(k: Any, p: Any, loc: Any = 0) -> Any:
    return jnp.exp(logpmf(k, p, loc))
