"""The error-message table: each bad input (docs/ARCHITECTURE.md's Errors, issue 12 item 8)
with the exception type and a fragment of the message it must give, and, after it, a normal
call that must still work (the library keeps working after any of these). Then the classes
of spmdc/errors.py: JAX's (jax.errors), raised where JAX raises them, with JAX's hierarchy,
and spmdc's own, each defined there alone and of the one type JAX raises."""
import os

import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc import lax

pytestmark = pytest.mark.devices(8)      # every case ends with a normal pmap over 8 devices

X = np.arange(24, dtype=np.float32).reshape(8, 3)


def _escaped_tracer():
    box = []
    spmdc.jit(lambda a: box.append(a) or a)(X)
    return box[0] + 1


def _cycle():
    cycle = []
    cycle.append(cycle)
    return cycle


def _deep(depth):
    tree = [1.0]
    for _ in range(depth):
        tree = [tree]
    return tree


def _two_meshes_of_the_same_shape():
    from spmdc.sharding import Mesh, NamedSharding, PartitionSpec
    devices = spmdc.devices()
    a, b = (spmdc.device_put(np.ones(8, np.float32),
                             NamedSharding(Mesh(np.array(d), ("x",)), PartitionSpec("x")))
            for d in (devices[:4], devices[4:8]))
    return spmdc.jit(lambda a, b: a + b)(a, {"w": b})


class _Opaque:
    pass


def _generator_function(x):
    yield x


def _read_env(name, value, read):
    from spmdc import env
    old = os.environ.get(name)
    os.environ[name] = value
    try:
        return getattr(env, read)(name, *(() if read == "flag" else (8,)))
    finally:
        if old is None:
            del os.environ[name]
        else:
            os.environ[name] = old


