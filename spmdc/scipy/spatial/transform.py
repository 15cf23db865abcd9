"""Rotations in three dimensions (JAX's ``jax.scipy.spatial.transform``): ``Rotation``,
held as unit quaternions, and ``Slerp``, spherical linear interpolation between them.

Both are NamedTuples, so pytrees: they pass through jit, vmap and grad as their arrays.
A Rotation's ``quat`` is ``(4,)`` for one rotation or ``(n, 4)`` for several, scalar last
(x, y, z, w), as SciPy's and JAX's; every conversion works on any leading shape.
See Note [rotations as quaternions].
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from ... import numpy as jnp
from ... import random as _random

__all__ = ["Rotation", "Slerp"]

# Note [rotations as quaternions]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# The formulas are SciPy's, in the forms JAX 0.10.2 computes them, so that values agree
# with JAX's to rounding: composition is the Hamilton product; a rotation vector's angle
# is 2 atan2(|xyz|, w) after flipping w >= 0, with the Taylor series of angle/sin(angle/2)
# below 1e-3; a matrix becomes a quaternion by the largest of its diagonal and trace
# (Shepperd's method); Euler angles from a quaternion follow Bernardes and Viollet (2022),
# the degenerate (gimbal-lock) cases setting the third angle to 0. JAX writes each with
# jnp.vectorize over one quaternion and selects among Euler cases with jnp.where on the
# axes; here the axes are Python ints (``seq`` is static) and every function works on
# the last axis of a batch.


def _norm(v: Any) -> Any:
    return jnp.sqrt(jnp.sum(v * v, axis=-1))


def _normalized(quat: Any) -> Any:
    return quat / _norm(quat)[..., None]


def _compose(p: Any, q: Any) -> Any:
    """The Hamilton product p q: the rotation q, then p."""
    cross = jnp.cross(p[..., :3], q[..., :3])
    pw, qw = p[..., 3:], q[..., 3:]
    vector = pw * q[..., :3] + qw * p[..., :3] + cross
    scalar = pw * qw - jnp.sum(p[..., :3] * q[..., :3], axis=-1, keepdims=True)
    return jnp.concatenate([vector, scalar], axis=-1)


def _as_matrix(quat: Any) -> Any:
    x, y, z, w = (quat[..., i] for i in range(4))
    x2, y2, z2, w2 = x * x, y * y, z * z, w * w
    xy, zw, xz, yw, yz, xw = x * y, z * w, x * z, y * w, y * z, x * w
    rows = [[x2 - y2 - z2 + w2, 2 * (xy - zw), 2 * (xz + yw)],
            [2 * (xy + zw), -x2 + y2 - z2 + w2, 2 * (yz - xw)],
            [2 * (xz - yw), 2 * (yz + xw), -x2 - y2 + z2 + w2]]
    return jnp.stack([jnp.stack(row, axis=-1) for row in rows], axis=-2)


def _from_matrix(matrix: Any) -> Any:
    m = matrix
    trace = m[..., 0, 0] + m[..., 1, 1] + m[..., 2, 2]
    decision = jnp.stack([m[..., 0, 0], m[..., 1, 1], m[..., 2, 2], trace], axis=-1)
    choice = jnp.argmax(decision, axis=-1)
    candidates = []
    for i in range(3):                   # the largest diagonal entry is m[i, i]
        j, k = (i + 1) % 3, (i + 2) % 3
        quat = [None] * 4
        quat[i] = 1 - trace + 2 * m[..., i, i]
        quat[j] = m[..., j, i] + m[..., i, j]
        quat[k] = m[..., k, i] + m[..., i, k]
        quat[3] = m[..., k, j] - m[..., j, k]
        candidates.append(jnp.stack(quat, axis=-1))
    candidates.append(jnp.stack([m[..., 2, 1] - m[..., 1, 2], m[..., 0, 2] - m[..., 2, 0],
                                 m[..., 1, 0] - m[..., 0, 1], 1 + trace], axis=-1))
    quat = candidates[3]
    for i in range(3):
        quat = jnp.where((choice == i)[..., None], candidates[i], quat)
    return _normalized(quat)


def _from_rotvec(rotvec: Any, degrees: bool) -> Any:
    if degrees:
        rotvec = jnp.deg2rad(rotvec)
    angle = _norm(rotvec)
    angle2 = angle * angle
    small_scale = 0.5 - angle2 / 48 + angle2 * angle2 / 3840
    large_scale = jnp.sin(angle / 2) / angle
    scale = jnp.where(angle <= 1e-3, small_scale, large_scale)
    return jnp.concatenate([scale[..., None] * rotvec, jnp.cos(angle / 2)[..., None]],
                           axis=-1)


def _as_rotvec(quat: Any, degrees: bool) -> Any:
    quat = jnp.where(quat[..., 3:] < 0, -quat, quat)      # w >= 0: 0 <= angle <= pi
    angle = 2. * jnp.arctan2(_norm(quat[..., :3]), quat[..., 3])
    angle2 = angle * angle
    small_scale = 2 + angle2 / 12 + 7 * angle2 * angle2 / 2880
    large_scale = angle / jnp.sin(angle / 2)
    scale = jnp.where(angle <= 1e-3, small_scale, large_scale)
    if degrees:
        scale = jnp.rad2deg(scale)
    return scale[..., None] * quat[..., :3]


def _from_mrp(mrp: Any) -> Any:
    squared_plus_1 = jnp.sum(mrp * mrp, axis=-1, keepdims=True) + 1
    return jnp.concatenate([2 * mrp[..., :3], 2 - squared_plus_1], axis=-1) / squared_plus_1


def _as_mrp(quat: Any) -> Any:
    sign = jnp.where(quat[..., 3:] < 0, -1., 1.)
    return sign * quat[..., :3] / (1. + sign * quat[..., 3:])


def _canonical(quat: Any) -> Any:
    """q or -q, whichever has w > 0 (or, with w == 0, its first non-zero entry > 0)."""
    negative, zero = quat < 0, quat == 0
    flip = (negative[..., 3] | (zero[..., 3] & negative[..., 0])
            | (zero[..., 3] & zero[..., 0] & negative[..., 1])
            | (zero[..., 3] & zero[..., 0] & zero[..., 1] & negative[..., 2]))
    return jnp.where(flip[..., None], -quat, quat)


def _check_seq(seq: Any, lengths: Sequence[int]) -> tuple[list[int], bool]:
    """The axes (0, 1, 2 for x, y, z) of an Euler sequence, and whether it is intrinsic."""
    if not isinstance(seq, str) or len(seq) not in lengths:
        expected = "3 axes" if lengths == (3,) else "a non-empty string of up to 3 axes"
        raise ValueError(f"Expected {expected}, got {seq!r}")
    intrinsic = re.fullmatch(r"[XYZ]{1,3}", seq) is not None
    if not (intrinsic or re.fullmatch(r"[xyz]{1,3}", seq)):
        raise ValueError("Expected axes from `seq` to be from ['x', 'y', 'z'] or "
                         f"['X', 'Y', 'Z'], got {seq}")
    if any(seq[n] == seq[n + 1] for n in range(len(seq) - 1)):
        raise ValueError(f"Expected consecutive axes to be different, got {seq}")
    return ["xyz".index(a) for a in seq.lower()], intrinsic


def _elementary(axis: int, angle: Any) -> Any:
    parts = [jnp.zeros_like(angle)] * 3 + [jnp.cos(angle / 2.)]
    parts[axis] = jnp.sin(angle / 2.)
    return jnp.stack(parts, axis=-1)


def _from_euler(angles: Any, axes: list[int], intrinsic: bool) -> Any:
    result = _elementary(axes[0], angles[..., 0])
    for position in range(1, len(axes)):
        quat = _elementary(axes[position], angles[..., position])
        result = _compose(result, quat) if intrinsic else _compose(quat, result)
    return result


def _as_euler(quat: Any, axes: list[int], extrinsic: bool) -> Any:
    """See Note [rotations as quaternions] (Bernardes and Viollet's method)."""
    first, third = (0, 2) if extrinsic else (2, 0)
    i, j, k = axes if extrinsic else axes[::-1]
    symmetric = i == k
    if symmetric:
        k = 3 - i - j
    sign = (i - j) * (j - k) * (k - i) // 2
    q = [quat[..., n] for n in range(4)]
    if symmetric:
        a, b, c, d = q[3], q[i], q[j], q[k] * sign
    else:
        a, b, c, d = q[3] - q[j], q[i] + q[k] * sign, q[j] + q[3], q[k] * sign - q[i]
    middle = 2 * jnp.arctan2(jnp.hypot(c, d), jnp.hypot(a, b))
    eps = 1e-7
    case = jnp.where(jnp.abs(middle - np.pi) <= eps, 2, 0)
    case = jnp.where(jnp.abs(middle) <= eps, 1, case)
    half_sum, half_diff = jnp.arctan2(b, a), jnp.arctan2(d, c)
    angles = [jnp.zeros_like(middle), middle, jnp.zeros_like(middle)]
    angles[0] = jnp.where(case == 1, 2 * half_sum, 2 * half_diff * (-1 if extrinsic else 1))
    angles[first] = jnp.where(case == 0, half_sum - half_diff, angles[first])
    angles[third] = jnp.where(case == 0, half_sum + half_diff, angles[third])
    if not symmetric:
        angles[third] = angles[third] * sign
        angles[1] = angles[1] - np.pi / 2
    out = jnp.stack(angles, axis=-1)
    return (out + np.pi) % (2 * np.pi) - np.pi


class Rotation(NamedTuple):
    """Rotations in 3 dimensions (SciPy's ``Rotation``), as unit quaternions ``quat``
    (x, y, z, w): ``(4,)`` for one rotation, ``(n, 4)`` for several. Build one with a
    ``from_*`` class method; ``r * s`` applies s, then r."""

    quat: Any

    @classmethod
    def concatenate(cls, rotations: Sequence[Rotation]) -> Rotation:
        """The rotations of a sequence of Rotations, as one."""
        return cls(jnp.concatenate([rotation.quat for rotation in rotations]))

    @classmethod
    def from_euler(cls, seq: str, angles: Any, degrees: bool = False) -> Rotation:
        """From Euler angles about the axes ``seq`` ('xyz': extrinsic, 'XYZ': intrinsic)."""
        axes, intrinsic = _check_seq(seq, (1, 2, 3))
        angles = jnp.atleast_1d(jnp.asarray(angles))
        if not jnp.issubdtype(angles.dtype, jnp.inexact):
            angles = angles.astype(jnp.result_type(float))
        if angles.shape[-1] != len(axes):
            raise ValueError(f"Expected the last axis of `angles` to have {len(axes)} "
                             f"entries (one per axis of {seq!r}), got shape {angles.shape}")
        if degrees:
            angles = jnp.deg2rad(angles)
        return cls(_from_euler(angles, axes, intrinsic))

    @classmethod
    def from_matrix(cls, matrix: Any) -> Rotation:
        """From rotation matrices (..., 3, 3)."""
        return cls(_from_matrix(jnp.asarray(matrix)))

    @classmethod
    def from_mrp(cls, mrp: Any) -> Rotation:
        """From Modified Rodrigues Parameters (..., 3)."""
        return cls(_from_mrp(jnp.asarray(mrp)))

    @classmethod
    def from_quat(cls, quat: Any) -> Rotation:
        """From quaternions (..., 4), scalar last; they are normalised."""
        return cls(_normalized(jnp.asarray(quat)))

    @classmethod
    def from_rotvec(cls, rotvec: Any, degrees: bool = False) -> Rotation:
        """From rotation vectors (..., 3): the axis times the angle."""
        return cls(_from_rotvec(jnp.asarray(rotvec), degrees))

    @classmethod
    def identity(cls, num: int | None = None, dtype: Any = float) -> Rotation:
        """The identity rotation, or ``num`` of them."""
        quat = jnp.array([0., 0., 0., 1.], dtype=dtype)
        return cls(quat if num is None else jnp.tile(quat, (num, 1)))

    @classmethod
    def random(cls, random_key: Any, num: int | None = None) -> Rotation:
        """Rotations uniform over SO(3) (normalised standard normal quaternions, SciPy's
        method), drawn with ``random_key``."""
        shape = (4,) if num is None else (num, 4)
        return cls.from_quat(_random.normal(random_key, shape))

    def __getitem__(self, indexer: Any) -> Rotation:
        if self.single:
            raise TypeError("Single rotation is not subscriptable.")
        return Rotation(self.quat[indexer])

    def __len__(self) -> int:
        if self.single:
            raise TypeError("Single rotation has no len().")
        return self.quat.shape[0]

    def __mul__(self, other: Any) -> Rotation:     # type: ignore[override]
        """This rotation composed with ``other`` (other first)."""
        if not isinstance(other, Rotation):
            return NotImplemented
        return Rotation.from_quat(_compose(self.quat, other.quat))

    def apply(self, vectors: Any, inverse: bool = False) -> Any:
        """The vectors (..., 3) rotated (by the inverse rotation with ``inverse``)."""
        matrix = self.as_matrix()
        if inverse:
            matrix = jnp.swapaxes(matrix, -1, -2)
        return jnp.einsum("...ij,...j->...i", matrix, jnp.asarray(vectors))

    def as_euler(self, seq: str, degrees: bool = False) -> Any:
        """Euler angles (..., 3) about the three axes ``seq``."""
        axes, intrinsic = _check_seq(seq, (3,))
        angles = _as_euler(self.quat, axes, not intrinsic)
        return jnp.rad2deg(angles) if degrees else angles

    def as_matrix(self) -> Any:
        """Rotation matrices (..., 3, 3)."""
        return _as_matrix(self.quat)

    def as_mrp(self) -> Any:
        """Modified Rodrigues Parameters (..., 3)."""
        return _as_mrp(self.quat)

    def as_rotvec(self, degrees: bool = False) -> Any:
        """Rotation vectors (..., 3), angles in [0, pi]."""
        return _as_rotvec(self.quat, degrees)

    def as_quat(self, canonical: bool = False, scalar_first: bool = False) -> Any:
        """The quaternions; ``canonical`` picks the one of q, -q with w >= 0, and
        ``scalar_first`` puts w first."""
        quat = _canonical(self.quat) if canonical else self.quat
        return jnp.roll(quat, shift=1, axis=-1) if scalar_first else quat

    def inv(self) -> Rotation:
        """The inverse rotation(s)."""
        return Rotation(self.quat * jnp.array([-1, -1, -1, 1], dtype=self.quat.dtype))

    def magnitude(self) -> Any:
        """The angle of each rotation, in [0, pi]."""
        return 2. * jnp.arctan2(_norm(self.quat[..., :3]), jnp.abs(self.quat[..., 3]))

    def mean(self, weights: Any = None) -> Rotation:
        """The (weighted) mean rotation: the top eigenvector of sum w q q^T."""
        if self.single:
            raise TypeError("Single rotation has no len(): mean needs several rotations.")
        w = (jnp.ones(self.quat.shape[0], dtype=self.quat.dtype) if weights is None
             else jnp.asarray(weights, dtype=self.quat.dtype))
        if w.ndim != 1:
            raise ValueError(f"Expected `weights` to be 1 dimensional, got shape {w.shape}.")
        if w.shape[0] != len(self):
            raise ValueError("Expected `weights` to have number of values equal to number "
                             f"of rotations, got {w.shape[0]} values and {len(self)} "
                             "rotations.")
        k = jnp.dot(w[None, :] * self.quat.T, self.quat)
        _, vectors = jnp.linalg.eigh(k)
        return Rotation(vectors[:, -1])

    @property
    def single(self) -> bool:
        """Whether this is one rotation (``quat`` of shape (4,))."""
        return self.quat.ndim == 1


class Slerp(NamedTuple):
    """Spherical linear interpolation of rotations (SciPy's ``Slerp``): build it with
    ``Slerp.init(times, rotations)``, call it with times to get the rotations between."""

    times: Any
    timedelta: Any
    rotations: Rotation
    rotvecs: Any

    @classmethod
    def init(cls, times: Any, rotations: Rotation) -> Slerp:
        """The interpolator through ``rotations`` (at least 2) at increasing ``times``."""
        if not isinstance(rotations, Rotation):
            raise TypeError("`rotations` must be a `Rotation` instance.")
        if rotations.single or len(rotations) == 1:
            raise ValueError("`rotations` must be a sequence of at least 2 rotations.")
        times = jnp.asarray(times, dtype=rotations.quat.dtype)
        if times.ndim != 1:
            raise ValueError("Expected times to be specified in a 1 dimensional array, "
                             f"got {times.ndim} dimensions.")
        if times.shape[0] != len(rotations):
            raise ValueError("Expected number of rotations to be equal to number of "
                             f"timestamps given, got {len(rotations)} rotations and "
                             f"{times.shape[0]} timestamps.")
        starts = Rotation(rotations.quat[:-1])
        return cls(times=times, timedelta=jnp.diff(times), rotations=starts,
                   rotvecs=(starts.inv() * Rotation(rotations.quat[1:])).as_rotvec())

    def __call__(self, times: Any) -> Rotation:
        """The rotations at ``times`` (a scalar gives one rotation)."""
        times = jnp.asarray(times, dtype=self.times.dtype)
        if times.ndim > 1:
            raise ValueError("`times` must be at most 1-dimensional.")
        single = times.ndim == 0
        times = jnp.atleast_1d(times)
        index = jnp.maximum(jnp.searchsorted(self.times, times) - 1, 0)
        alpha = (times - self.times[index]) / self.timedelta[index]
        result = self.rotations[index] * Rotation.from_rotvec(
            self.rotvecs[index] * alpha[:, None])
        return result[0] if single else result
