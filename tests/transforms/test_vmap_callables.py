"""vmap of a callable object whose ``__name__`` is not a string (an Equinox module
rebuilt inside scan has Equinox's ``Missing`` marker there): JAX copies what it can of
the wrapped object's attributes and maps it (spmdc/transforms/arguments.py,
``wraps_leniently``)."""
import numpy as np

import spmdc
import spmdc.numpy as jnp


class _Scaled:
    __name__ = 3                      # not a string: functools.wraps would raise
    __doc__ = "scales by two"

    def __call__(self, x):
        return 2.0 * x


def test_vmap_of_a_callable_with_a_non_string_name():
    f = spmdc.vmap(_Scaled())
    np.testing.assert_allclose(np.asarray(f(jnp.arange(3.0))), [0.0, 2.0, 4.0])
    assert f.__doc__ == "scales by two"