# (name, bad call, exception type, fragments of the message that must all appear)
TABLE = [
    ("pmap over more devices than exist",
     lambda: spmdc.pmap(lambda a: a)(np.ones((9, 3), np.float32)),
     ValueError, ["mapped axis has size 9", "only 8 devices", "SPMDC_CPU_DEVICES"]),
    ("vmap with inconsistent mapped sizes names the argument's path",
     lambda: spmdc.vmap(lambda a, b: a + b["w"])(np.ones((2, 3)), {"w": np.ones((3, 3))}),
     ValueError, ["inconsistent sizes", "args[0] has size 2", "args[1]['w'] has size 3"]),
    ("an unbound axis name lists the bound ones",
     lambda: spmdc.pmap(lambda a: lax.psum(a, "j"), "i")(X),
     NameError, ["psum", "unbound axis name 'j'", "'i'"]),
    ("a misspelled axis name under vmap",
     lambda: spmdc.vmap(lambda a: lax.pmean(a, "bach"), axis_name="batch")(X),
     NameError, ["pmean", "'bach'", "'batch'"]),
    ("in_axes that is not a prefix of the arguments",
     lambda: spmdc.vmap(lambda a: a, in_axes=(0, 0))(X),
     ValueError, ["in_axes", "2 entries", "1 positional"]),
    ("a shape mismatch names the op and the user's line",
     lambda: spmdc.jit(lambda a, b: a + b)(X, np.ones((4,), np.float32)),
     ValueError, ["add", "(8, 3), (4,)", "test_errors.py"]),     # JAX's class: ranks differ
    ("a matmul mismatch",
     lambda: spmdc.jit(lambda a, b: a @ b)(X, np.ones((4,), np.float32)),
     TypeError, ["matmul", "3 != 4", "test_errors.py"]),
    ("Python control flow on a traced value",
     lambda: spmdc.jit(lambda a: a if a.sum() > 0 else -a)(X),
     spmdc.ConcretizationTypeError, ["traced", "where"]),
    ("grad of a non-scalar function",
     lambda: spmdc.grad(lambda a: a * 2)(X),
     TypeError, ["scalar", "(8, 3)"]),
    ("grad with respect to an integer input",
     lambda: spmdc.grad(lambda a: a.sum())(np.ones(3, np.int32)),
     TypeError, ["floating point", "int32", "argnums"]),
    ("grad of an integer-valued function",
     lambda: spmdc.grad(lambda a: a.astype(jnp.int32).sum())(X),
     TypeError, ["real-valued", "int32"]),
    ("ppermute sending to one device twice",
     lambda: spmdc.pmap(lambda a: lax.ppermute(a, "i", [(0, 1), (1, 1)]), "i")(X),
     ValueError, ["ppermute", "destination 1 more than once"]),
    ("ppermute to a device outside the axis",
     lambda: spmdc.pmap(lambda a: lax.ppermute(a, "i", [(0, 9)]), "i")(X),
     ValueError, ["ppermute", "destination index 9", "0..7"]),
    ("a tracer that escapes its transformation",
     _escaped_tracer,
     spmdc.UnexpectedTracerError, ["escaped", "Return values"]),
    ("pmap out_axes=None on a value that differs between devices",
     lambda: spmdc.pmap(lambda a: a, out_axes=None)(X),
     ValueError, ["out_axes=None", "differ between devices", "pmean"]),
    ("a pytree that contains itself (issue 12 item 11)",
     lambda: spmdc.jit(lambda a: a)(_cycle()),
     ValueError, ["contains itself", "args[0]", "remove the reference cycle"]),
    ("a pytree nested 50,000 deep: too deep, at once (issue 30)",
     lambda: spmdc.jit(lambda a: a)(_deep(50_000)),
     RecursionError, ["the pytree args nests containers 50001 levels deep",
                      "test_errors.py", "too deep to flatten", "shallower"]),
    # issue 30: messages that named neither the function, the line nor what differs
    ("debug.print with more placeholders than values",
     lambda: spmdc.debug.print("{} {}", X),
     IndexError, ["spmdc.debug.print", "'{} {}'", "needs 2 positional values, but 1 was",
                  "test_errors.py"]),
    ("debug.print naming a keyword that was not given",
     lambda: spmdc.debug.print("{y}", x=X),
     KeyError, ["spmdc.debug.print", "'{y}'", "no keyword argument y= was given",
                "given: x=", "test_errors.py"]),
    ("debug.print with a format string that is not one",
     lambda: spmdc.debug.print("{x", x=X),
     ValueError, ["spmdc.debug.print", "'{x'", "not a valid format", "test_errors.py"]),
    ("jit over two meshes that differ only in their devices",
     _two_meshes_of_the_same_shape,
     ValueError, ["different meshes", "argument args[0] (float32[8])",
                  "device ids [0, 1, 2, 3]", "argument args[1]['w'] (float32[8])",
                  "device ids [4, 5, 6, 7]", "test_errors.py"]),
    ("jit of a str argument",
     lambda: spmdc.jit(lambda a: a)("abc"),
     TypeError, ["jit(<lambda>)", "argument args[0] is a value of type str", "'abc'",
                 "test_errors.py", "static_argnums"]),
    ("jit of an object argument",
     lambda: spmdc.jit(lambda a, b: a)(X, _Opaque()),
     TypeError, ["argument args[1] is a value of type _Opaque", "test_errors.py"]),
    ("jit of a set argument",
     lambda: spmdc.jit(lambda a: a)({1, 2}),
     TypeError, ["argument args[0] is a value of type set", "{1, 2}"]),
    ("jit of a generator argument, deep in a pytree",
     lambda: spmdc.jit(lambda a: a)({"w": [X, (i for i in range(3))]}),
     TypeError, ["argument args[0]['w'][1] is a value of type generator"]),
    ("jit of a keyword argument that is not an array",
     lambda: spmdc.jit(lambda a, *, scale: a * scale)(X, scale="2"),
     TypeError, ["argument kwargs['scale'] is a value of type str"]),
    ("jit.lower of a str argument",
     lambda: spmdc.jit(lambda a: a).lower("abc"),
     TypeError, ["argument args[0] is a value of type str"]),
    ("a jitted function that returns a str",
     lambda: spmdc.jit(lambda a: "abc")(X),
     TypeError, ["function <lambda> at", "test_errors.py",
                 "traced for jit returned a value of type str", "'abc'"]),
    ("a jitted function that returns an object",
     lambda: spmdc.jit(lambda a: _Opaque())(X),
     TypeError, ["traced for jit returned a value of type _Opaque"]),
    ("a jitted function that returns a function",
     lambda: spmdc.jit(lambda a: (a, lambda: 1))(X),
     TypeError, ["returned, at output component [1], a value of type function"]),
    ("jit of a generator function",
     lambda: spmdc.jit(_generator_function),
     TypeError, ["Expected a function, got a generator function", "_generator_function",
                 "test_errors.py"]),
    # eager transformations (Note [arguments that are not arrays])
    ("vmap of a str argument",
     lambda: spmdc.vmap(lambda a: a)("abc"),
     TypeError, ["vmap(<lambda>): argument args[0] is a value of type str", "'abc'",
                 "test_errors.py"]),
    ("vmap of a generator argument, deep in a pytree",
     lambda: spmdc.vmap(lambda a: a)({"w": [X, (i for i in range(3))]}),
     TypeError, ["vmap(<lambda>): argument args[0]['w'][1] is a value of type generator"]),
    ("a vmapped function that returns a function",
     lambda: spmdc.vmap(lambda a: (a, lambda: 1))(X),
     TypeError, ["function <lambda> at", "test_errors.py", "traced for vmap returned, at "
                 "output component [1], a value of type function"]),
    ("grad of an object argument",
     lambda: spmdc.grad(lambda a: a)(_Opaque()),
     TypeError, ["grad(<lambda>): argument args[0] is a value of type _Opaque",
                 "test_errors.py"]),
    ("value_and_grad of a set argument",
     lambda: spmdc.value_and_grad(lambda a, b: a, argnums=(0, 1))(1.0, {1, 2}),
     TypeError, ["value_and_grad(<lambda>): argument args[1] is a value of type set"]),
    ("a differentiated function that returns a str",
     lambda: spmdc.grad(lambda a: "abc")(1.0),
     TypeError, ["function <lambda> at", "traced for grad returned a value of type str"]),
    ("jvp of a set primal",
     lambda: spmdc.jvp(lambda a: a, ({1, 2},), (1.0,)),
     TypeError, ["jvp(<lambda>): argument primals[0] is a value of type set"]),
    ("jvp of a function as tangent",
     lambda: spmdc.jvp(lambda a: a, (1.0,), (lambda: 1,)),
     TypeError, ["jvp(<lambda>): argument tangents[0] is a value of type function"]),
    ("a jvp function that returns an object",
     lambda: spmdc.jvp(lambda a: _Opaque(), (1.0,), (1.0,)),
     TypeError, ["traced for jvp returned a value of type _Opaque"]),
    ("vjp of a generator primal",
     lambda: spmdc.vjp(lambda a: a, (i for i in range(3))),
     TypeError, ["vjp(<lambda>): argument primals[0] is a value of type generator"]),
    ("a vjp function that returns a str",
     lambda: spmdc.vjp(lambda a: "abc", 1.0),
     TypeError, ["traced for vjp returned a value of type str"]),
    ("pmap of a str argument",
     lambda: spmdc.pmap(lambda a: a)("abc"),
     TypeError, ["pmap(<lambda>): argument args[0] is a value of type str"]),
    ("pmap of an unmapped object argument",
     lambda: spmdc.pmap(lambda a, b: a, in_axes=(0, None))(X, _Opaque()),
     TypeError, ["pmap(<lambda>): argument args[1] is a value of type _Opaque"]),
    ("a pmapped function that returns a set",
     lambda: spmdc.pmap(lambda a: {1, 2})(X),
     TypeError, ["traced for pmap returned a value of type set"]),
    ("a shape whose size overflows int64 (issue 12 item 11)",
     lambda: jnp.zeros((2**40, 2**40)),
     TypeError, ["1099511627776", "more than any array can hold"]),
    ("a boolean SPMDC_* variable that is not a boolean (issue 12 item 11)",
     lambda: _read_env("SPMDC_ENABLE_X64", "maybe", "flag"),
     ValueError, ["SPMDC_ENABLE_X64='maybe'", "1/true/yes/on", "0/false/no/off"]),
    ("a device count that is not a positive integer",
     lambda: _read_env("SPMDC_CPU_DEVICES", "eight", "positive_int"),
     ValueError, ["SPMDC_CPU_DEVICES='eight'", "positive integer"]),
    # issue 12 item 8: arguments that were not checked
    ("jit static_argnums beyond the arguments",
     lambda: spmdc.jit(lambda a: a, static_argnums=5)(X),
     ValueError, ["static_argnums=5", "out of range", "1 positional argument", "test_errors.py"]),
    ("pmap static_broadcasted_argnums beyond the arguments",
     lambda: spmdc.pmap(lambda a: a, static_broadcasted_argnums=3)(X),
     ValueError, ["static_broadcasted_argnums=3", "1 positional argument"]),
    ("static_argnums that is not an int",
     lambda: spmdc.jit(lambda a: a, static_argnums="a")(X),
     TypeError, ["static_argnums must be an int or a sequence of ints", "'a'"]),
    ("static_argnums that is a float",
     lambda: spmdc.jit(lambda a: a, static_argnums=0.5)(X),
     TypeError, ["static_argnums must be an int or a sequence of ints", "0.5"]),
    ("grad argnums that is not an int",
     lambda: spmdc.grad(lambda a: a.sum(), argnums="x")(X),
     TypeError, ["argnums must be an int or a sequence of ints", "'x'"]),
    ("grad argnums naming an argument twice",
     lambda: spmdc.grad(lambda a: a.sum(), argnums=(0, 0))(X),
     ValueError, ["argnums=(0, 0)", "twice"]),
    ("pmap devices that are not devices",
     lambda: spmdc.pmap(lambda a: a, devices=[0, 1])(X[:2]),
     TypeError, ["devices must be device objects", "spmdc.devices()", "int"]),
    ("device_put to a string",
     lambda: spmdc.device_put(X, "cpu"),
     ValueError, ["device_put", "spmdc.devices()", "'cpu'"]),
    ("ppermute with a perm that is not pairs",
     lambda: spmdc.pmap(lambda a: lax.ppermute(a, "i", [0, 1]), "i")(X),
     TypeError, ["perm must be a sequence of (source, destination) pairs", "[0, 1]"]),
    ("pmap over an axis of size 0",
     lambda: spmdc.pmap(lambda a: a)(np.ones((0, 3), np.float32)),
     ValueError, ["mapped axis has size 0", "at least one"]),
    ("a negative dimension",
     lambda: jnp.ones((-1, 3)),
     TypeError, ["(-1, 3)", "negative dimension", ">= 0"]),
    ("a vjp cotangent of the wrong dtype",
     lambda: spmdc.vjp(lambda a: a * 2, X)[1](np.ones((8, 3), np.int32)),
     ValueError, ["cotangent has dtype int32", "float32", ".astype(float32)"]),
    ("jacrev with respect to an integer input",
     lambda: spmdc.jacrev(lambda a: a * 2)(np.ones(3, np.int32)),
     TypeError, ["jacrev", "int32", "floating point arguments"]),
]


