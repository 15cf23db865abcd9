"""Convolutions: lax.conv_general_dilated and its convenience forms (conv,
conv_with_general_padding, conv_transpose), ConvDimensionNumbers, conv_dimension_numbers
and padtype_to_pads, with JAX 0.10.2's arguments and conventions.

Everything is one primitive, ``conv_general_dilated`` (compiler/primitives/conv.py),
whose params are canonical: these functions turn padding strings into pairs and
dimension-number strings into permutations. conv_general_dilated_local (an unshared
convolution: a kernel per output position) is conv_general_dilated_patches contracted with
dot_general.
"""
from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from ..compiler.primitives.conv import conv_general_dilated_p, dilate_dim
from ..compiler.primitives.reductions import with_precision
from ..core import dtypes
from ..core.operands import asarray
from ..core.precision import Precision, canonicalize_precision, check_precision
from ..core.tracing import bind
from ..transforms.partitioned import place_computed
from .dot import dot_general
from .shape import rev, transpose

__all__ = ["ConvDimensionNumbers", "conv_dimension_numbers", "conv_general_dilated", "conv",
           "conv_with_general_padding", "conv_transpose", "padtype_to_pads",
           "conv_general_permutations", "conv_shape_tuple", "conv_general_shape_tuple",
           "conv_transpose_shape_tuple", "conv_general_dilated_patches",
           "conv_general_dilated_local", "ConvGeneralDilatedDimensionNumbers"]


class ConvDimensionNumbers(NamedTuple):
    """Which dimensions of a convolution's operands are the batch, feature and spatial ones:
    ``lhs_spec`` = (batch, feature, spatial...), ``rhs_spec`` = (output feature, input
    feature, spatial...), ``out_spec`` = (batch, feature, spatial...)."""
    lhs_spec: Sequence[int]
    rhs_spec: Sequence[int]
    out_spec: Sequence[int]


