"""lax.Precision (re-exported by spmdc.lax) and what ``precision=`` of a dot or convolution accepts.

``canonicalize_precision`` turns any value JAX's ``PrecisionLike`` allows (None, a
Precision, one of its string aliases, or a pair of those, one per operand) into the
primitive's ``precision`` param: None or a pair of StableHLO precision names. The param is
lowered to ``precision_config`` and kept through vmap and grad (Note [dot precision] in
compiler/primitives/reductions.py). On the CPU backend every precision computes at the
full precision of the operands' dtype, as in JAX.

JAX's dot algorithms (``DotAlgorithm``, ``DotAlgorithmPreset``, or a preset's name as
``precision=``) canonicalize to an ``Algorithm``: the dot converts its operands to the
algorithm's types, carries the StableHLO ``algorithm`` attribute as the param
``algorithm`` (Note [dot algorithms]) and converts the result back. On CPU only the presets
JAX 0.10.2 allows there are accepted (XLA's CPU backend computes them at the operands'
precision, as JAX's results show); any other algorithm is the error JAX raises.
"""
from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from . import dtypes
from .operands import asarray

__all__ = ["Precision", "PrecisionLike", "DotDimensionNumbers", "canonicalize_precision",
           "default_precision", "set_default_precision", "DotAlgorithm", "DotAlgorithmPreset",
           "Algorithm", "dot_operands", "check_precision", "preferred_operands",
           "preferred_result", "preset_supported"]

_default: list[tuple[str, str] | None] = [None]
"""``jax_default_matmul_precision`` (core/config.py): what ``precision=None`` means when a
function is traced. Part of every compiled-program cache key (Note [default precision])."""


class Precision(enum.Enum):
    """How precisely a dot or convolution computes on accelerators (bfloat16 passes on
    TPU, tensorfloat32 on GPU). It does not change the dtypes, and on CPU every value
    computes in full precision. Members and their string aliases:

    DEFAULT: ``'default'``, ``'fastest'``, ``'bfloat16'``;
    HIGH: ``'high'``, ``'bfloat16_3x'``, ``'tensorfloat32'``;
    HIGHEST: ``'highest'``, ``'float32'``."""

    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    @classmethod
    def _missing_(cls, value: object) -> Precision | None:
        return _ALIASES.get(value)        # type: ignore[arg-type]

    def __repr__(self) -> str:
        return f"Precision.{self.name}"

    def __str__(self) -> str:
        return self.name


_ALIASES: dict[Any, Precision] = {
    "highest": Precision.HIGHEST, "float32": Precision.HIGHEST,
    "high": Precision.HIGH, "bfloat16_3x": Precision.HIGH, "tensorfloat32": Precision.HIGH,
    "default": Precision.DEFAULT, "bfloat16": Precision.DEFAULT, "fastest": Precision.DEFAULT,
    None: Precision.DEFAULT,
}

# The names of JAX's DotAlgorithmPreset members, which JAX also takes as ``precision=``.
_ALGORITHM_NAMES = frozenset("""
    DEFAULT ANY_F8_ANY_F8_F32 ANY_F8_ANY_F8_F32_FAST_ACCUM ANY_F8_ANY_F8_ANY
    ANY_F8_ANY_F8_ANY_FAST_ACCUM F16_F16_F16 F16_F16_F32 BF16_BF16_BF16 BF16_BF16_F32
    BF16_BF16_F32_X3 BF16_BF16_F32_X6 BF16_BF16_F32_X9 TF32_TF32_F32 TF32_TF32_F32_X3
    F32_F32_F32 F64_F64_F64""".split())

class DotAlgorithm(NamedTuple):
    """A dot algorithm: the types the operands are rounded to, the accumulation type,
    and the component counts of algorithms that emulate a higher precision. On the CPU
    backend JAX (and spmdc) accept only the DotAlgorithmPreset members listed there."""
    lhs_precision_type: Any
    rhs_precision_type: Any
    accumulation_type: Any
    lhs_component_count: int = 1
    rhs_component_count: int = 1
    num_primitive_operations: int = 1
    allow_imprecise_accumulation: bool = False