@pytest.mark.parametrize("name, bad, exc, fragments", TABLE, ids=[t[0] for t in TABLE])
def test_error_message(name, bad, exc, fragments):
    with pytest.raises(exc) as info:
        bad()
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} not in {message!r}"
    # ... and the next ordinary calls still work.
    assert float(spmdc.jit(lambda a: a.sum())(X)) == float(X.sum())
    np.testing.assert_allclose(spmdc.pmap(lambda a: lax.psum(a, "i"), "i")(X),
                               np.broadcast_to(X.sum(0), X.shape))
    np.testing.assert_allclose(spmdc.grad(lambda a: (a * a).sum())(X), 2 * X)


# --- the builtin class JAX 0.10.2 raises, recorded from JAX ----------------------------------

# (name, bad call, JAX's class, fragments of spmdc's message)
JAX_BUILTIN_CLASSES = [
    ("an axis out of bounds", lambda: jnp.sum(jnp.ones((2, 3)), axis=2),
     ValueError, ["sum", "axis 2", "rank 2", "test_errors.py"]),
    ("an axis out of bounds in a shape function", lambda: jnp.expand_dims(jnp.ones(3), 4),
     ValueError, ["expand_dims", "axis 4"]),
    ("a repeated axis", lambda: jnp.mean(jnp.ones((2, 3)), axis=(0, 0)),
     ValueError, ["mean", "repeated axis"]),
    ("squeezing an axis of size 2", lambda: jnp.squeeze(jnp.ones((2, 3)), 0),
     ValueError, ["squeeze", "size not equal to one"]),
    ("stacking arrays of different shapes", lambda: jnp.stack([jnp.ones(2), jnp.ones(3)]),
     ValueError, ["stack", "same shape"]),
    ("an unequal split", lambda: jnp.split(jnp.ones(5), 2),
     ValueError, ["split", "equal division"]),
    ("operands of one rank that do not broadcast", lambda: jnp.ones(2) + jnp.ones(3),
     TypeError, ["add", "(2,), (3,)"]),
    ("jnp.where's operands that do not broadcast",
     lambda: jnp.where(jnp.ones(2) > 0, jnp.ones(3), 0.0),
     ValueError, ["where", "(2,), (3,)"]),
    ("a list as the whole index", lambda: jnp.arange(10.0)[[1]],
     TypeError, ["non-tuple sequence", "arr[array(seq)]", "test_errors.py"]),
    ("a float index", lambda: jnp.arange(10.0)[1.5],
     TypeError, ["valid indices", "float 1.5", "test_errors.py"]),
    ("a float index array", lambda: jnp.arange(10.0)[np.array([1.5])],
     TypeError, ["integer or boolean type", "float64"]),
]


