"""spmdc.numpy: NumPy's API written with spmdc.lax (users import it as ``jnp``).

Every public name is listed below under the module that defines it (each imports only
the ones above it at module level; a few reach a higher one lazily, inside a function):
  core.py                dtype names and constants, asarray/array, result_type, broadcast_to,
                         size/shape/ndim (the base the rest stands on)
  comparisons.py         comparisons, logical and bitwise ufuncs, where, select, signbit,
                         iscomplex/isreal, bitwise_count, the array-API bitwise aliases
  ufuncs.py              elementwise math: arithmetic, transcendental, rounding, clip,
                         divisions and remainders, divmod, power, stop_gradient
  float_ufuncs.py        logaddexp, hypot, angle conversions, fmax/fmin, heaviside, sinc,
                         nan_to_num, modf, float_power, copysign, i0, ldexp
  complex_ops.py         real, imag, conj/conjugate, angle, iscomplexobj
  float_bits.py          frexp, nextafter, spacing
  shape_ops.py           reshape, transpose, concatenate/stack/split, pad, flip, tile, repeat,
                         broadcast_arrays, atleast_3d, rollaxis, resize, matrix_transpose ...
  index_plan.py          (no public name) an index as the plan of one gather or scatter
  indexing.py            take; advanced indexing and ``.at[]`` for the array methods
  rearranging.py         roll, rot90, fliplr, flipud
  array_creation.py      zeros/ones/full/empty (+ _like), arange, linspace, logspace, geomspace,
                         eye, identity, tri/tril/triu (+ indices), diag, diagonal, meshgrid ...
  joining.py             array_split, h/v/dsplit, dstack, column_stack, append, unstack,
                         block, concat
  reductions.py          sum, mean, max, argmax, var, cumsum, logsumexp, allclose, nan*,
                         cumulative_sum/prod, count_nonzero, array_equiv ...
  sorting.py             sort, argsort (over the sort primitive)
  searching.py           searchsorted, digitize, nonzero (size=), bincount, interp, isin
  statistics.py          average, ptp, cov, corrcoef, histogram*, (nan)quantile/percentile/median
  differences.py         diff, ediff1d, gradient, trapezoid
  tensor_contractions.py dot, matmul, vdot, inner, outer, tensordot, trace, kron, cross
  einsum.py              einsum, einsum_path, contraction_path, vecdot, matvec, vecmat
  convolve.py            convolve, correlate (one conv_general_dilated each)
  polynomial.py          polyval, polyadd ... polyint, poly, polydiv, polyfit, roots, vander
  window_functions.py    bartlett, blackman, hamming, hanning, kaiser
  dtype_functions.py     astype, copy, promote_types, can_cast, isdtype, isrealobj, isscalar ...
  editing.py             insert, delete, compress, extract, place, put, choose, mask_indices,
                         take_along_axis, put_along_axis, piecewise, trim_zeros
  partitioning.py        partition, argpartition, sort_complex
  bit_packing.py         packbits, unpackbits
  integer_divisors.py    gcd, lcm
  phase_unwrapping.py    unwrap
  setops.py              unique, union1d, intersect1d, setdiff1d ...
  index_tricks.py        mgrid, ogrid, r_, c_, s_, ix_, unravel_index, ravel_multi_index,
                         fill_diagonal
  io.py                  array_repr, array_str, printoptions, save, savez, load
  linalg.py, linalg_solve.py, fft.py   the linalg and fft namespaces
  vectorize.py           vectorize, apply_along_axis, apply_over_axes (by vmap)
  ufunc_api.py           ufunc, frompyfunc (methods by vectorize, fori_loop, scan)
array_methods.py gives Tracer and spmdc.Array their operators and methods; they call the
functions of this namespace, so they are installed here, last.
"""
import sys as _sys

