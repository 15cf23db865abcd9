"""Gaussian kernel density estimation (``scipy.stats.gaussian_kde``), as JAX's
``jax.scipy.stats.gaussian_kde``: a pytree of arrays, so an estimator passes through
``jit``, ``vmap`` and ``grad`` like any other value.

Note [gaussian_kde]
~~~~~~~~~~~~~~~~~~~
The estimate is ``sum_i w_i N(x; x_i, C)`` over the ``n`` data points ``x_i`` (the
columns of the ``(d, n)`` dataset) with weights ``w_i`` summing to 1 and the kernel
covariance ``C = factor^2 cov(data)`` (the weighted, unbiased data covariance), where
``factor`` is Scott's ``neff^(-1/(d+4))``, Silverman's ``(neff (d+2) / 4)^(-1/(d+4))``
(``neff = 1 / sum w_i^2``), a given number, or what a given function of the estimator
returns. The leaves are ``neff``, ``dataset``, ``weights``, ``covariance`` and
``inv_cov``, in that order, as in JAX; the bandwidth method is not kept (only its
result is), so an estimator rebuilt from its leaves is the same estimator.

Evaluation whitens the data and the points with the Cholesky factor ``W`` of
``inv_cov`` (``W W^T = C^-1``), so each kernel is ``|W| (2 pi)^(-d/2)
exp(-|W^T (x - x_i)|^2 / 2)``; ``logpdf`` reduces in log space (``logsumexp``), so it
stays finite far in the tails where ``pdf`` underflows. Absent, as in JAX, which raises
for them: ``integrate_box`` (a box integral in more than one dimension needs the
multivariate normal CDF) and ``set_bandwidth`` (the estimator is immutable; build a new
one with the new ``bw_method``).
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np

import spmdc.numpy as jnp
from spmdc import random
from spmdc.core.operands import inexact
from spmdc.core.tracing import where
from spmdc.scipy import linalg, special
from spmdc.transforms.jit import jit
from spmdc.transforms.vmap import vmap
from spmdc.tree_util import register_pytree_node_class

__all__ = ["gaussian_kde"]


@register_pytree_node_class
@dataclasses.dataclass(frozen=True, init=False)
class gaussian_kde:                                      # noqa: N801  (SciPy's name)
    """A Gaussian kernel density estimate of ``dataset`` (``(n,)``, or ``(d, n)`` for
    ``d``-dimensional data), with ``bw_method`` ``"scott"`` (default), ``"silverman"``,
    a number, or a function of the estimator giving the factor, and optional
    ``weights`` (``(n,)``). See Note [gaussian_kde]."""
    neff: Any
    dataset: Any
    weights: Any
    covariance: Any
    inv_cov: Any

    def __init__(self, dataset: Any, bw_method: None | str | float | Callable[[Any], Any]
                 = None, weights: Any = None):
        dataset = jnp.atleast_2d(jnp.asarray(dataset))
        if jnp.iscomplexobj(dataset):
            raise NotImplementedError(f"gaussian_kde does not support complex data{where()}")
        if not dataset.size > 1:
            raise ValueError(f"gaussian_kde: `dataset` input should have multiple elements, "
                             f"got shape {dataset.shape}{where()}")
        d, n = dataset.shape
        if weights is None:
            (dataset,) = inexact(dataset)
            weights = jnp.full(n, 1.0 / n, dtype=dataset.dtype)
        else:
            dataset, weights = inexact(dataset, weights)
            weights = jnp.atleast_1d(weights)
            if weights.ndim != 1:
                raise ValueError(f"gaussian_kde: `weights` input should be one-dimensional, "
                                 f"got shape {weights.shape}{where()}")
            if weights.shape[0] != n:
                raise ValueError(f"gaussian_kde: `weights` input should be of length n={n}, "
                                 f"got {weights.shape[0]}{where()}")
            weights = weights / jnp.sum(weights)
        self._set("dataset", dataset)
        self._set("weights", weights)
        neff = self._set("neff", 1 / jnp.sum(weights ** 2))
        if bw_method is None or bw_method == "scott" and isinstance(bw_method, str):
            factor = jnp.power(neff, -1.0 / (d + 4))
        elif bw_method == "silverman" and isinstance(bw_method, str):
            factor = jnp.power(neff * (d + 2) / 4.0, -1.0 / (d + 4))
        elif callable(bw_method):
            factor = bw_method(self)
        elif jnp.isscalar(bw_method) and not isinstance(bw_method, str):
            factor = bw_method
        else:
            raise ValueError(f"gaussian_kde: `bw_method` should be 'scott', 'silverman', a "
                             f"scalar, or a callable, got {bw_method!r}{where()}")
        data_covariance = _weighted_covariance(dataset, weights)
        self._set("covariance", data_covariance * factor ** 2)
        self._set("inv_cov", jnp.linalg.inv(data_covariance) / factor ** 2)

    def _set(self, name: str, value: Any) -> Any:
        object.__setattr__(self, name, value)           # the dataclass is frozen
        return value

    def tree_flatten(self) -> tuple[tuple[Any, ...], None]:
        return (self.neff, self.dataset, self.weights, self.covariance, self.inv_cov), None

    @classmethod
    def tree_unflatten(cls, aux_data: None, children: Any) -> gaussian_kde:
        kde = cls.__new__(cls)
        for field, value in zip(("neff", "dataset", "weights", "covariance", "inv_cov"),
                                children, strict=True):
            kde._set(field, value)
        return kde

    @property
    def d(self) -> int:
        """The number of dimensions."""
        return self.dataset.shape[0]

    @property
    def n(self) -> int:
        """The number of data points."""
        return self.dataset.shape[1]

    def evaluate(self, points: Any) -> Any:
        """The density at ``points`` (``(d, m)``, or ``(m,)`` for ``d == 1``, or one
        point of ``d`` coordinates)."""
        return _kernel_sums(False, self.dataset, self.weights,
                            self._points("evaluate", points), self.inv_cov)

    def __call__(self, points: Any) -> Any:
        return self.evaluate(points)

    def pdf(self, x: Any) -> Any:
        """The density at ``x`` (as :meth:`evaluate`)."""
        return self.evaluate(x)

    def logpdf(self, x: Any) -> Any:
        """The log-density at ``x``, computed in log space."""
        return _kernel_sums(True, self.dataset, self.weights, self._points("logpdf", x),
                            self.inv_cov)

    def integrate_gaussian(self, mean: Any, cov: Any) -> Any:
        """The integral of the density times the normal density ``N(mean, cov)``."""
        mean = jnp.atleast_1d(jnp.squeeze(jnp.asarray(mean)))
        cov = jnp.atleast_2d(jnp.asarray(cov))
        if mean.shape != (self.d,):
            raise ValueError(f"gaussian_kde.integrate_gaussian: mean does not have dimension "
                             f"{self.d}, got shape {mean.shape}{where()}")
        if cov.shape != (self.d, self.d):
            raise ValueError(f"gaussian_kde.integrate_gaussian: covariance does not have "
                             f"dimension {self.d}, got shape {cov.shape}{where()}")
        factor, norm = _sum_factor(self.covariance + cov, self.d)
        return _convolved(factor, norm, self.dataset, self.weights, mean)

    def integrate_box_1d(self, low: Any, high: Any) -> Any:
        """The probability mass between the scalars ``low`` and ``high`` (1-d data)."""
        if self.d != 1:
            raise ValueError(f"integrate_box_1d() only handles 1D pdfs, this one has "
                             f"{self.d} dimensions{where()}")
        if np.ndim(low) != 0 or np.ndim(high) != 0:
            raise ValueError(f"the limits of integration in integrate_box_1d must be "
                             f"scalars, got shapes {np.shape(low)} and {np.shape(high)}"
                             f"{where()}")
        return _box_1d(self, low, high)

    def integrate_kde(self, other: gaussian_kde) -> Any:
        """The integral of the product of this density and ``other``'s."""
        if other.d != self.d:
            raise ValueError(f"gaussian_kde.integrate_kde: KDEs are not the same "
                             f"dimensionality ({self.d} and {other.d}){where()}")
        factor, norm = _sum_factor(self.covariance + other.covariance, self.d)
        small, large = (self, other) if self.n < other.n else (other, self)
        per_point = vmap(lambda mean: _convolved(factor, norm, large.dataset, large.weights,
                                                 mean), in_axes=1)(small.dataset)
        return jnp.sum(per_point * small.weights)

    def resample(self, key: Any, shape: tuple[int, ...] = ()) -> Any:
        """``(d,) + shape`` new points drawn from the density: a data point chosen by
        weight plus a draw from the kernel."""
        return _resample(self, key, tuple(shape))

    def _points(self, method: str, points: Any) -> Any:
        points = jnp.asarray(points)
        if jnp.iscomplexobj(points):
            raise NotImplementedError(f"gaussian_kde does not support complex coordinates"
                                      f"{where()}")
        points = jnp.atleast_2d(points)
        d, m = points.shape
        if d != self.d:
            if d == 1 and m == self.d:
                return jnp.reshape(points, (self.d, 1))
            raise ValueError(f"gaussian_kde.{method}: points have dimension {d}, dataset has "
                             f"dimension {self.d}{where()}")
        return points


