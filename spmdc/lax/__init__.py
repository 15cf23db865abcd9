"""spmdc.lax: the one user-facing layer that binds primitives, with JAX's lax API.

Like JAX's lax, these functions do not promote dtypes: operands must already agree. The
modules, named by what they hold (JAX's names where JAX has the module):

- elementwise.py: the unary and binary elementwise operations (sin, add, eq, bitwise and
  shift operations, clz, population_count ...), select/select_n/clamp,
  convert_element_type, bitcast_convert_type, integer_pow, round, mulhi, dtype.
- shape.py: broadcast_in_dim, broadcast, reshape, transpose, expand_dims, squeeze,
  collapse, concatenate, stack, tile, pad, rev, iota, broadcasted_iota, full, empty.
- slicing.py: slice, slice_in_dim, index_in_dim, dynamic_slice*, dynamic_update_slice*,
  split, unstack, index_take, gather/scatter and their dimension numbers;
  scatter_apply.py: scatter_apply.
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
from .scaled_dot import scaled_dot
from .scatter_apply import scatter_apply
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
           "optimization_barrier", "scatter_apply", "scaled_dot",
           "associative_scan", "cumlogsumexp", "custom_linear_solve", "custom_root",
           "reduce_window", "reduce_precision", "reduce_window_shape_tuple",
           "real", "imag", "conj", "complex", "FftType", "fft", "ragged_dot",
           "with_sharding_constraint", "DotAlgorithm", "DotAlgorithmPreset",
           "DotDimensionNumbers", "Precision", "PrecisionLike"]

# --- JAX's primitive objects ------------------------------------------------------------
# ``lax.sin_p`` is spmdc's sin primitive itself, so ``eqn.primitive is lax.sin_p`` holds
# for the equations of a jaxpr (make_jaxpr); where JAX names spmdc's primitive otherwise,
# the object is a JaxPrimitive standing for it under JAX's name (Note [jaxpr names and
# params] in transforms/jaxpr_params.py). JAX's *_p names spmdc has no primitive for are
# listed with their reasons in tests/e2e/test_coverage.py.
from ..compiler.primitives.collectives import (  # noqa: E402
    all_gather_p,
    all_to_all_p,
    axis_index_p,
    pmax_p,
    pmin_p,
    ppermute_p,
    psum_p,
)
from ..compiler.primitives.complex_parts import abs_p, complex_p, conj_p, imag_p, real_p  # noqa: E402
from ..compiler.primitives.control_flow import cond_p, while_p  # noqa: E402
from ..compiler.primitives.conv import conv_general_dilated_p  # noqa: E402
from ..compiler.primitives.cumulative import cummax_p, cummin_p, cumprod_p, cumsum_p  # noqa: E402
from ..compiler.primitives.dynamic_slicing import dynamic_slice_p, dynamic_update_slice_p  # noqa: E402
from ..compiler.primitives.elementwise import (  # noqa: E402
    acos_p,
    acosh_p,
    add_p,
    asin_p,
    asinh_p,
    atan2_p,
    atan_p,
    atanh_p,
    cbrt_p,
    ceil_p,
    cos_p,
    cosh_p,
    digamma_p,
    div_p,
    erf_inv_p,
    erf_p,
    exp2_p,
    exp_p,
    expm1_p,
    floor_p,
    integer_pow_p,
    is_finite_p,
    lgamma_p,
    log1p_p,
    log_p,
    logistic_p,
    max_p,
    min_p,
    mul_p,
    neg_p,
    nextafter_p,
    polygamma_p,
    pow_p,
    rem_p,
    round_p,
    rsqrt_p,
    sign_p,
    sin_p,
    sinh_p,
    sqrt_p,
    stop_gradient_p,
    sub_p,
    tan_p,
    tanh_p,
)
from ..compiler.primitives.fft import fft_p  # noqa: E402
from ..compiler.primitives.indexing import gather_p, scatter_p  # noqa: E402
from ..compiler.primitives.logic import (  # noqa: E402
    and_p,
    clamp_p,
    eq_p,
    ge_p,
    gt_p,
    le_p,
    lt_p,
    ne_p,
    not_p,
    or_p,
    population_count_p,
    shift_left_p,
    shift_right_arithmetic_p,
    shift_right_logical_p,
    xor_p,
)
from ..compiler.primitives.misc import clz_p, zeta_p  # noqa: E402
from ..compiler.primitives.reductions import (  # noqa: E402
    argmax_p,
    argmin_p,
    dot_general_p,
    reduce_and_p,
    reduce_max_p,
    reduce_min_p,
    reduce_or_p,
    reduce_prod_p,
    reduce_sum_p,
)
from ..compiler.primitives.remat import optimization_barrier_p  # noqa: E402
from ..compiler.primitives.scan import scan_p  # noqa: E402
from ..compiler.primitives.sharding import sharding_constraint_p  # noqa: E402
from ..compiler.primitives.sorting import sort_p  # noqa: E402
from ..compiler.primitives.special import bessel_i0e_p, bessel_i1e_p, erfc_p  # noqa: E402
from ..compiler.primitives.structural import (  # noqa: E402
    broadcast_in_dim_p,
    concatenate_p,
    iota_p,
    pad_p,
    reshape_p,
    rev_p,
    slice_p,
    squeeze_p,
    transpose_p,
)
from ..compiler.primitives.windowed import (  # noqa: E402
    reduce_precision_p,
    reduce_window_max_p,
    reduce_window_min_p,
    reduce_window_p,
    reduce_window_sum_p,
)
from ..compiler.primitives.windowed_select import select_and_gather_add_p, select_and_scatter_add_p  # noqa: E402
from ..transforms.jaxpr_params import (  # noqa: E402
    bitcast_convert_type_p,
    convert_element_type_p,
    select_n_p,
    square_p,
)

__all__ += [
    "abs_p", "acos_p", "acosh_p", "add_p", "all_gather_p", "all_to_all_p", "and_p", "argmax_p",
    "argmin_p", "asin_p", "asinh_p", "atan2_p", "atan_p", "atanh_p", "axis_index_p",
    "bessel_i0e_p", "bessel_i1e_p", "bitcast_convert_type_p", "broadcast_in_dim_p", "cbrt_p",
    "ceil_p", "clamp_p", "clz_p", "complex_p", "concatenate_p", "cond_p", "conj_p",
    "conv_general_dilated_p", "convert_element_type_p", "cos_p", "cosh_p", "cummax_p",
    "cummin_p", "cumprod_p", "cumsum_p", "digamma_p", "div_p", "dot_general_p",
    "dynamic_slice_p", "dynamic_update_slice_p", "eq_p", "erf_inv_p", "erf_p", "erfc_p",
    "exp2_p", "exp_p", "expm1_p", "fft_p", "floor_p", "gather_p", "ge_p", "gt_p", "imag_p",
    "integer_pow_p", "iota_p", "is_finite_p", "le_p", "lgamma_p", "log1p_p", "log_p",
    "logistic_p", "lt_p", "max_p", "min_p", "mul_p", "ne_p", "neg_p", "nextafter_p", "not_p",
    "optimization_barrier_p", "or_p", "pad_p", "pmax_p", "pmin_p", "polygamma_p",
    "population_count_p", "pow_p", "ppermute_p", "psum_p", "real_p", "reduce_and_p",
    "reduce_max_p", "reduce_min_p", "reduce_or_p", "reduce_precision_p", "reduce_prod_p",
    "reduce_sum_p", "reduce_window_max_p", "reduce_window_min_p", "reduce_window_p",
    "reduce_window_sum_p", "rem_p", "reshape_p", "rev_p", "round_p", "rsqrt_p", "scan_p",
    "scatter_p", "select_and_gather_add_p", "select_and_scatter_add_p", "select_n_p",
    "sharding_constraint_p", "shift_left_p", "shift_right_arithmetic_p",
    "shift_right_logical_p", "sign_p", "sin_p", "sinh_p", "slice_p", "sort_p", "sqrt_p",
    "square_p", "squeeze_p", "stop_gradient_p", "sub_p", "tan_p", "tanh_p", "transpose_p",
    "while_p", "xor_p", "zeta_p"]