class DotAlgorithmPreset(enum.Enum):
    """JAX's named dot algorithms (``LHS_RHS_ACCUMULATION``; ``_X3``/``_X6``/``_X9``: that
    many operations emulating a higher precision). On CPU: DEFAULT, F16_F16_F16,
    F32_F32_F32, F64_F64_F64, BF16_BF16_F32, BF16_BF16_F32_X3 and BF16_BF16_F32_X6."""
    DEFAULT = enum.auto()
    ANY_F8_ANY_F8_F32 = enum.auto()
    ANY_F8_ANY_F8_F32_FAST_ACCUM = enum.auto()
    ANY_F8_ANY_F8_ANY = enum.auto()
    ANY_F8_ANY_F8_ANY_FAST_ACCUM = enum.auto()
    F16_F16_F16 = enum.auto()
    F16_F16_F32 = enum.auto()
    BF16_BF16_BF16 = enum.auto()
    BF16_BF16_F32 = enum.auto()
    BF16_BF16_F32_X3 = enum.auto()
    BF16_BF16_F32_X6 = enum.auto()
    BF16_BF16_F32_X9 = enum.auto()
    TF32_TF32_F32 = enum.auto()
    TF32_TF32_F32_X3 = enum.auto()
    F32_F32_F32 = enum.auto()
    F64_F64_F64 = enum.auto()

    def __repr__(self) -> str:
        return f"DotAlgorithmPreset.{self.name}"

    def __str__(self) -> str:
        return self.name


class Algorithm(NamedTuple):
    """A canonical dot algorithm (Note [dot algorithms]): the preset, and the ``algorithm``
    param (StableHLO's attribute: lhs, rhs and accumulation types as short names, the two
    component counts, the number of operations, imprecise accumulation), None for
    DEFAULT."""
    preset: DotAlgorithmPreset
    param: tuple[Any, ...] | None


# The CPU presets: (operand types the algorithm keeps, else the first is used;
# accumulation type; the attribute). See Note [dot algorithms].
_F16, _BF16, _F32, _F64 = "float16", "bfloat16", "float32", "float64"
_CPU_PRESETS: dict[DotAlgorithmPreset, tuple[tuple[str, ...], str, tuple[Any, ...]]] = {
    DotAlgorithmPreset.F16_F16_F16: ((_F16,), _F16, ("f16", "f16", "f16", 1, 1, 1, False)),
    DotAlgorithmPreset.F32_F32_F32: ((_F32,), _F32, ("f32", "f32", "f32", 1, 1, 1, False)),
    DotAlgorithmPreset.F64_F64_F64: ((_F64,), _F64, ("f64", "f64", "f64", 1, 1, 1, False)),
    DotAlgorithmPreset.BF16_BF16_F32: ((_BF16, _F32), _F32,
                                       ("bf16", "bf16", "f32", 1, 1, 1, False)),
    DotAlgorithmPreset.BF16_BF16_F32_X3: ((_F32,), _F32, ("bf16", "bf16", "f32", 1, 1, 3, False)),
    DotAlgorithmPreset.BF16_BF16_F32_X6: ((_F32,), _F32, ("bf16", "bf16", "f32", 1, 1, 6, False)),
}


def preset_supported(preset: DotAlgorithmPreset) -> bool:
    """Whether a dot accepts ``precision=preset`` (the CPU presets and DEFAULT); a caller
    with a fallback precision, as nn.dot_product_attention, asks this first."""
    return preset is DotAlgorithmPreset.DEFAULT or preset in _CPU_PRESETS


def _algorithm(op: str, value: Any) -> Algorithm:
    if isinstance(value, DotAlgorithm):
        raise ValueError(f"{op}: the precision {value!r} is not supported by dot_general on "
                         "CPU (only these DotAlgorithmPreset members are: DEFAULT, "
                         f"{', '.join(p.name for p in _CPU_PRESETS)})")
    if value is DotAlgorithmPreset.DEFAULT:
        return Algorithm(value, None)
    if value not in _CPU_PRESETS:
        raise ValueError(f"{op}: the precision '{value}' is not supported by dot_general on "
                         f"CPU; use DEFAULT, {', '.join(p.name for p in _CPU_PRESETS)} or a "
                         "lax.Precision")
    return Algorithm(value, _CPU_PRESETS[value][2])


