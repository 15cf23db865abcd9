"""``spmdc.nn``: activation functions, softmax and friends, and ``initializers``
(JAX's ``jax.nn``)."""
from spmdc.nn.functions import (
    celu as celu,
)
from spmdc.nn.functions import (
    elu as elu,
)
from spmdc.nn.functions import (
    gelu as gelu,
)
from spmdc.nn.functions import (
    glu as glu,
)
from spmdc.nn.functions import (
    hard_sigmoid as hard_sigmoid,
)
from spmdc.nn.functions import (
    hard_silu as hard_silu,
)
from spmdc.nn.functions import (
    hard_swish as hard_swish,
)
from spmdc.nn.functions import (
    hard_tanh as hard_tanh,
)
from spmdc.nn.functions import (
    identity as identity,
)
from spmdc.nn.functions import (
    leaky_relu as leaky_relu,
)
from spmdc.nn.functions import (
    log1mexp as log1mexp,
)
from spmdc.nn.functions import (
    log_sigmoid as log_sigmoid,
)
from spmdc.nn.functions import (
    log_softmax as log_softmax,
)
from spmdc.nn.functions import (
    logmeanexp as logmeanexp,
)
from spmdc.nn.functions import (
    mish as mish,
)
from spmdc.nn.functions import (
    one_hot as one_hot,
)
from spmdc.nn.functions import (
    relu as relu,
)
from spmdc.nn.functions import (
    relu6 as relu6,
)
from spmdc.nn.functions import (
    selu as selu,
)
from spmdc.nn.functions import (
    sigmoid as sigmoid,
)
from spmdc.nn.functions import (
    silu as silu,
)
from spmdc.nn.functions import (
    soft_sign as soft_sign,
)
from spmdc.nn.functions import (
    softmax as softmax,
)
from spmdc.nn.functions import (
    softplus as softplus,
)
from spmdc.nn.functions import (
    sparse_plus as sparse_plus,
)
from spmdc.nn.functions import (
    sparse_sigmoid as sparse_sigmoid,
)
from spmdc.nn.functions import (
    squareplus as squareplus,
)
from spmdc.nn.functions import (
    standardize as standardize,
)
from spmdc.nn.functions import (
    swish as swish,
)
from spmdc.numpy import tanh as tanh
from spmdc.scipy._logsumexp import logsumexp as logsumexp
