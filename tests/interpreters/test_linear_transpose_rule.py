"""linear_transpose transposes a library primitive by its transpose rule even where the
primitive has a JVP rule too, as JAX does; vjp and grad linearize it by its JVP rule
(Note [linearize and transpose] in spmdc/interpreters/ad.py). Equinox's vprims are such
primitives: their JVP rule is not the derivative their transpose rule implies."""
import numpy as np

import spmdc
import spmdc.numpy as jnp
from spmdc.core.abstract import ShapedArray
from spmdc.extend.core import Primitive
from spmdc.interpreters import ad, mlir

# pair(x) = [2 x, concatenate(x, flip(x))]
pair_p = Primitive("test_pair")
pair_p.multiple_results = True


def _pair(x):
    return [2 * x, jnp.concatenate([x, jnp.flip(x)])]


pair_p.def_impl(_pair)
pair_p.def_abstract_eval(lambda x: [x, ShapedArray((2 * x.shape[0],), x.dtype)])
mlir.register_lowering(pair_p, mlir.lower_fun(_pair, multiple_results=True))


def _pair_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return pair_p.bind(x), [jnp.flip(t), jnp.concatenate([x, x + 1])]


def _pair_transpose(cts, x):
    assert ad.is_undefined_primal(x)
    ct1, ct2 = cts
    return [ct1 + ct2[:2]]


ad.primitive_jvps[pair_p] = _pair_jvp
ad.primitive_transposes[pair_p] = _pair_transpose

Y = np.array([1.0, 3.5], np.float32)
CTS = [np.array([2.0, 7.0], np.float32), np.array([1.0, 3.5, 3.5, 1.0], np.float32)]


def test_linear_transpose_calls_the_transpose_rule():
    # JAX 0.10.2: (Array([ 3. , 10.5]),) -- ct1 + ct2[:2]
    (got,) = spmdc.linear_transpose(pair_p.bind, Y)(CTS)
    np.testing.assert_allclose(np.asarray(got), [3.0, 10.5])


def test_vjp_still_linearizes_by_the_jvp_rule():
    # JAX 0.10.2: (Array([7., 2.]),) -- flip(ct1); the second tangent holds no t
    _, vjp_fn = spmdc.vjp(pair_p.bind, Y)
    (got,) = vjp_fn(CTS)
    np.testing.assert_allclose(np.asarray(got), [7.0, 2.0])
