"""einsum for one or two operands, as transposes, reductions and one dot_general;
einsum_path and contraction_path; and vecdot, matvec, vecmat written with einsum."""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import lax
from ..core import dtypes
from ..core.tracing import user_source
from ..core.tracing import where as _where
from ..transforms.partitioned import place_computed
from .comparisons import where
from .complex_ops import conj
from .core import asarray
from .reductions import any as _any
from .shape_ops import _axes, moveaxis, reshape, transpose
from .tensor_contractions import _dot_general, check_precision, lax_precision


def _error(message: str) -> ValueError:
    source = user_source()
    return ValueError(f"einsum: {message}" + (f" (at {source})" if source else ""))


# Note [einsum ellipsis]
# ~~~~~~~~~~~~~~~~~~~~~~
# ``...`` in an operand's spec stands for the dimensions its labels do not name. Those
# dimensions broadcast as NumPy's do, aligned on the right: the k-th last ellipsis
# dimension of every operand gets one label of its own (a character no user spec can hold,
# chr(0xF0000 + k), in a private-use plane that specs are refused), and a size-1 dimension
# facing a larger one is squeezed out of its operand, which is what broadcasting it means
# for a sum of products. Without ``->`` the output is the ellipsis labels followed by the
# labels that occur once, sorted by code point (NumPy's rule).
#
# A label is any character but ``,``, ``-``, ``>`` and ``.`` (JAX's einsum, through
# opt_einsum, takes digits and other characters as labels: Flax writes '...kh1d'), not
# only NumPy's letters.

_ELLIPSIS_BASE = 0xF0000


def _ellipsis_labels(count: int) -> str:
    return "".join(chr(_ELLIPSIS_BASE + k) for k in range(count))[::-1]   # the last is the base


def _is_ellipsis_label(c: str) -> bool:
    return ord(c) >= _ELLIPSIS_BASE