@pytest.mark.parametrize("name, bad, cls, fragments", JAX_BUILTIN_CLASSES,
                         ids=[t[0] for t in JAX_BUILTIN_CLASSES])
def test_jax_builtin_exception_classes(name, bad, cls, fragments):
    with pytest.raises(cls) as info:
        bad()
    assert type(info.value) is cls
    for fragment in fragments:
        assert fragment in str(info.value), f"{fragment!r} not in {str(info.value)!r}"


# --- JAX's classes (jax.errors), raised where JAX raises them ----------------------------

# (name, bad call, JAX's class name, fragments of spmdc's message)
JAX_CLASSES = [
    ("bool() of a traced value",
     lambda: spmdc.jit(lambda a: a if a.sum() > 0 else -a)(X),
     "TracerBoolConversionError", ["bool()", "traced", "test_errors.py"]),
    ("a traced value as a Python index",
     lambda: spmdc.jit(lambda a: [a, a][a[0, 0].astype(jnp.int32)])(X),
     "TracerIntegerConversionError", ["Python index", "traced", "test_errors.py"]),
    ("np.asarray of a traced value",
     lambda: spmdc.jit(lambda a: np.asarray(a))(X),
     "TracerArrayConversionError", ["NumPy array", "spmdc.numpy", "test_errors.py"]),
    ("a traced boolean mask as an index",
     lambda: spmdc.jit(lambda a: a[a > 3])(X),
     "NonConcreteBooleanIndexError", ["traced boolean mask", "where", "test_errors.py"]),
    # int(), float() and item() are plain ConcretizationTypeErrors in JAX (only an index,
    # hex() and oct() are TracerIntegerConversionErrors)
    ("int() of a traced value",
     lambda: spmdc.jit(lambda a: int(a[0, 0]))(X),
     "ConcretizationTypeError", ["int()", "traced", "test_errors.py"]),
    ("float() of a traced value",
     lambda: spmdc.jit(lambda a: float(a[0, 0]))(X),
     "ConcretizationTypeError", ["float()", "traced"]),
]