from ..core.tracing import Tracer as _Tracer
from ..runtime.array import Array as _Array
from .array_creation import (  # noqa: F401
    arange,
    diag,
    diag_indices,
    diag_indices_from,
    diagflat,
    diagonal,  # noqa: F401
    empty,
    empty_like,
    eye,
    from_dlpack,
    frombuffer,
    fromfunction,
    fromstring,
    full,
    full_like,
    geomspace,  # noqa: F401
    identity,
    indices,  # noqa: F401
    iota,
    linspace,
    logspace,
    meshgrid,
    ones,
    ones_like,
    tri,
    tril,
    tril_indices,
    tril_indices_from,
    triu,
    triu_indices,
    triu_indices_from,
    zeros,
    zeros_like,
)
from .bit_packing import packbits, unpackbits  # noqa: F401
from .comparisons import (  # noqa: F401
    bitwise_and,
    bitwise_count,
    bitwise_invert,
    bitwise_left_shift,
    bitwise_not,
    bitwise_or,
    bitwise_right_shift,
    bitwise_xor,
    equal,
    greater,
    greater_equal,
    invert,
    iscomplex,
    isreal,
    left_shift,
    less,
    less_equal,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    not_equal,
    right_shift,
    select,
    signbit,
    where,
)
from .complex_ops import angle, conj, conjugate, imag, iscomplexobj, real  # noqa: F401,E402
from .convolve import convolve, correlate  # noqa: F401
from .core import (  # noqa: F401
    ComplexWarning,
    array,
    asarray,
    bfloat16,
    bool,
    bool_,
    broadcast_shapes,
    broadcast_to,
    cdouble,
    character,
    complex64,
    complex128,
    complex_,
    complexfloating,
    csingle,
    double,
    dtype,
    e,
    euler_gamma,
    finfo,
    flexible,
    float16,
    float32,
    float64,
    float_,
    floating,
    generic,
    iinfo,
    inexact,
    inf,
    int8,
    int16,
    int32,
    int64,
    int_,
    integer,
    issubdtype,
    nan,
    ndarray,
    ndim,
    newaxis,
    number,
    object_,
    operator_index,
    pi,
    result_type,
    shape,
    signedinteger,
    single,
    size,
    uint,
    uint8,
    uint16,
    uint32,
    uint64,
    unsignedinteger,
)
from .differences import (  # noqa: F401
    diff,
    ediff1d,
    gradient,  # noqa: F401
    trapezoid,
)
from .dtype_functions import (  # noqa: F401
    astype,
    can_cast,
    copy,
    isdtype,  # noqa: F401
    isrealobj,
    isscalar,
    iterable,  # noqa: F401
    promote_types,
)
from .editing import (  # noqa: F401
    choose,
    compress,
    delete,
    extract,
    insert,
    mask_indices,
    piecewise,
    place,
    put,
    put_along_axis,  # noqa: F401
    take_along_axis,  # noqa: F401
    trim_zeros,
)
from .einsum import (  # noqa: F401
    einsum,
    einsum_path,  # noqa: F401
    matvec,
    vecdot,
    vecmat,
)
from .float_bits import frexp, nextafter, spacing  # noqa: F401
from .float_ufuncs import (  # noqa: F401
    copysign,
    deg2rad,
    degrees,
    fabs,
    float_power,
    fmax,
    fmin,
    heaviside,
    hypot,
    i0,
    ldexp,
    logaddexp,
    logaddexp2,
    modf,
    nan_to_num,
    rad2deg,
    radians,
    sinc,
)
from .index_tricks import (  # noqa: F401
    c_,
    fill_diagonal,  # noqa: F401
    index_exp,
    ix_,
    mgrid,
    ogrid,
    r_,
    ravel_multi_index,
    s_,
    unravel_index,
)
from .indexing import (  # noqa: F401
    take,
)
from .integer_divisors import gcd, lcm  # noqa: F401
from .io import (  # noqa: F401
    array_repr,
    array_str,
    get_printoptions,
    load,
    printoptions,
    save,
    savez,
    set_printoptions,
)
from .joining import (  # noqa: F401
    append,
    array_split,
    block,
    column_stack,
    concat,
    dsplit,
    dstack,
    hsplit,
    unstack,
    vsplit,
)
from .partitioning import argpartition, partition, sort_complex  # noqa: F401
from .phase_unwrapping import unwrap  # noqa: F401
from .polynomial import (  # noqa: F401
    poly,
    polyadd,
    polyder,
    polydiv,
    polyfit,
    polyint,
    polymul,
    polysub,
    polyval,  # noqa: F401
    roots,
    vander,  # noqa: F401
)
from .rearranging import fliplr, flipud, roll, rot90  # noqa: F401
from .reductions import (  # noqa: F401
    all,
    allclose,
    amax,
    amin,
    any,
    argmax,
    argmin,
    array_equal,
    array_equiv,
    count_nonzero,
    cumprod,
    cumsum,
    cumulative_prod,
    cumulative_sum,
    isclose,
    logsumexp,
    max,
    mean,
    min,
    nanargmax,
    nanargmin,
    nancumprod,
    nancumsum,
    nanmax,
    nanmean,
    nanmin,
    nanprod,
    nanstd,
    nansum,
    nanvar,
    prod,
    std,
    sum,
    var,
)

