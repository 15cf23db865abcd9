"""spmdc.lax: low-level operations, collectives and structured control flow.

core.py holds the operations and the collectives (psum, all_gather ...), which do not
promote dtypes: operands must already agree, as in JAX. control_flow.py holds cond,
switch, while_loop, fori_loop, scan and map, built on core.py and the transforms.
ops.py wraps more primitives (elementwise, cumulative, top_k, collapse ...);
associative.py holds associative_scan and cumlogsumexp; special.py the special functions
(erf, lgamma ..., the incomplete gamma and beta functions).
"""
from ..transforms.partitioned import with_sharding_constraint  # noqa: F401
from . import conv as _conv
from . import core as _core
from . import linalg  # noqa: E402,F401  (spmdc.lax.linalg, a submodule)
from .complex_parts import complex, conj, imag, real  # noqa: F401,A004
from .control_flow import cond, fori_loop, scan, switch, while_loop  # noqa: F401
from .control_flow import map_ as map  # noqa: F401,A004  (lax.map)
from .conv import *  # noqa: F401,F403
from .core import *  # noqa: F401,F403
from .windowed import reduce_precision, reduce_window, reduce_window_shape_tuple  # noqa: F401

__all__ = [*_core.__all__, *_conv.__all__, "cond", "switch", "while_loop", "fori_loop", "scan",
           "map", "reduce_window", "reduce_precision", "reduce_window_shape_tuple",
           "with_sharding_constraint", "real", "imag", "conj", "complex"]
from . import ops as _ops  # noqa: E402
from .ops import *  # noqa: E402,F401,F403

__all__ += _ops.__all__
from . import associative as _associative  # noqa: E402
from .associative import associative_scan, cumlogsumexp  # noqa: E402,F401

__all__ += _associative.__all__
from .fft import FftType, fft  # noqa: E402,F401

__all__ += ["FftType", "fft"]
from . import extra as _extra  # noqa: E402
from .extra import *  # noqa: E402,F401,F403

__all__ += _extra.__all__
from .solves import custom_linear_solve, custom_root  # noqa: E402,F401

__all__ += ["custom_linear_solve", "custom_root"]
from . import gather_scatter as _gather_scatter  # noqa: E402
from .gather_scatter import *  # noqa: E402,F401,F403

__all__ += _gather_scatter.__all__
from ..core.precision import (  # noqa: E402,F401
    DotAlgorithm,
    DotAlgorithmPreset,
    DotDimensionNumbers,
    Precision,
    PrecisionLike,
)

__all__ += ["DotAlgorithm", "DotAlgorithmPreset", "DotDimensionNumbers", "Precision",
            "PrecisionLike"]
from .ragged import ragged_dot  # noqa: E402,F401

__all__ += ["ragged_dot"]
from . import special as _special  # noqa: E402
from .special import *  # noqa: E402,F401,F403

__all__ += _special.__all__
