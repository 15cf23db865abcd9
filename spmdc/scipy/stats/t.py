"""Student's t distribution (``scipy.stats.t``): densities."""
from __future__ import annotations

from typing import Any

import numpy as np

import spmdc.numpy as jnp
from spmdc.scipy.special import gammaln
from spmdc.scipy.stats._common import const, promote


def logpdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, df, loc, scale = promote(x, df, loc, scale)
    two = const(x, 2)
    scaled = (x - loc) / scale
    half_df = df / two
    half_df_plus_half = half_df + const(x, 0.5)
    normalize = gammaln(half_df) + jnp.log(scale * scale * const(x, np.pi) * df) / two \
        - gammaln(half_df_plus_half)
    return -(normalize + half_df_plus_half * jnp.log1p(scaled * scaled / df))


def pdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return jnp.exp(logpdf(x, df, loc, scale))