def dot_operands(op: str, x: Any, y: Any, algorithm: Algorithm) -> tuple[Any, Any, Any]:
    """Note [dot algorithms]: ``x`` and ``y`` (arrays of one dtype) rounded to the
    algorithm's operand type and widened to its accumulation type, and the dtype the
    result goes back to.

    Note [dot algorithms]
    ~~~~~~~~~~~~~~~~~~~~~
    JAX converts the operands of a dot with an algorithm to the types the preset supports
    (an operand keeps its type if the preset lists it) and accumulates in the preset's
    type, converting the result to the dot's own dtype. spmdc's dot_general takes operands
    of one type and returns that type, so the operands are rounded to the preset's operand
    type and then widened (exactly) to the accumulation type; the dot carries the
    StableHLO ``algorithm`` attribute as its ``algorithm`` param (precision [DEFAULT,
    DEFAULT], as JAX emits) and its result is converted back. The values are JAX's: XLA's
    CPU backend computes every CPU preset at the precision of the operands it is given."""
    out = x.dtype
    if algorithm.param is None:
        return x, y, out
    kept, accumulation, _ = _CPU_PRESETS[algorithm.preset]
    from . import dtypes
    if accumulation == _F64 and not dtypes.x64_enabled():
        raise ValueError(f"{op}: the precision F64_F64_F64 needs 64-bit types; enable them "
                         "with spmdc.config.update('jax_enable_x64', True)")
    operand = x.dtype.name if x.dtype.name in kept else kept[0]
    if x.dtype.kind not in "f" and x.dtype.name != "bfloat16":
        raise TypeError(f"{op}: the precision {algorithm.preset} takes floating operands, "
                        f"got {x.dtype}")
    x, y = x.astype(operand), y.astype(operand)
    if accumulation != operand and not (algorithm.preset is DotAlgorithmPreset.BF16_BF16_F32
                                        and out.name == _BF16):
        x, y = x.astype(accumulation), y.astype(accumulation)
    return x, y, out


PrecisionLike = (None | str | Precision | tuple[str, str] | tuple[Precision, Precision]
                 | DotAlgorithm | DotAlgorithmPreset)
"""What ``precision=`` accepts."""

DotDimensionNumbers = tuple[tuple[Sequence[int], Sequence[int]],
                            tuple[Sequence[int], Sequence[int]]]
"""``((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch))`` of lax.dot_general."""


def _one(op: str, value: Any) -> Precision:
    if isinstance(value, Precision):
        return value
    if isinstance(value, str):
        if value in _ALIASES:
            return _ALIASES[value]
    raise ValueError(f"{op}: unknown precision {value!r}; use None, a lax.Precision, one of "
                     f"the strings {', '.join(repr(k) for k in _ALIASES if k)}, or a pair "
                     "of those (one per operand)")


def default_precision() -> tuple[str, str] | None:
    return _default[0]


def set_default_precision(precision: Any) -> tuple[str, str] | None:
    """Set ``jax_default_matmul_precision``; returns the previous setting.

    Note [default precision]
    ~~~~~~~~~~~~~~~~~~~~~~~~
    The default applies when a dot or convolution is traced with ``precision=None`` (as in
    JAX), so it is baked into a compiled program. Every Python-side cache of compiled
    programs (jit, pmap, jit over sharded arrays) keys on ``default_precision()``, and while
    a default is set every top-level call takes the Python path (core/config.py's
    ``runtime_checks``), so the C++ dispatcher never launches a program traced under
    another setting."""
    previous = _default[0]
    _default[0] = canonicalize_precision("jax_default_matmul_precision", precision,
                                         use_default=False)
    return previous


