"""Arguments: none accepted and ignored, none unchecked.

1. Every parameter of every public function of spmdc, spmdc.numpy and spmdc.lax, and of
   the Array / Tracer methods and ``x.at[...]``, is used by the function's body (an AST
   walk), so none is accepted and silently ignored. Parameters that are documented hints
   (with no effect on values) must still be read, to be checked.
2. Bad arguments to the transformations and constructors are clear errors that name the
   argument, and the library keeps working afterwards.
"""
import ast
import inspect
import textwrap

import numpy as np
import pytest

import spmdc
import spmdc.lax as lax
import spmdc.numpy as jnp
from spmdc.core.tracing import Tracer
from spmdc.numpy.array_methods import _IndexUpdateRef
from spmdc.runtime.array import Array

# Parameters that need not be read, with the reason.
UNUSED_OK = {
    ("Tracer", "__array__"): "always raises: a traced value has no NumPy value",
    ("lax", "RoundingMethod"): "an enum.IntEnum: the constructor is Python's Enum machinery",
    ("lax", "FftType"): "an enum.IntEnum: the constructor is Python's Enum machinery",
    ("jnp", "unique"): "sorted=False allows the values in any order, and sorted ones are one "
                       "(as in JAX, which also always sorts)",
    ("lax", "DotAlgorithmPreset"): "an enum.Enum: the constructor is Python's Enum machinery",
}


def _unused_parameters(fn):
    try:
        source = textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError):
        return []
    node = ast.parse(source).body[0]
    if not isinstance(node, ast.FunctionDef):
        return []                  # a lambda or an alias: nothing to walk
    used = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
    args = node.args
    params = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]
    params += [a.arg for a in (args.vararg, args.kwarg) if a is not None]
    return [p for p in params if p not in used and p not in ("self", "cls")]


def _public_functions():
    seen = set()
    for owner, namespace in [("spmdc", vars(spmdc)), ("jnp", vars(jnp)), ("lax", vars(lax)),
                             ("Array", vars(Array)), ("Tracer", vars(Tracer)),
                             ("at", vars(_IndexUpdateRef))]:
        for name, obj in sorted(namespace.items()):
            if name.startswith("_") and not name.startswith("__"):
                continue
            fn = obj.__init__ if isinstance(obj, type) else obj
            if not callable(fn) or not hasattr(fn, "__code__") or id(fn) in seen:
                continue
            seen.add(id(fn))
            yield owner, name, fn


def test_the_audit_sees_the_public_surface():
    names = {(owner, name) for owner, name, _ in _public_functions()}
    for expected in [("jnp", "sum"), ("jnp", "take"), ("lax", "dynamic_slice"),
                     ("spmdc", "jit"), ("spmdc", "pmap"), ("at", "set"), ("jnp", "sort")]:
        assert expected in names


def test_no_parameter_is_accepted_and_ignored():
    ignored = {}
    for owner, name, fn in _public_functions():
        unused = _unused_parameters(fn)
        if unused and (owner, name) not in UNUSED_OK:
            ignored[f"{owner}.{name}"] = unused
    assert not ignored, f"parameters accepted but never read: {ignored}"


# --- bad arguments: (call, exception type, message fragment) ------------------------------

def _vjp_with(ct):
    _, pull = spmdc.vjp(lambda x: x * 2, jnp.ones(3))
    return pull(ct)


def _ppermute(perm):
    return spmdc.pmap(lambda x: lax.ppermute(x, "i", perm=perm), "i")(jnp.ones(2))