def padtype_to_pads(in_shape: Sequence[int], window_shape: Sequence[int],
                    window_strides: Sequence[int], padding: str) -> list[tuple[int, int]]:
    """``(low, high)`` pairs for the padding string 'VALID', 'SAME' or 'SAME_LOWER': SAME
    gives ``ceil(in / stride)`` outputs, the odd element of padding going high (low for
    SAME_LOWER)."""
    if not isinstance(padding, str) or padding.upper() not in ("VALID", "SAME", "SAME_LOWER"):
        raise ValueError(f"unrecognised padding {padding!r}: expected 'VALID', 'SAME', "
                         "'SAME_LOWER' or a sequence of (low, high) pairs")
    padding = padding.upper()
    if padding == "VALID":
        return [(0, 0)] * len(in_shape)
    pads = []
    for n, w, s in zip(in_shape, window_shape, window_strides, strict=True):
        total = max(0, (-(-n // s) - 1) * s + w - n)
        pads.append((total // 2, total - total // 2) if padding == "SAME"
                    else (total - total // 2, total // 2))
    return pads


def conv_general_permutations(dimension_numbers: Sequence[str]) -> tuple[tuple[int, ...], ...]:
    """The permutations of three spec strings such as ('NHWC', 'HWIO', 'NHWC')."""
    lhs, rhs, out = dimension_numbers
    pairs = (("N", "C"), ("O", "I"), ("N", "C"))
    for i, (spec, (a, b)) in enumerate(zip(dimension_numbers, pairs, strict=True)):
        if spec.count(a) != 1 or spec.count(b) != 1:
            raise TypeError(f"convolution dimension_numbers[{i}] must contain the characters "
                            f"{a!r} and {b!r} exactly once, got {spec!r}")
        if len(set(spec)) != len(spec):
            raise TypeError(f"convolution dimension_numbers[{i}] cannot have duplicate "
                            f"characters, got {spec!r}")
    if not (set(lhs) - {"N", "C"} == set(rhs) - {"O", "I"} == set(out) - {"N", "C"}):
        raise TypeError("convolution dimension_numbers elements must each have the same set "
                        f"of spatial characters, got {tuple(dimension_numbers)}")

    def perm(spec: str, pair: tuple[str, str]) -> tuple[int, ...]:
        spatial = [i for i, c in enumerate(spec) if c not in pair]
        spatial.sort(key=lambda i: rhs.index(spec[i]))
        return (spec.index(pair[0]), spec.index(pair[1]), *spatial)
    return tuple(perm(s, p) for s, p in zip(dimension_numbers, pairs, strict=True))


def conv_dimension_numbers(lhs_shape: Sequence[int], rhs_shape: Sequence[int],
                           dimension_numbers: Any) -> ConvDimensionNumbers:
    """``dimension_numbers`` (None, three spec strings, or a ConvDimensionNumbers) as a
    ConvDimensionNumbers; None means ('NCHW', 'OIHW', 'NCHW') for any rank."""
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        return dimension_numbers
    if len(lhs_shape) != len(rhs_shape):
        raise TypeError("convolution requires lhs and rhs ndim to be equal, got "
                        f"{len(lhs_shape)} and {len(rhs_shape)}")
    if dimension_numbers is None:
        iota = tuple(range(len(lhs_shape)))
        return ConvDimensionNumbers(iota, iota, iota)
    if not isinstance(dimension_numbers, (list, tuple)):
        raise TypeError("convolution dimension_numbers must be a tuple/list of three strings, "
                        f"a ConvDimensionNumbers or None, got {type(dimension_numbers)}")
    if len(dimension_numbers) != 3:
        raise TypeError("convolution dimension_numbers list/tuple must have length 3, got "
                        f"{len(dimension_numbers)}")
    if not all(isinstance(s, str) for s in dimension_numbers):
        # Three sequences of ints are what ConvDimensionNumbers holds: accept them too.
        try:
            specs = [tuple(operator.index(i) for i in s) for s in dimension_numbers]
        except TypeError:
            raise TypeError("convolution dimension_numbers elements must be strings, got "
                            f"{tuple(map(type, dimension_numbers))}") from None
        return ConvDimensionNumbers(*specs)
    for i, spec in enumerate(dimension_numbers):
        if len(spec) != len(lhs_shape):
            raise TypeError(f"convolution dimension_numbers[{i}] must have len equal to the "
                            f"ndim of lhs and rhs, got {len(spec)} for lhs and rhs shapes "
                            f"{tuple(lhs_shape)} and {tuple(rhs_shape)}")
    return ConvDimensionNumbers(*conv_general_permutations(dimension_numbers))


def window_ints(op: str, name: str, values: Any, n: int, dims: str) -> tuple[int, ...]:
    """``values`` (strides, dilations, window sizes: one per dimension) as ``n`` ints, for
    ``op``'s argument ``name``; ``dims`` names what the operands have ``n`` of. Shared
    with lax.reduce_window."""
    try:
        out = tuple(operator.index(v) for v in values)
    except TypeError:
        raise TypeError(f"{op}: {name} must be a sequence of {n} integers, got "
                        f"{values!r}") from None
    if len(out) != n:
        raise ValueError(f"{op}: {name} has {len(out)} entries, but the operands have {n} "
                         f"{dims}; give one for each")
    return out


def padding_pairs(op: str, padding: str | Sequence[tuple[int, int]], in_shape: Sequence[int],
                  window_shape: Sequence[int], window_strides: Sequence[int]
                  ) -> tuple[tuple[int, int], ...]:
    """``op``'s ``padding`` as ``(low, high)`` int pairs: a string through padtype_to_pads
    over ``in_shape`` with windows ``window_shape`` (dilated) and ``window_strides``, or
    pairs checked. Shared with lax.reduce_window."""
    if isinstance(padding, str):
        padding = padtype_to_pads(in_shape, window_shape, window_strides, padding)
    try:
        return tuple((operator.index(lo), operator.index(hi)) for lo, hi in padding)
    except (TypeError, ValueError):
        raise ValueError(f"{op}: padding should be a string or a sequence of (low, high) "
                         f"pairs, got {padding!r}") from None


def conv_general_dilated(lhs: Any, rhs: Any, window_strides: Sequence[int],
                         padding: str | Sequence[tuple[int, int]],
                         lhs_dilation: Sequence[int] | None = None,
                         rhs_dilation: Sequence[int] | None = None,
                         dimension_numbers: Any = None, feature_group_count: int = 1,
                         batch_group_count: int = 1, precision: Any = None,
                         preferred_element_type: Any = None, out_sharding: Any = None) -> Any:
    """General n-dimensional convolution with strides, padding, input (``lhs``) and kernel
    (``rhs``) dilation, dimension numbers and feature/batch groups, as XLA's Conv.

    ``precision`` becomes the lowered convolution's precision_config (on CPU every
    convolution runs at the full precision of its dtype). ``preferred_element_type``
    converts both operands first (so the result has that dtype). ``out_sharding`` lays the
    result out (lax.dot_general's)."""
    precision = check_precision("conv_general_dilated", precision)
    if precision is not None and not isinstance(precision[0], str):
        raise ValueError(f"conv_general_dilated: the dot algorithm {precision.preset} does "
                         "not apply to convolutions; use a lax.Precision")
    lhs, rhs = asarray(lhs), asarray(rhs)
    if lhs.ndim != rhs.ndim or lhs.ndim < 2:
        raise TypeError("conv_general_dilated: lhs and rhs must have the same rank, at "
                        f"least 2, got shapes {lhs.shape} and {rhs.shape}")
    if lhs.dtype != rhs.dtype:
        raise TypeError("conv_general_dilated requires arguments to have the same dtypes, "
                        f"got {lhs.dtype.name}, {rhs.dtype.name}")
    dnums = conv_dimension_numbers(lhs.shape, rhs.shape, dimension_numbers)
    lhs_spec, rhs_spec, out_spec = (tuple(operator.index(i) for i in s) for s in dnums)
    nsp = lhs.ndim - 2
    op, spatial = "conv_general_dilated", "spatial dimensions"
    window_strides = window_ints(op, "window_strides", window_strides, nsp, spatial)
    lhs_dilation = (1,) * nsp if lhs_dilation is None else window_ints(
        op, "lhs_dilation", lhs_dilation, nsp, spatial)
    rhs_dilation = (1,) * nsp if rhs_dilation is None else window_ints(
        op, "rhs_dilation", rhs_dilation, nsp, spatial)
    if isinstance(padding, str) and any(d != 1 for d in lhs_dilation):
        raise ValueError("conv_general_dilated: string padding is not implemented for "
                         "transposed convolution (lhs_dilation); give the padding as "
                         "(low, high) pairs or use conv_transpose")
    window = [dilate_dim(rhs.shape[d], r) for d, r in zip(rhs_spec[2:], rhs_dilation,
                                                           strict=True)]
    padding = padding_pairs(op, padding, [lhs.shape[d] for d in lhs_spec[2:]], window,
                            window_strides)
    if len(padding) != nsp:
        raise ValueError(f"conv_general_dilated: padding has {len(padding)} pairs, but the "
                         f"operands have {nsp} spatial dimensions")
    for name, count in (("feature_group_count", feature_group_count),
                        ("batch_group_count", batch_group_count)):
        if not isinstance(count, (int, np.integer)) or isinstance(count, bool) or count < 1:
            raise ValueError(f"conv_general_dilated: {name} must be a positive integer, "
                             f"got {count!r}")
    if preferred_element_type is not None:
        want = dtypes.canonicalize(preferred_element_type)
        _check_preferred(lhs.dtype, want)
        lhs, rhs = lhs.astype(want), rhs.astype(want)
    return place_computed(lambda: bind(
        conv_general_dilated_p, lhs, rhs, window_strides=window_strides, padding=padding,
        lhs_dilation=lhs_dilation, rhs_dilation=rhs_dilation,
        dimension_numbers=(lhs_spec, rhs_spec, out_spec),
        feature_group_count=int(feature_group_count),
        batch_group_count=int(batch_group_count), **with_precision(precision)), out_sharding)


def _check_preferred(have: np.dtype, want: np.dtype) -> None:
    """JAX's rule: integral -> integral or floating, floating -> floating, complex ->
    complex, signed stays signed, never narrower."""
    def kind(d: np.dtype) -> str:
        return "f" if d.name == "bfloat16" else "i" if d.kind == "u" else d.kind
    problem = None
    if not (kind(have) == "i" and kind(want) == "f"):
        if kind(have) != kind(want):
            problem = "another kind of number"
        elif have.kind == "i" and want.kind != "i":
            problem = "signed operands need a signed type"
    if problem is None and want.itemsize < have.itemsize:
        problem = "narrower"
    if problem:
        raise TypeError(f"conv_general_dilated: preferred_element_type {want.name} does not "
                        f"suit operands of dtype {have.name} ({problem}); the compatible pairs are "
                        "(integral, integral), (integral, floating), (floating, floating) "
                        "and (complex, complex), at least as wide, signed staying signed")


def conv(lhs: Any, rhs: Any, window_strides: Sequence[int], padding: str,
         precision: Any = None, preferred_element_type: Any = None) -> Any:
    """``conv_general_dilated`` with NCHW/OIHW layouts and no dilation."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_with_general_padding(lhs: Any, rhs: Any, window_strides: Sequence[int],
                              padding: str | Sequence[tuple[int, int]],
                              lhs_dilation: Sequence[int] | None,
                              rhs_dilation: Sequence[int] | None, precision: Any = None,
                              preferred_element_type: Any = None) -> Any:
    """``conv_general_dilated`` with NCHW/OIHW layouts."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=lhs_dilation,
                                rhs_dilation=rhs_dilation, precision=precision,
                                preferred_element_type=preferred_element_type)


def _conv_transpose_padding(k: int, s: int, padding: Any) -> tuple[int, int]:
    if padding == "SAME":
        total = k + s - 2
        low = k - 1 if s > k - 1 else int(np.ceil(total / 2))
    elif padding == "VALID":
        total = k + s - 2 + max(k - s, 0)
        low = k - 1
    elif isinstance(padding, tuple):
        pads = tuple(k - p - 1 for p in padding)
        low, total = pads[0], sum(pads)
    else:
        raise ValueError(f"conv_transpose: invalid padding {padding!r}; use 'SAME', 'VALID' "
                         "or (low, high) pairs")
    return low, total - low


_TRANSPOSE_DEFAULTS = {2: ("NC", "IO", "NC"), 3: ("NHC", "HIO", "NHC"),
                       4: ("NHWC", "HWIO", "NHWC"), 5: ("NHWDC", "HWDIO", "NHWDC")}


def conv_transpose(lhs: Any, rhs: Any, strides: Sequence[int],
                   padding: str | Sequence[tuple[int, int]],
                   rhs_dilation: Sequence[int] | None = None, dimension_numbers: Any = None,
                   transpose_kernel: bool = False, precision: Any = None,
                   preferred_element_type: Any = None,
                   use_consistent_padding: bool = False) -> Any:
    """The N-d convolution 'transpose' (a fractionally strided convolution), with JAX's
    conventions: TensorFlow layouts by default, the kernel not flipped unless
    ``transpose_kernel``; 'SAME'/'VALID' (and, with ``use_consistent_padding``, pairs) name
    the padding of the forward convolution."""
    lhs, rhs = asarray(lhs), asarray(rhs)
    if lhs.ndim != rhs.ndim or lhs.ndim < 2:
        raise TypeError("conv_transpose: lhs and rhs must have the same rank, at least 2, "
                        f"got shapes {lhs.shape} and {rhs.shape}")
    if dimension_numbers is None:
        if lhs.ndim not in _TRANSPOSE_DEFAULTS:
            raise ValueError("conv_transpose: no default dimension_numbers for rank "
                             f"{lhs.ndim}; pass dimension_numbers")
        dimension_numbers = _TRANSPOSE_DEFAULTS[lhs.ndim]
    dn = conv_dimension_numbers(lhs.shape, rhs.shape, dimension_numbers)
    nsp = lhs.ndim - 2
    strides = tuple(strides)
    kernel = [rhs.shape[d] for d in dn.rhs_spec[2:]]
    rhs_dilation = (1,) * nsp if rhs_dilation is None else tuple(rhs_dilation)
    if use_consistent_padding or (isinstance(padding, str) and padding in ("SAME", "VALID")):
        per_dim = [padding] * len(strides) if isinstance(padding, str) else \
            [tuple(p) for p in padding]
        pads: Any = tuple(_conv_transpose_padding(dilate_dim(k, r), s, p) for k, r, s, p in
                          zip(kernel, rhs_dilation, strides, per_dim, strict=True))
    else:
        pads = padding
    if transpose_kernel:
        rhs = rev(rhs, tuple(dn.rhs_spec[2:]))
        axes = list(range(rhs.ndim))
        axes[dn.rhs_spec[0]], axes[dn.rhs_spec[1]] = dn.rhs_spec[1], dn.rhs_spec[0]
        rhs = rhs.transpose(axes)
    return conv_general_dilated(lhs, rhs, (1,) * nsp, pads, strides, rhs_dilation, dn,
                                precision=precision,
                                preferred_element_type=preferred_element_type)


# --- shape helpers (public in jax.lax; stax uses them) ------------------------------------------

def conv_shape_tuple(lhs_shape: Sequence[int], rhs_shape: Sequence[int],
                     strides: Sequence[int], pads: Any,
                     batch_group_count: int = 1) -> tuple[int, ...]:
    """The output shape of a convolution of operands in canonical (NCHW, OIHW) order."""
    if isinstance(pads, str):
        pads = padtype_to_pads(lhs_shape[2:], rhs_shape[2:], strides, pads)
    if len(pads) != len(lhs_shape) - 2:
        raise TypeError(f"wrong number of explicit pads for convolution: expected "
                        f"{len(lhs_shape) - 2}, got {len(pads)}")
    spatial = []
    for n, k, s, (lo, hi) in zip(lhs_shape[2:], rhs_shape[2:], strides, pads, strict=True):
        if n + lo + hi < 0:
            raise ValueError(f"negative padding {tuple(pads)} is larger than the dimension "
                             f"{n} it pads")
        spatial.append(max(0, (n + lo + hi - k) // s + 1))
    return (lhs_shape[0] // batch_group_count, rhs_shape[0], *spatial)


def conv_general_shape_tuple(lhs_shape: Sequence[int], rhs_shape: Sequence[int],
                             window_strides: Sequence[int], padding: Any,
                             dimension_numbers: Sequence[str]) -> tuple[int, ...]:
    """The output shape of ``conv_general_dilated`` (no dilation) with spec strings."""
    lhs_perm, rhs_perm, out_perm = conv_general_permutations(dimension_numbers)
    out = conv_shape_tuple([lhs_shape[i] for i in lhs_perm], [rhs_shape[i] for i in rhs_perm],
                           window_strides, padding)
    return tuple(out[i] for i in np.argsort(out_perm))


def conv_transpose_shape_tuple(lhs_shape: Sequence[int], rhs_shape: Sequence[int],
                               window_strides: Sequence[int], padding: Any,
                               dimension_numbers: Sequence[str]) -> tuple[int, ...]:
    """The output shape of ``conv_transpose`` (no dilation) with spec strings."""
    lhs_perm, rhs_perm, out_perm = conv_general_permutations(dimension_numbers)
    lhs_t = [lhs_shape[i] for i in lhs_perm]
    rhs_t = [rhs_shape[i] for i in rhs_perm]
    if isinstance(padding, str):
        padding = [_conv_transpose_padding(k, s, padding)
                   for k, s in zip(rhs_t[2:], window_strides, strict=True)]
    spatial = [(i - 1) * s - k + 2 + sum(p) for i, k, s, p in
               zip(lhs_t[2:], rhs_t[2:], window_strides, padding, strict=True)]
    out = (lhs_t[0], rhs_t[0], *spatial)
    return tuple(out[i] for i in np.argsort(out_perm))


def conv_general_dilated_patches(lhs: Any, filter_shape: Sequence[int],
                                 window_strides: Sequence[int],
                                 padding: str | Sequence[tuple[int, int]],
                                 lhs_dilation: Sequence[int] | None = None,
                                 rhs_dilation: Sequence[int] | None = None,
                                 dimension_numbers: Any = None, precision: Any = None,
                                 preferred_element_type: Any = None) -> Any:
    """The patches ``conv_general_dilated`` would see: a convolution with a one-hot kernel
    that moves each position of a window into its own output feature (features major,
    window positions minor), as JAX's."""
    lhs = asarray(lhs)
    filter_shape = tuple(operator.index(k) for k in filter_shape)
    dn = conv_dimension_numbers(lhs.shape, (1, 1, *filter_shape), dimension_numbers)
    size = int(np.prod(filter_shape, dtype=np.int64))
    channels = lhs.shape[dn.lhs_spec[1]]
    eye = np.broadcast_to(np.eye(size, dtype=lhs.dtype), (channels, size, size))
    rhs = np.moveaxis(eye.reshape(channels * size, 1, *filter_shape), (0, 1),
                      (dn.rhs_spec[0], dn.rhs_spec[1]))
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                                dn, feature_group_count=channels, precision=precision,
                                preferred_element_type=preferred_element_type)


ConvGeneralDilatedDimensionNumbers = Any
"""What ``dimension_numbers=`` of the convolutions accepts: None, a ConvDimensionNumbers,
or three layout strings such as ``('NCHW', 'OIHW', 'NCHW')``."""


def conv_general_dilated_local(lhs: Any, rhs: Any, window_strides: Sequence[int],
                               padding: str | Sequence[tuple[int, int]],
                               filter_shape: Sequence[int],
                               lhs_dilation: Sequence[int] | None = None,
                               rhs_dilation: Sequence[int] | None = None,
                               dimension_numbers: Any = None, precision: Any = None) -> Any:
    """A convolution whose kernel differs at every output position (a locally connected
    layer). ``rhs`` has the kernel layout of ``dimension_numbers``, with input features
    ``C * prod(filter_shape)`` (features major, as conv_general_dilated_patches orders
    them) and the output's spatial sizes as its spatial dimensions.

    Each output position's patch (conv_general_dilated_patches) is contracted with that
    position's kernel: one dot_general batched over the spatial positions."""
    canonical = canonicalize_precision("conv_general_dilated_local", precision)
    if canonical is not None and not isinstance(canonical[0], str):
        raise ValueError(f"Unsupported precision for conv_general_dilated_local: {precision}")
    lhs, rhs = asarray(lhs), asarray(rhs)
    patches = conv_general_dilated_patches(
        lhs, filter_shape, window_strides, padding, lhs_dilation, rhs_dilation,
        dimension_numbers, precision=None if canonical is None else Precision[canonical[0]])
    lhs_spec, rhs_spec, out_spec = conv_dimension_numbers(
        lhs.shape, (1, 1, *tuple(filter_shape)), dimension_numbers)
    if rhs.ndim != patches.ndim:
        raise TypeError(f"conv_general_dilated_local: rhs has rank {rhs.ndim}, expected "
                        f"{patches.ndim}")
    want = {rhs_spec[1]: patches.shape[out_spec[1]]}
    want.update({r: patches.shape[o] for r, o in zip(rhs_spec[2:], out_spec[2:], strict=True)})
    for d, size in want.items():
        if rhs.shape[d] != size:
            raise TypeError(f"conv_general_dilated_local: rhs dimension {d} has size "
                            f"{rhs.shape[d]}, expected {size} (rhs shape {rhs.shape}, "
                            f"patches shape {patches.shape})")
    # Pair the spatial dimensions in the patches' order, so the batch dimensions of the
    # product come out in the output's spatial order.
    pairs = sorted(zip(out_spec[2:], rhs_spec[2:], strict=True))
    dims = (((out_spec[1],), (rhs_spec[1],)),
            (tuple(p for p, _ in pairs), tuple(r for _, r in pairs)))
    out = dot_general(patches, rhs, dims, precision=precision)
    # out: spatial dims (ascending positions of the output), then N, then O.
    order = [d for d in range(out.ndim - 2)]
    for d, s in sorted(((out_spec[0], out.ndim - 2), (out_spec[1], out.ndim - 1))):
        order.insert(d, s)
    return transpose(out, tuple(order))
