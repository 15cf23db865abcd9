"""spmdc.lax: the one user-facing layer that binds primitives, with JAX's lax API.

Like JAX's lax, these functions do not promote dtypes: operands must already agree. The
modules, named by what they hold (JAX's names where JAX has the module):

- elementwise.py: the unary and binary elementwise operations (sin, add, eq, bitwise and
  shift operations, clz, population_count ...), select/select_n/clamp,
  convert_element_type, bitcast_convert_type, integer_pow, round, mulhi, dtype.
- shape.py: broadcast_in_dim, broadcast, reshape, transpose, expand_dims, squeeze,
  collapse, concatenate, stack, tile, pad, rev, iota, broadcasted_iota, full, empty.
- slicing.py: slice, slice_in_dim, index_in_dim, dynamic_slice*, dynamic_update_slice*,
  split, unstack, index_take, gather/scatter and their dimension numbers.
- reductions.py: reduce_sum/max/min/prod/and/or/xor, reduce, argmax/argmin, cumsum,
  cumprod, cummax, cummin.
- sorting.py: sort, sort_key_val, top_k, approx_max_k, approx_min_k.
- dot.py: dot_general, dot, batch_matmul; ragged.py: ragged_dot.
- convolution.py: conv_general_dilated and its forms, conv_general_dilated_local.
- windowed_reductions.py: reduce_window, reduce_precision.
- parallel.py: the collectives (psum, pmean, pmax, pmin, all_gather, psum_scatter,
  ppermute, pshuffle, all_to_all, axis_index, axis_size, pbroadcast, pswapaxes);
  grouped.py their ``axis_index_groups``.
- control_flow.py: cond, switch, while_loop, fori_loop, scan, map, platform_dependent,
  optimization_barrier; associative.py: associative_scan, cumlogsumexp; solves.py:
  custom_linear_solve, custom_root.
- special.py: the special functions (erf, lgamma ..., the incomplete gamma and beta
  functions); complex_parts.py: real, imag, conj, complex; fft.py: fft.
- linalg.py: the decompositions, as the submodule spmdc.lax.linalg.
"""
from ..core.precision import (
    DotAlgorithm,
    DotAlgorithmPreset,
    DotDimensionNumbers,
    Precision,
    PrecisionLike,
)
from ..transforms.partitioned import with_sharding_constraint
from . import convolution as _convolution
from . import dot as _dot
from . import elementwise as _elementwise
from . import linalg  # noqa: F401  (spmdc.lax.linalg, a submodule)
from . import parallel as _parallel
from . import reductions as _reductions
from . import shape as _shape
from . import slicing as _slicing
from . import sorting as _sorting
from . import special as _special
from .associative import associative_scan, cumlogsumexp
from .complex_parts import complex, conj, imag, real  # noqa: A004
from .control_flow import (
    cond,
    fori_loop,
    optimization_barrier,
    platform_dependent,
    scan,
    switch,
    while_loop,
)
from .control_flow import map_ as map  # noqa: A004  (lax.map)
from .convolution import *  # noqa: F403
from .dot import *  # noqa: F403
from .elementwise import *  # noqa: F403
from .fft import FftType, fft
from .parallel import *  # noqa: F403
from .ragged import ragged_dot
from .reductions import *  # noqa: F403
from .shape import *  # noqa: F403
from .slicing import *  # noqa: F403
from .solves import custom_linear_solve, custom_root
from .sorting import *  # noqa: F403
from .special import *  # noqa: F403
from .windowed_reductions import reduce_precision, reduce_window, reduce_window_shape_tuple

__all__ = [*_elementwise.__all__, *_shape.__all__, *_slicing.__all__, *_reductions.__all__,
           *_sorting.__all__, *_dot.__all__, *_convolution.__all__, *_parallel.__all__,
           *_special.__all__,
           "cond", "switch", "while_loop", "fori_loop", "scan", "map", "platform_dependent",
           "optimization_barrier",
           "associative_scan", "cumlogsumexp", "custom_linear_solve", "custom_root",
           "reduce_window", "reduce_precision", "reduce_window_shape_tuple",
           "real", "imag", "conj", "complex", "FftType", "fft", "ragged_dot",
           "with_sharding_constraint", "DotAlgorithm", "DotAlgorithmPreset",
           "DotDimensionNumbers", "Precision", "PrecisionLike"]