def _weighted_covariance(dataset: Any, weights: Any) -> Any:
    """The unbiased covariance of the columns of ``dataset`` under the normalised
    reliability weights ``weights`` (NumPy's ``cov(dataset, aweights=weights)``):
    ``sum_i w_i (x_i - m)(x_i - m)^T / (1 - sum_i w_i^2)`` with ``m = sum_i w_i x_i``."""
    centred = dataset - jnp.sum(dataset * weights, axis=1, keepdims=True)
    return jnp.dot(centred * weights, centred.T) / (1 - jnp.sum(weights ** 2))


def _kernel_sums(in_log: bool, dataset: Any, weights: Any, points: Any,
                 precision: Any) -> Any:
    """The (log-)density at the columns of ``points``. See Note [gaussian_kde]."""
    dataset, weights, points, precision = inexact(dataset, weights, points, precision)
    whitening = linalg.cholesky(precision, lower=True)
    data = jnp.dot(dataset.T, whitening)                 # (n, d)
    at = jnp.dot(points.T, whitening)                    # (m, d)
    d = dataset.shape[0]
    log_norm = jnp.sum(jnp.log(jnp.diag(whitening))) - 0.5 * d * jnp.log(2 * np.pi)
    exponent = log_norm - 0.5 * jnp.sum(jnp.square(data[None, :, :] - at[:, None, :]),
                                        axis=-1)          # (m, n)
    if in_log:
        return special.logsumexp(jnp.log(weights) + exponent, axis=1)
    return jnp.sum(weights * jnp.exp(exponent), axis=1)


