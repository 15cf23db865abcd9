"""Spherical harmonics of ``spmdc.scipy.special``: ``sph_harm_y(n, m, theta, phi)``,
computed as JAX 0.10.2 computes them (normalized associated Legendre functions by their
three-term recurrences). See Note [spherical harmonics].
"""
from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np

import spmdc.numpy as jnp
from spmdc import lax
from spmdc.transforms.jit import jit

__all__ = ["sph_harm_y"]

# Note [spherical harmonics]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~
# Y_n^m(theta, phi) = N_n^m P_n^m(cos theta) e^(i m phi) with N_n^m P_n^m the normalized
# associated Legendre function (orthonormal on the sphere). The table of every
# P_l^m(x), 0 <= m <= l <= n_max, is built one diagonal l - m = i at a time, as JAX's:
# P_0^0 = 1/(2 sqrt(pi)); P_m^m = P_0^0 prod_{k<=m} (-sqrt(1 + 1/(2k))) (1-x^2)^(m/2);
# P_{m+1}^m = sqrt(2m+3) x P_m^m; and for l >= m + 2
#     P_l^m = d0 x P_{l-1}^m - d1 P_{l-2}^m,
#     d0 = sqrt((4l^2 - 1)/(l^2 - m^2)), d1 = sqrt((2l+1)((l-1)^2 - m^2)/((2l-3)(l^2 - m^2))).
# Each (n, m, theta, phi) element reads its entry (indices clipped into the table, so
# n > n_max or |m| > n give what JAX's clipped read gives), and a negative m is
# (-1)^m times the conjugate of |m|'s. n_max, the table's size, must be static: the
# largest n by default (read from a concrete n), as JAX.


def _legendre_table(n_max: int, x: Any) -> Any:
    """P_l^m(x), normalized, as an array [m, l, point] (Note [spherical harmonics])."""
    dtype = x.dtype
    size = n_max + 1
    first = 0.5 / np.sqrt(np.pi)
    diagonals = []                          # diagonals[i][m] = P_{m+i}^m, m = 0..n_max-i
    if n_max >= 1:                          # the products as JAX forms them (cumprods)
        factors = jnp.cumprod(-jnp.sqrt(1.0 + 0.5 / jnp.arange(1, size, dtype=dtype)))
        sines = jnp.cumprod(jnp.broadcast_to(jnp.sqrt(1.0 - x * x), (n_max, x.shape[0])),
                            axis=0)
        rest = first * (factors[:, None] * sines)
        diagonals.append(jnp.concatenate([jnp.full_like(x, first)[None], rest]))
    else:
        diagonals.append(jnp.full_like(x, first)[None])
    if n_max >= 1:
        scale = np.sqrt(2.0 * np.arange(n_max) + 3.0).astype(dtype)
        diagonals.append(scale[:, None] * x * diagonals[0][:n_max])
    for i in range(2, size):
        m = np.arange(size - i, dtype=np.float64)
        ell = m + i
        c0, c1 = ell * ell, m * m
        d0 = np.sqrt((4.0 * c0 - 1.0) / (c0 - c1)).astype(dtype)
        d1 = np.sqrt(((2.0 * ell + 1.0) * ((ell - 1.0) ** 2 - c1))
                     / ((2.0 * ell - 3.0) * (c0 - c1))).astype(dtype)
        diagonals.append(d0[:, None] * (diagonals[i - 1][:size - i] * x)
                         - d1[:, None] * diagonals[i - 2][:size - i])
    table = jnp.zeros((size, size, x.shape[0]), dtype)
    for i, diagonal in enumerate(diagonals):
        m = np.arange(size - i)
        table = table.at[m, m + i].set(diagonal)
    return table


def sph_harm_y(n: Any, m: Any, theta: Any, phi: Any, diff_n: int | None = None,
               n_max: int | None = None) -> Any:
    """The spherical harmonic Y_n^m(theta, phi) (theta the colatitude, phi the longitude)
    of each element; ``n_max``, the largest degree, must be static (default: the largest
    n, read from a concrete ``n``). ``diff_n`` (derivatives) is not supported, as in JAX:
    passing it raises NotImplementedError."""
    if diff_n is not None:
        raise NotImplementedError("sph_harm_y: diff_n (derivatives) is not supported, as in "
                                  "JAX; leave it None")
    if np.ndim(theta) == 0:
        theta = jnp.asarray(theta)[None]
    if n_max is None:
        n_max = int(jnp.max(jnp.asarray(n)))    # a traced n: pass n_max= (JAX's error too)
    return _sph_harm(jnp.asarray(n), jnp.asarray(m), jnp.asarray(theta), jnp.asarray(phi),
                     int(n_max))


@partial(jit, static_argnums=(4,))     # one program, as JAX's (its rounding, eager too)
def _sph_harm(n: Any, m: Any, theta: Any, phi: Any, n_max: int) -> Any:
    table = _legendre_table(n_max, jnp.cos(theta))
    value = table.at[jnp.abs(m), n, jnp.arange(n.shape[0])].get(mode="clip")
    angle = jnp.abs(m) * phi
    harmonics = lax.complex(value * jnp.cos(angle), value * jnp.sin(angle))
    sign = jnp.where(jnp.abs(m) % 2 == 1, -1.0, 1.0).astype(value.dtype)
    return jnp.where(m < 0, sign * jnp.conjugate(harmonics), harmonics)
