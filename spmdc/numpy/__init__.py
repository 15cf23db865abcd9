"""spmdc.numpy: NumPy's API over spmdc primitives (users import it as ``jnp``).

Every public name is listed below under the module that defines it:
  core.py         dtypes and constants, conversion (asarray), elementwise math,
                  comparisons, where/clip, array creation (zeros, arange, eye ...)
  shape_ops.py    reshape, transpose, concatenate/stack, split, pad, flip, tile ...
  reductions.py   sum, mean, max, argmax, var, cumsum, logsumexp, allclose ...
  products.py     dot, matmul, vdot, inner, outer, tensordot, trace
  convolve.py     convolve, correlate (one conv_general_dilated each)
  einsum_impl.py  einsum
  indexing.py     take; advanced indexing and ``.at[]`` for the array methods
  sorting.py      sort, argsort (over the sort primitive)
  complex_ops.py  real, imag, conj/conjugate, angle, iscomplexobj
  arrays_extra.py meshgrid, tril/triu, diag, diagonal, roll, rot90, kron, diff, trapezoid ...
Each imports only from the ones above it (core.py reaches shape_ops.py once, lazily, for a
list of arrays). array_methods.py gives Tracer and spmdc.Array their operators and
methods; they call the functions of this namespace, so they are installed here, last.
"""
import sys as _sys

from ..core.tracing import Tracer as _Tracer
from ..runtime.array import Array as _Array
from .arrays_extra import (  # noqa: F401
    concat,
    diag,
    diag_indices,
    diag_indices_from,
    diagonal,
    diff,
    ediff1d,
    fliplr,
    flipud,
    kron,
    matrix_transpose,
    meshgrid,
    permute_dims,
    polyval,
    roll,
    rot90,
    trapezoid,
    tri,
    tril,
    tril_indices,
    tril_indices_from,
    triu,
    triu_indices,
    triu_indices_from,
)
from .complex_ops import angle, conj, conjugate, imag, iscomplexobj, real  # noqa: F401,E402
from .convolve import convolve, correlate  # noqa: F401
from .core import (  # noqa: F401
    abs,
    absolute,
    add,
    arange,
    arccos,
    arccosh,
    arcsin,
    arcsinh,
    arctan,
    arctan2,
    arctanh,
    around,
    array,
    asarray,
    bfloat16,
    bitwise_and,
    bitwise_not,
    bitwise_or,
    bitwise_xor,
    bool_,
    broadcast_shapes,
    broadcast_to,
    cbrt,
    ceil,
    clip,
    complex64,
    complex128,
    complexfloating,
    cos,
    cosh,
    divide,
    dtype,
    e,
    empty,
    empty_like,
    equal,
    euler_gamma,
    exp,
    exp2,
    expm1,
    eye,
    finfo,
    float16,
    float32,
    float64,
    float_,
    floating,
    floor,
    floor_divide,
    fmod,
    full,
    full_like,
    greater,
    greater_equal,
    identity,
    iinfo,
    inexact,
    inf,
    int8,
    int16,
    int32,
    int64,
    int_,
    integer,
    invert,
    iota,
    isfinite,
    isinf,
    isnan,
    issubdtype,
    left_shift,
    less,
    less_equal,
    linspace,
    log,
    log1p,
    log2,
    log10,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    maximum,
    minimum,
    mod,
    multiply,
    nan,
    ndarray,
    ndim,
    negative,
    newaxis,
    not_equal,
    number,
    ones,
    ones_like,
    operator_index,
    pi,
    pow,
    power,
    reciprocal,
    remainder,
    result_type,
    right_shift,
    rint,
    round,
    shape,
    sign,
    signedinteger,
    sin,
    sinh,
    size,
    sqrt,
    square,
    subtract,
    tan,
    tanh,
    true_divide,
    trunc,
    uint8,
    uint16,
    uint32,
    uint64,
    unsignedinteger,
    where,
    zeros,
    zeros_like,
)
from .einsum_impl import (  # noqa: F401
    einsum,
)
from .indexing import (  # noqa: F401
    take,
)
from .products import (  # noqa: F401
    dot,
    inner,
    matmul,
    outer,
    tensordot,
    trace,
    vdot,
)
from .reductions import (  # noqa: F401
    all,
    allclose,
    amax,
    amin,
    any,
    argmax,
    argmin,
    array_equal,
    cumprod,
    cumsum,
    isclose,
    logsumexp,
    max,
    mean,
    min,
    prod,
    std,
    stop_gradient,
    sum,
    var,
)
from .shape_ops import (  # noqa: F401
    atleast_1d,
    atleast_2d,
    concatenate,
    expand_dims,
    flip,
    hstack,
    moveaxis,
    pad,
    ravel,
    repeat,
    reshape,
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

_namespace = _sys.modules[__name__]
from . import array_methods as _array_methods  # noqa: E402  (last: it calls the above)

_array_methods.install_methods(_Tracer, _namespace)
_array_methods.install_methods(_Array, _namespace)
for _cls in (_Tracer, _Array):            # complex parts (complex_ops.py)
    _cls.real = property(real)
    _cls.imag = property(imag)
    _cls.conj = _cls.conjugate = conj
del _cls

from . import linalg  # noqa: E402,F401  (spmdc.numpy.linalg, a submodule)