def _sum_factor(covariance: Any, d: int) -> tuple[Any, Any]:
    """The Cholesky factor of a summed covariance and the normal's constant for it."""
    factor = linalg.cho_factor(covariance)
    norm = 1.0 / (jnp.sqrt(2 * np.pi) ** d * jnp.prod(jnp.diag(factor[0])))
    return factor, norm


def _convolved(factor: Any, norm: Any, dataset: Any, weights: Any, mean: Any) -> Any:
    diff = dataset - mean[:, None]
    quadratic = 0.5 * jnp.sum(diff * linalg.cho_solve(factor, diff), axis=0)
    return norm * jnp.sum(jnp.exp(-quadratic) * weights)


@jit
def _box_1d(kde: gaussian_kde, low: Any, high: Any) -> Any:
    sigma = jnp.squeeze(jnp.sqrt(kde.covariance))
    upper = jnp.squeeze((high - kde.dataset) / sigma)
    lower = jnp.squeeze((low - kde.dataset) / sigma)
    return jnp.sum(kde.weights * (special.ndtr(upper) - special.ndtr(lower)))


def _resample_traced(kde: gaussian_kde, key: Any, shape: tuple[int, ...]) -> Any:
    index_key, noise_key = random.split(key)
    index = random.choice(index_key, kde.n, shape=shape, p=kde.weights)
    noise = random.multivariate_normal(noise_key, jnp.zeros(kde.d, kde.covariance.dtype),
                                       kde.covariance, shape=shape,
                                       dtype=kde.dataset.dtype)
    return kde.dataset[:, index] + jnp.moveaxis(noise, -1, 0)


_resample = jit(_resample_traced, static_argnums=2)