BAD_ARGUMENTS = [
    (lambda: spmdc.jit(lambda x: x, static_argnums=5), ValueError, "static_argnums=5"),
    (lambda: spmdc.jit(lambda x: x, static_argnums=-2), ValueError, "static_argnums=-2"),
    (lambda: spmdc.jit(lambda x: x, static_argnums="a"), TypeError,
     "static_argnums must be an int"),
    (lambda: spmdc.jit(lambda x: x, static_argnums=0.5), TypeError,
     "static_argnums must be an int"),
    (lambda: spmdc.jit(lambda x: x, static_argnames="y"), ValueError, "static_argnames"),
    (lambda: spmdc.jit(lambda x: x, static_argnames=1), TypeError, "static_argnames"),
    (lambda: spmdc.jit(lambda x: x, donate_argnums="a"), TypeError, "donate_argnums"),
    (lambda: spmdc.pmap(lambda x: x, static_broadcasted_argnums=3)(jnp.ones(2)), ValueError,
     "static_broadcasted_argnums=3"),
    (lambda: spmdc.pmap(lambda x: x, static_broadcasted_argnums="a"), TypeError,
     "static_broadcasted_argnums must be an int"),
    (lambda: spmdc.grad(lambda x: x, argnums="x")(1.0), TypeError, "argnums must be an int"),
    (lambda: spmdc.grad(lambda x, y: x * y, argnums=(0, 0))(1.0, 2.0), ValueError,
     "names an argument twice"),
    (lambda: spmdc.grad(lambda x: x, argnums=0.5)(1.0), TypeError, "argnums must be an int"),
    (lambda: spmdc.pmap(lambda x: x, devices=[0, 1])(jnp.ones(2)), TypeError,
     "devices must be device objects"),
    (lambda: spmdc.pmap(lambda x: x, backend="tpu"), RuntimeError, "Unknown backend: 'tpu'"),
    (lambda: spmdc.devices("tpu"), RuntimeError, "Unknown backend: 'tpu'"),
    (lambda: spmdc.device_put(jnp.ones(2), "cpu"), ValueError, "device must be None, a device"),
    (lambda: spmdc.device_put(jnp.ones(2), 0), ValueError, "device must be None, a device"),
    (lambda: _ppermute([0, 1]), TypeError, "perm must be a sequence of (source, destination)"),
    (lambda: _ppermute([(0, 1, 2)]), TypeError, "pairs"),
    (lambda: _ppermute(5), TypeError, "pairs"),
    (lambda: spmdc.pmap(lambda x: x)(jnp.ones((0, 3))), ValueError, "mapped axis has size 0"),
    (lambda: jnp.ones((-1, 3)), TypeError, "negative dimension"),
    (lambda: jnp.zeros(-1), TypeError, "negative dimension"),
    (lambda: jnp.full((2, -1), 1.0), TypeError, "negative dimension"),
    (lambda: jnp.broadcast_to(jnp.ones(3), (-1, 3)), TypeError, "negative dimension"),
    (lambda: lax.broadcast_in_dim(jnp.ones(3), (-1, 3), (1,)), TypeError, "negative dimension"),
    (lambda: _vjp_with(jnp.ones(3, jnp.int32)), ValueError, "cotangent has dtype int32"),
    (lambda: _vjp_with(jnp.ones(3, jnp.float16)), ValueError, "cotangent has dtype float16"),
    (lambda: _vjp_with(jnp.ones(4)), ValueError, "cotangent has shape (4,)"),
    (lambda: jnp.reshape(jnp.ones(6), (2, 3), order="A"), TypeError, "order='A'"),
    (lambda: jnp.array([1.0], copy="yes"), TypeError, "copy must be"),
    (lambda: spmdc.vmap(lambda x: x, spmd_axis_name=3), TypeError, "spmd_axis_name"),
    (lambda: jnp.sum(jnp.ones(3), out=jnp.ones(())), NotImplementedError, "out="),
    (lambda: lax.dot_general(jnp.ones(2), jnp.ones(2), (((0,), (0,)), ((), ())),
                             precision="bogus"), ValueError, "precision"),
    (lambda: jnp.ones(5).at[jnp.array([1])].get(mode="wrap"), ValueError, "mode 'wrap'"),
    (lambda: jnp.ones(5).at[1].set(2.0, mode="bogus"), ValueError, "mode 'bogus'"),
    (lambda: jnp.ones(5).at[1].add(2.0, unique_indices="yes"), TypeError, "unique_indices"),
    (lambda: jnp.take(jnp.ones(5), jnp.array([0]), mode="bogus"), ValueError, "mode"),
    (lambda: jnp.take(jnp.ones(5), jnp.array([0]), out=jnp.ones(1)), NotImplementedError,
     "out="),
    (lambda: lax.dynamic_slice(jnp.ones(5), (-1,), (2,), allow_negative_indices=False),
     ValueError, "allow_negative_indices=False"),
    (lambda: lax.dynamic_slice(jnp.ones((2, 2)), (0,), (1, 1)), ValueError, "start indices"),
]