def canonicalize_precision(op: str, precision: Any, use_default: bool = True
                           ) -> tuple[str, str] | Algorithm | None:
    """None, the pair of StableHLO precision names (one per operand) that ``precision``
    asks for, or an Algorithm; None means jax_default_matmul_precision (itself None unless
    set). ``op`` names the caller in errors."""
    if precision is None:
        return _default[0] if use_default else None
    if isinstance(precision, (DotAlgorithm, DotAlgorithmPreset)):
        return _algorithm(op, precision)
    if isinstance(precision, str) and precision in _ALGORITHM_NAMES:
        return _algorithm(op, DotAlgorithmPreset[precision])
    if isinstance(precision, (tuple, list)):
        if len(precision) != 2:
            raise ValueError(f"{op}: precision must be one value or a pair (one per "
                             f"operand), got {precision!r}")
        if any(p is None for p in precision):
            raise ValueError(f"{op}: a precision pair may not contain None, got "
                             f"{precision!r}")
        lhs, rhs = (_one(op, p) for p in precision)
    else:
        lhs = rhs = _one(op, precision)
    return (lhs.name, rhs.name)


def check_precision(op: str, precision: Any) -> tuple[str, str] | Algorithm | None:
    """``precision=`` of a dot or convolution (anything lax.Precision and JAX's
    PrecisionLike accept) as the primitive's ``precision`` param: None or a pair of
    StableHLO precision names. See Note [dot precision]."""
    return canonicalize_precision(op, precision)


def preferred_operands(op: str, x: Any, y: Any, preferred_element_type: Any) -> tuple[Any, Any]:
    """The operands of a product with ``preferred_element_type``: converted to it, so the
    product accumulates and returns in it; but floating operands with an integer type
    stay as they are (JAX computes in floating point and converts the result, which
    ``preferred_result`` does). An integer type narrower than integer operands is JAX's
    error."""
    x, y = asarray(x), asarray(y)
    if preferred_element_type is None:
        return _higher_precision_operands(op, x, y)
    want = dtypes.canonicalize(preferred_element_type)
    have = _higher_precision_dtype(op, x.dtype, y.dtype)
    if dtypes.is_inexact(have) and not dtypes.is_inexact(want):
        return _higher_precision_operands(op, x, y)
    if not dtypes.is_inexact(have) and not dtypes.is_inexact(want) \
            and want.itemsize < have.itemsize:
        raise TypeError(f"{op}: `preferred_element_type` must not be narrower than the "
                        f"original type, got preferred_element_type of {want.name} for "
                        f"operands of type {have.name}")
    return x.astype(want), y.astype(want)


def _precision_rank(dtype: Any) -> tuple[bool, int, int, int, bool]:
    """XLA's order of element types for a product of two (primitive_util's
    HigherPrecisionType, which JAX's dot_general follows): complex over real, then more
    exponent bits, more mantissa bits, more bits, signed over unsigned."""
    d = np.dtype(dtype)
    floating = dtypes.is_inexact(d)
    info = dtypes.finfo(d) if floating else None
    bits = info.bits if info is not None else 1 if d == np.bool_ else d.itemsize * 8
    return (d.kind == "c", info.maxexp if info is not None else -1,
            info.nmant if info is not None else -1, bits, dtypes.kind(d) != "u")


def _higher_precision_operands(op: str, x: Any, y: Any) -> tuple[Any, Any]:
    """Operands of two dtypes contract in the one of higher precision (``_precision_rank``;
    a float32 by bfloat16 product is float32), as in JAX; two different dtypes of equal
    rank are JAX's TypeError."""
    if x.dtype == y.dtype:
        return x, y
    want = _higher_precision_dtype(op, x.dtype, y.dtype)
    return x.astype(want), y.astype(want)


def _higher_precision_dtype(op: str, a: np.dtype, b: np.dtype) -> np.dtype:
    """The dtype a product of ``a`` by ``b`` computes in (``_precision_rank``; float8s of
    two formats meet in the wider-ranged one, as in JAX); equal ranks of two dtypes are
    JAX's TypeError."""
    if a == b:
        return a
    ra, rb = _precision_rank(a), _precision_rank(b)
    if ra == rb:
        raise TypeError(f"{op} argument type error: {a}, {b}; convert one operand to the "
                        "other's dtype")
    return a if ra > rb else b


def preferred_result(out: Any, preferred_element_type: Any) -> Any:
    """``out`` in ``preferred_element_type`` (see preferred_operands)."""
    if preferred_element_type is None:
        return out
    want = dtypes.canonicalize(preferred_element_type)
    return out if out.dtype == want else out.astype(want)