def interleaved(subscripts: Any, operands: tuple) -> tuple[str, tuple]:
    """``einsum(x, [0, 1], y, [1, 2], [0, 2])`` (NumPy's sublist form: operands each
    followed by a list of axis numbers 0..51 or ``...``, then optionally the output's) as
    ``("ab,bc->ac", (x, y))``; a string ``subscripts`` passes through."""
    if isinstance(subscripts, str):
        return subscripts, operands
    args = (subscripts, *operands)
    pairs, out = args[:len(args) // 2 * 2], args[len(args) // 2 * 2:]

    def spec(sublist: Any) -> str:
        if isinstance(sublist, str) or not isinstance(sublist, (list, tuple)):
            raise TypeError(f"einsum: subscripts must be a string or, in the sublist form, "
                            f"lists of axis numbers, got {type(sublist).__name__}")
        letters = []
        for k in sublist:
            if k is Ellipsis:
                letters.append("...")
            elif isinstance(k, (int, np.integer)) and not isinstance(k, bool) and 0 <= k < 52:
                letters.append(chr(ord("a") + k) if k < 26 else chr(ord("A") + k - 26))
            else:
                raise _error(f"sublist entry {k!r} must be an int in [0, 52) or '...'")
        return "".join(letters)
    lhs = ",".join(spec(sublist) for sublist in pairs[1::2])
    if not out:       # NumPy's implicit output: ``...``, then the axes named once, in order
        named = [k for sublist in pairs[1::2] for k in sublist]
        once = sorted(k for k in set(named) if k is not Ellipsis and named.count(k) == 1)
        out = ([Ellipsis] if Ellipsis in named else []) + once,
    return lhs + "->" + spec(out[0]), pairs[0::2]


def _parse(subscripts: str, shapes: list[tuple[int, ...]]) -> tuple[list[str], str]:
    """Operand specs and the output spec, with every ``...`` replaced by labels of its own.
    See Note [einsum ellipsis]."""
    if not isinstance(subscripts, str):
        raise TypeError(f"einsum: subscripts must be a string, got {type(subscripts).__name__}")
    subscripts = subscripts.replace(" ", "")
    if subscripts.count("->") > 1:
        raise _error(f"{subscripts!r} has more than one '->'")
    lhs, arrow, out = subscripts.partition("->")
    inputs = lhs.split(",")
    if len(inputs) != len(shapes):
        raise _error(f"{len(inputs)} operand specs for {len(shapes)} operands")
    for spec in [*inputs, out]:
        rest = spec.replace("...", "", 1)
        if "." in rest:
            raise _error(f"invalid ellipsis in {spec!r}: use '...' at most once per operand")
        bad = [c for c in rest if c in "->" or _is_ellipsis_label(c)]
        if bad:
            raise _error(f"invalid subscript {bad[0]!r} in {spec!r}: '-' and '>' only form "
                         "one '->', and characters from U+F0000 on are reserved")
    specs = []
    rank = 0
    for spec, shape in zip(inputs, shapes, strict=True):
        named = len(spec.replace("...", ""))
        if "..." in spec:
            if named > len(shape):
                raise _error(f"spec {spec!r} names {named} dimensions of an operand of rank "
                             f"{len(shape)}")
            rank = max(rank, len(shape) - named)
            spec = spec.replace("...", _ellipsis_labels(len(shape) - named))
        elif named != len(shape):
            raise _error(f"spec {spec!r} does not match an operand of rank {len(shape)}")
        specs.append(spec)
    ellipsis = _ellipsis_labels(rank)
    if arrow:
        out = out.replace("...", ellipsis)
    else:
        letters = lhs.replace(",", "").replace("...", "")
        out = ellipsis + "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    for c in out:
        if not any(c in spec for spec in specs):
            raise _error(f"output subscript {c!r} does not occur in any operand")
        if out.count(c) > 1:
            raise _error(f"output subscript {c!r} occurs more than once")
    return specs, out


def _broadcast_ellipsis(operands: list[Any], specs: list[str]) -> tuple[list[Any], list[str]]:
    """Squeeze size-1 dimensions that face a larger one of the same label (broadcasting);
    any other size disagreement is an error."""
    sizes: dict[str, set[int]] = {}
    for x, spec in zip(operands, specs, strict=True):
        for c, n in zip(spec, x.shape, strict=True):
            sizes.setdefault(c, set()).add(n)
    out_ops, out_specs = [], []
    for x, spec in zip(operands, specs, strict=True):
        drop = [k for k, (c, n) in enumerate(zip(spec, x.shape, strict=True))
                if n == 1 and len(sizes[c] - {1}) > 0]
        for c in set(spec):
            if len(sizes[c] - {1}) > 1 or (len(sizes[c]) > 1 and not _is_ellipsis_label(c)):
                raise _error(f"subscript {c!r} has sizes {sorted(sizes[c])} in different "
                             "operands")
        if drop:
            x = reshape(x, tuple(n for k, n in enumerate(x.shape) if k not in drop))
            spec = "".join(c for k, c in enumerate(spec) if k not in drop)
        out_ops.append(x)
        out_specs.append(spec)
    return out_ops, out_specs


def _sum_own(x: Any, axis: Any) -> Any:
    """A sum in the operand's own dtype, as JAX's einsum: int8 stays int8 (and wraps),
    booleans sum as 'or', bfloat16 accumulates in bfloat16 (jnp.sum's would be float32)."""
    if x.dtype == bool:
        return _any(x, axis=axis)
    return lax.reduce_sum(x, _axes(axis, x.ndim, "einsum"))


def _reduce_own(x: Any, spec: str, keep: set[str]) -> tuple[Any, str]:
    """Sum out letters that appear only in this operand (and not in the output);
    take diagonals of repeated letters."""
    for c in set(spec):
        while spec.count(c) > 1:                       # a diagonal: x[..., i, ..., i, ...]
            i = spec.index(c)
            j = spec.index(c, i + 1)
            n = x.shape[i]
            eye = asarray(__import__("numpy").eye(n, dtype=bool))
            x = moveaxis(x, (i, j), (-2, -1))
            x = _sum_own(where(eye, x, asarray(0, x.dtype)), -1)
            rest = [s for k, s in enumerate(spec) if k not in (i, j)]
            spec = "".join(rest) + c                   # the diagonal is now the last axis
    drop = [k for k, c in enumerate(spec) if c not in keep]
    if drop:
        x = _sum_own(x, tuple(drop))
        spec = "".join(c for k, c in enumerate(spec) if k not in drop)
    return x, spec


def einsum(subscripts: Any, *operands: Any, out: Any = None, optimize: Any = "auto",
           precision: Any = None, preferred_element_type: Any = None,
           _dot_general: Any = None, out_sharding: Any = None) -> Any:
    """NumPy's einsum (implicit and explicit output, ``...``, repeated letters for
    diagonals, the sublist form). ``optimize`` chooses the order of the pairwise
    contractions, as in JAX: "auto"/True (NumPy's optimal path for up to 4 operands,
    its greedy one beyond, as opt_einsum's "auto" in JAX), "greedy", "optimal", an
    explicit path (a list of position tuples, as ``einsum_path`` returns), or False
    (left to right); ``precision`` as in lax.dot_general. ``_dot_general``, as in JAX,
    replaces lax.dot_general for every pairwise contraction: it is called as
    ``_dot_general(x, y, dimension_numbers, precision, preferred_element_type=...)``
    (libraries pass their own, e.g. a quantized or sharded product). ``out_sharding``
    lays the result out (lax.dot_general's)."""
    return place_computed(lambda: _einsum_call(subscripts, operands, out, optimize, precision,
                                               preferred_element_type, _dot_general),
                          out_sharding)


def _einsum_call(subscripts: Any, operands: tuple[Any, ...], out: Any, optimize: Any,
                 precision: Any, preferred_element_type: Any, _dot_general: Any) -> Any:
    if out is not None:
        raise ValueError("einsum: the out= argument is not supported (arrays are "
                         "immutable); use the returned value")
    if not isinstance(optimize, (bool, str, list)):
        raise TypeError(f"einsum: optimize must be a bool, a string or a contraction "
                        f"path (a list), got {optimize!r}")
    if _dot_general is not None and not callable(_dot_general):
        raise TypeError(f"einsum: _dot_general must be a function with lax.dot_general's "
                        f"signature, got {_dot_general!r}")
    precision = check_precision("einsum", precision)
    subscripts, operands = interleaved(subscripts, operands)
    operands = [asarray(x) for x in operands]
    # A caller's _dot_general is told the result type, the operands' promoted one when
    # none is asked for (as JAX: Flax's fp8 einsum quantizes the cotangent from it).
    dot = _pairwise_product(_dot_general, precision, preferred_element_type
                            if preferred_element_type is not None or _dot_general is None
                            else dtypes.result_type(*operands)[0])
    if preferred_element_type is not None:
        operands = [x.astype(dtypes.canonicalize(preferred_element_type)) for x in operands]
    specs, out_spec = _parse(subscripts, [x.shape for x in operands])
    operands, specs = _broadcast_ellipsis(operands, specs)
    if len(operands) <= 2 or optimize is False:
        return _einsum(specs, out_spec, operands, dot)
    path = contraction_path(specs, out_spec, [x.shape for x in operands], optimize)
    pairs = list(zip(operands, specs, strict=True))
    for step in path:
        taken = [pairs[i] for i in step]
        for i in sorted(step, reverse=True):
            del pairs[i]
        needed = set("".join(spec for _, spec in pairs) + out_spec)
        kept = "".join(c for c in dict.fromkeys("".join(spec for _, spec in taken))
                       if c in needed)
        pairs.append((_einsum([spec for _, spec in taken], kept,
                              [x for x, _ in taken], dot), kept))
    return _einsum([spec for _, spec in pairs], out_spec, [x for x, _ in pairs], dot)


def _pairwise_product(custom: Any, precision: tuple[str, str] | None,
                      preferred_element_type: Any) -> Any:
    """The product of two operands as einsum contracts them: spmdc's checked
    dot_general, or the caller's ``_dot_general`` with JAX's arguments."""
    if custom is None:
        return lambda x, y, contract, batch: _dot_general(x, y, contract, batch, "einsum",
                                                          precision)
    lax_precision_ = lax_precision(precision)
    return lambda x, y, contract, batch: custom(
        x, y, (contract, batch), lax_precision_,
        preferred_element_type=preferred_element_type)


def contraction_path(specs: list[str], out: str, shapes: list[tuple[int, ...]],
                     optimize: Any) -> list[tuple[int, ...]]:
    """The pairwise contraction order for ``optimize`` (see ``einsum``), as positions in the
    list of operands that remain (each step's result goes to the end): NumPy's path
    search on the shapes alone."""
    if isinstance(optimize, list):
        steps = [tuple(int(i) for i in step) for step in optimize if step != "einsum_path"]
        count = len(specs)
        for step in steps:
            if not step or any(not 0 <= i < count for i in step) or len(set(step)) < len(step):
                raise ValueError(f"einsum: the contraction path {optimize!r} does not fit "
                                 f"{len(specs)} operands")
            count -= len(step) - 1
        if count != 1:
            raise ValueError(f"einsum: the contraction path {optimize!r} leaves {count} "
                             f"operands, not 1")
        return steps
    # as opt_einsum's "auto", which JAX uses: the optimal order for up to 4 operands
    method = "optimal" if optimize == "optimal" or (
        optimize in (True, "auto") and len(specs) <= 4) else "greedy"
    if optimize not in (True, "auto", "greedy", "optimal", "dp", "branch-2", "branch-all"):
        raise ValueError(f"einsum: unknown optimize={optimize!r}; use 'auto', 'greedy', "
                         "'optimal', a path, True or False")
    # NumPy's path search takes letters only: rename the labels (ellipsis ones included)
    letters = {c: chr(ord("a") + k) if k < 26 else chr(ord("A") + k - 26)
               for k, c in enumerate(dict.fromkeys("".join(specs) + out))}
    if len(letters) > 52:
        return [(0, 1)] * (len(specs) - 1)          # too many labels: left to right
    renamed = ",".join("".join(letters[c] for c in spec) for spec in specs)
    views = [np.broadcast_to(np.empty((), np.float32), shape) for shape in shapes]
    path, _ = np.einsum_path(renamed + "->" + "".join(letters[c] for c in out), *views,
                             optimize=method)
    return [tuple(step) for step in path[1:]]


def _einsum(inputs: list[str], out: str, operands: list[Any], dot: Any) -> Any:
    if len(operands) == 1:
        x, spec = _reduce_own(operands[0], inputs[0], set(out))
        return transpose(x, [spec.index(c) for c in out])
    if len(operands) > 2:          # contract left to right, keeping letters used later
        needed = set("".join(inputs[2:]) + out)
        kept = "".join(sorted(set(inputs[0] + inputs[1]) & needed))
        left = _einsum([inputs[0], inputs[1]], kept, operands[:2], dot)
        return _einsum([kept, *inputs[2:]], out, [left, *operands[2:]], dot)
    (x, y), (xs, ys) = operands, inputs
    x, xs = _reduce_own(x, xs, set(ys) | set(out))
    y, ys = _reduce_own(y, ys, set(xs) | set(out))
    batch = [c for c in xs if c in ys and c in out]
    contract = [c for c in xs if c in ys and c not in out]
    z = dot(x, y, (tuple(xs.index(c) for c in contract), tuple(ys.index(c) for c in contract)),
            (tuple(xs.index(c) for c in batch), tuple(ys.index(c) for c in batch)))
    zs = batch + [c for c in xs if c not in batch and c not in contract] \
        + [c for c in ys if c not in batch and c not in contract]
    return transpose(z, [zs.index(c) for c in out])


def einsum_path(subscripts: Any, *operands: Any, optimize: Any = "auto"
                ) -> tuple[list[tuple[int, ...]], str]:
    """The contraction order ``einsum`` would use (pairs of positions in the shrinking
    list of operands) and NumPy's description of it."""
    subscripts, operands = interleaved(subscripts, operands)
    ops = [asarray(x) for x in operands]
    specs, out = _parse(subscripts, [x.shape for x in ops])
    ops, specs = _broadcast_ellipsis(ops, specs)
    shapes = [x.shape for x in ops]
    if optimize is False:
        path: list[tuple[int, ...]] = [(0, 1)] * (len(specs) - 1)
    else:
        path = contraction_path(specs, out, shapes, optimize) if len(specs) > 1 else []
    views = [np.broadcast_to(np.empty((), np.float32), np.shape(x)) for x in operands]
    _, text = np.einsum_path(subscripts, *views, optimize=["einsum_path", *path])
    return path, text


def vecdot(x1: Any, x2: Any, /, *, axis: int = -1, precision: Any = None,
           preferred_element_type: Any = None) -> Any:
    """The dot products of vectors along ``axis`` (the first conjugated), broadcast over
    the other dimensions."""
    x1, x2 = asarray(x1), asarray(x2)
    if x1.shape[axis] != x2.shape[axis]:
        raise ValueError(f"vecdot: the axes have different sizes, {x1.shape[axis]} and "
                         f"{x2.shape[axis]}{_where()}")
    x1, x2 = moveaxis(x1, axis, -1), moveaxis(x2, axis, -1)
    return einsum("...i,...i->...", conj(x1), x2, precision=precision,
                  preferred_element_type=preferred_element_type)


def matvec(x1: Any, x2: Any, /) -> Any:
    """Matrix-vector products, broadcast over leading dimensions: (..., m, n) @ (..., n)."""
    return einsum("...mn,...n->...m", asarray(x1), asarray(x2))


def vecmat(x1: Any, x2: Any, /) -> Any:
    """Vector-matrix products (the vector conjugated): (..., m) @ (..., m, n)."""
    return einsum("...m,...mn->...n", conj(asarray(x1)), asarray(x2))