def _still_works():
    np.testing.assert_allclose(np.asarray(spmdc.jit(lambda x: x * 2)(jnp.arange(3.0))),
                               [0.0, 2.0, 4.0])
    np.testing.assert_allclose(np.asarray(spmdc.pmap(lambda x: x + 1)(jnp.arange(2.0))),
                               [1.0, 2.0])


@pytest.mark.devices(2)
@pytest.mark.parametrize("call,error,fragment", BAD_ARGUMENTS,
                         ids=[f"{e.__name__}:{f}" for _, e, f in BAD_ARGUMENTS])
def test_bad_argument_is_a_clear_error(call, error, fragment):
    with pytest.raises(error) as info:
        call()
    assert fragment in str(info.value)
    _still_works()


@pytest.mark.devices(2)
def test_good_arguments_still_work():
    f = spmdc.jit(lambda x, n: x * n, static_argnums=1)
    assert float(f(2.0, 3)) == 6.0
    assert float(spmdc.jit(lambda x, n: x * n, static_argnums=(1, 1))(2.0, 3)) == 6.0
    assert float(spmdc.jit(lambda *a: a[0], static_argnums=5)(2.0)) == 2.0   # *args: any
    assert float(spmdc.jit(lambda x, n: x * n, static_argnames="n")(2.0, n=4)) == 8.0
    g = spmdc.pmap(lambda x, n: x * n, static_broadcasted_argnums=1)(jnp.ones(2), 3)
    np.testing.assert_allclose(np.asarray(g), [3.0, 3.0])
    out = spmdc.pmap(lambda x: x, devices=spmdc.devices()[:2])(jnp.ones(2))
    assert out.shape == (2,)
    assert np.asarray(spmdc.device_put(jnp.ones(2), spmdc.devices()[1])).shape == (2,)
    assert spmdc.devices(spmdc.devices()[0].platform) == spmdc.devices()
    _, pull = spmdc.vjp(lambda x: x * 2, jnp.ones(3))
    np.testing.assert_allclose(np.asarray(pull(np.ones(3))[0]), [2.0, 2.0, 2.0])  # float64
    _, pull = spmdc.vjp(lambda x: x * 2, 1.0)
    assert float(pull(1.0)[0]) == 2.0                                            # weak
    assert jnp.zeros((0, 3)).shape == (0, 3)


@pytest.mark.devices(2)
def test_pmap_maps_the_last_axis_with_in_axes_minus_one():
    # A deliberate difference from JAX (which raises): negative in_axes count from the end
    # as in vmap; documented in pmap's docstring and the README.
    x = np.arange(6.0, dtype=np.float32).reshape(3, 2)
    out = spmdc.pmap(lambda v: v * 2, in_axes=-1)(x)
    np.testing.assert_allclose(np.asarray(out), (x * 2).T)
    assert "in_axes=-1" in spmdc.pmap.__doc__


@pytest.mark.parametrize("call, exc, fragment", [
    (lambda: jnp.astype(jnp.ones(2), np.int32, copy="yes"), TypeError, "copy"),
    (lambda: jnp.meshgrid(jnp.ones(2), copy=None), TypeError, "copy"),
    (lambda: jnp.nan_to_num(jnp.ones(2), copy=1), TypeError, "copy"),
    (lambda: jnp.isin(jnp.ones(2), jnp.ones(2), assume_unique="no"), TypeError,
     "assume_unique"),
    (lambda: jnp.quantile(jnp.ones(4), 0.5, overwrite_input=True), ValueError,
     "overwrite_input"),
    (lambda: jnp.polyval(jnp.ones(2), 1.0, unroll=0), TypeError, "unroll"),
    (lambda: jnp.histogram_bin_edges(jnp.ones(4), weights=jnp.ones(3)), ValueError,
     "weights"),
])
def test_options_that_change_nothing_are_still_checked(call, exc, fragment):
    with pytest.raises(exc, match=fragment):
        call()