@pytest.mark.parametrize("name, bad, jax_class, fragments", JAX_CLASSES,
                         ids=[t[0] for t in JAX_CLASSES])
def test_jax_error_classes_are_raised_where_jax_raises_them(name, bad, jax_class, fragments):
    with pytest.raises(getattr(spmdc.errors, jax_class)) as info:
        bad()
    assert type(info.value).__name__ == jax_class
    for fragment in fragments:
        assert fragment in str(info.value), f"{fragment!r} not in {str(info.value)!r}"
    assert float(spmdc.jit(lambda a: a.sum())(X)) == float(X.sum())


# Each class of JAX's jax/errors.py and its bases, as jax/_src/errors.py defines them
# (JaxRuntimeError is jaxlib's own class: see spmdc/errors.py).
JAX_HIERARCHY = {
    "JAXTypeError": TypeError,
    "JAXIndexError": IndexError,
    "ConcretizationTypeError": "JAXTypeError",
    "NonConcreteBooleanIndexError": "JAXIndexError",
    "TracerArrayConversionError": "JAXTypeError",
    "TracerIntegerConversionError": "JAXTypeError",
    "TracerBoolConversionError": "ConcretizationTypeError",
    "UnexpectedTracerError": "JAXTypeError",
    "KeyReuseError": "JAXTypeError",
}