# The narrow types (Note [narrow dtypes] in core/dtypes.py); See Note [jnp scalar types].
from .scalar_types import (  # noqa: F401
    float4_e2m1fn,
    float8_e3m4,
    float8_e4m3,
    float8_e4m3b11fnuz,
    float8_e4m3fn,
    float8_e4m3fnuz,
    float8_e5m2,
    float8_e5m2fnuz,
    float8_e8m0fnu,
    int2,
    int4,
    uint2,
    uint4,
)
from .searching import (  # noqa: F401
    argwhere,
    bincount,
    digitize,
    flatnonzero,
    interp,
    isin,
    lexsort,
    nonzero,
    searchsorted,
)
from .setops import (  # noqa: F401
    intersect1d,
    setdiff1d,
    setxor1d,
    union1d,
    unique,
    unique_all,
    unique_counts,
    unique_inverse,
    unique_values,
)
from .shape_ops import (  # noqa: F401
    atleast_1d,
    atleast_2d,
    atleast_3d,
    broadcast_arrays,
    concatenate,
    expand_dims,
    flip,
    hstack,
    matrix_transpose,
    moveaxis,
    pad,
    permute_dims,
    ravel,
    repeat,
    reshape,
    resize,
    rollaxis,
    split,
    squeeze,
    stack,
    swapaxes,
    tile,
    transpose,
    vstack,
)
from .sorting import (  # noqa: F401
    argsort,
    sort,
)
from .statistics import (  # noqa: F401
    average,
    corrcoef,
    cov,
    histogram,
    histogram2d,
    histogram_bin_edges,
    histogramdd,
    median,
    nanmedian,
    nanpercentile,
    nanquantile,
    percentile,
    ptp,
    quantile,
)
from .tensor_contractions import (  # noqa: F401
    cross,
    dot,
    inner,
    kron,
    matmul,
    outer,
    tensordot,
    trace,
    vdot,
)
from .ufunc_api import frompyfunc, ufunc  # noqa: F401
from .ufuncs import (  # noqa: F401
    abs,
    absolute,
    acos,
    acosh,
    add,
    arccos,
    arccosh,
    arcsin,
    arcsinh,
    arctan,
    arctan2,
    arctanh,
    around,
    asin,
    asinh,
    atan,
    atan2,
    atanh,
    cbrt,
    ceil,
    clip,
    cos,
    cosh,
    divide,
    divmod,
    exp,
    exp2,
    expm1,
    floor,
    floor_divide,
    fmod,
    isfinite,
    isinf,
    isnan,
    isneginf,
    isposinf,
    log,
    log1p,
    log2,
    log10,
    maximum,
    minimum,
    mod,
    multiply,
    negative,
    positive,
    pow,
    power,
    reciprocal,
    remainder,
    rint,
    round,
    sign,
    sin,
    sinh,
    sqrt,
    square,
    stop_gradient,  # noqa: F401,
    subtract,
    tan,
    tanh,
    true_divide,
    trunc,
)
from .vectorize import apply_along_axis, apply_over_axes, vectorize  # noqa: F401
from .window_functions import bartlett, blackman, hamming, hanning, kaiser  # noqa: F401

_namespace = _sys.modules[__name__]
from . import array_methods as _array_methods  # noqa: E402  (last: it calls the above)

_array_methods.install_methods(_Tracer, _namespace)
_array_methods.install_methods(_Array, _namespace)
for _cls in (_Tracer, _Array):            # complex parts (complex_ops.py)
    _cls.real = property(real)
    _cls.imag = property(imag)
    _cls.conj = _cls.conjugate = conj
del _cls

from . import fft, linalg  # noqa: E402,F401  (spmdc.numpy.fft and .linalg, submodules)