def test_jax_error_classes_have_jax_hierarchy():
    for name, base in JAX_HIERARCHY.items():
        cls = getattr(spmdc.errors, name)
        expected = base if isinstance(base, type) else getattr(spmdc.errors, base)
        assert cls.__bases__ == (expected,), name
    # the names spmdc exported before are the same classes
    assert spmdc.ConcretizationTypeError is spmdc.errors.ConcretizationTypeError
    assert spmdc.UnexpectedTracerError is spmdc.errors.UnexpectedTracerError
    assert spmdc.TracerArrayConversionError is spmdc.errors.TracerArrayConversionError


def test_jax_errors_resolves_to_spmdc_errors_under_the_alias(monkeypatch):
    import importlib
    import sys
    monkeypatch.setitem(sys.modules, "jax", spmdc)
    try:
        module = importlib.import_module("jax.errors")
        assert module is spmdc.errors
        from jax.errors import TracerBoolConversionError  # noqa: F401 (through the alias)
        assert TracerBoolConversionError is spmdc.errors.TracerBoolConversionError
    finally:
        sys.modules.pop("jax.errors", None)


# --- spmdc's own classes: one module, one type each ----------------------------------------

def test_every_exception_class_is_defined_in_spmdc_errors():
    # Public exception classes live in spmdc/errors.py; private ones (_Mismatch ...)
    # stay beside the code that catches them, and cli.py's never leave its main().
    import ast
    from pathlib import Path
    root = Path(spmdc.__file__).parent
    found = []
    for path in sorted(root.rglob("*.py")):
        if path.name in ("errors.py", "cli.py") and path.parent == root:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_") and any(
                    isinstance(b, ast.Name) and b.id.endswith(("Error", "Exception", "Lost"))
                    for b in node.bases):
                found.append(f"{path.relative_to(root)}: {node.name}")
    assert not found, "define exception classes in spmdc/errors.py:\n" + "\n".join(found)
    for name in spmdc.errors.__all__:
        cls = getattr(spmdc.errors, name)
        assert cls.__module__ == "spmdc.errors" and cls.__doc__, name


def test_missing_derivatives_raise_the_one_type_jax_raises():
    # JAX raises a NotImplementedError (a missing transpose rule, or select_and_gather_add's
    # with window dilation) and a ValueError (the while loop's transpose): one type each.
    assert spmdc.errors.WindowVJPError.__bases__ == (NotImplementedError,)
    assert spmdc.errors.WhileLoopVJPError.__bases__ == (ValueError,)
    with pytest.raises(spmdc.errors.WhileLoopVJPError) as info:
        spmdc.grad(lambda a: lax.while_loop(lambda c: c[1] < 3, lambda c: (c[0] * 2, c[1] + 1),
                                            (a, 0))[0].sum())(X)
    assert "test_errors.py" in str(info.value) and not isinstance(info.value, TypeError)
