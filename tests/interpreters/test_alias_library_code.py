"""Library-shaped code through the alias (``sys.modules['jax'] = spmdc``): a primitive
defined the way Equinox's filter primitives define theirs (pytree params bound as static
parameters, a mutable output-structure recorder, Zero/UndefinedPrimal handling, the
axis-aware batcher table, lower_fun), and Flax-style linear_util plumbing. Runs in a
fresh interpreter, since the alias changes sys.modules."""
import os
import subprocess
import sys
import textwrap

PROGRAM = """
import sys, spmdc
sys.modules['jax'] = spmdc
import numpy as np
import jax, jax.core, jax.extend.core, jax.numpy as jnp, jax.tree_util as jtu
import jax.interpreters.ad as ad
import jax.interpreters.batching as batching
import jax.interpreters.mlir as mlir
from jax.extend import linear_util as lu
from jax.interpreters import partial_eval as pe


class OutputTree:                      # filled in by the abstract evaluation
    def __call__(self, out):
        flat, self.treedef = jtu.tree_flatten(out)
        return flat


def primitive_def(rule):               # rules on pytrees, bound on flat arrays
    def wrapper(*dynamic, treedef, static, output):
        leaves = iter(dynamic)
        args = jtu.tree_unflatten(treedef, [next(leaves) if s is None else s for s in static])
        return output(rule(*args))
    return wrapper


def primitive_bind(prim, *args):
    flat, treedef = jtu.tree_flatten(args)
    dynamic = [x for x in flat if isinstance(x, (jax.Array, np.ndarray))]
    static = tuple(None if isinstance(x, (jax.Array, np.ndarray)) else x for x in flat)
    output = OutputTree()
    out = prim.bind(*dynamic, treedef=treedef, static=static, output=output)
    return jtu.tree_unflatten(output.treedef, out)


def impl(pair, scale):                 # {'a': x, 'b': y}, a Python float
    return {"sum": (pair["a"] + pair["b"]) * scale, "prod": pair["a"] * pair["b"]}


def abstract(pair, scale):
    assert isinstance(pair["a"], jax.core.ShapedArray)
    shape = np.broadcast_shapes(pair["a"].shape, pair["b"].shape)
    aval = jax.core.ShapedArray(shape, pair["a"].dtype)
    return {"sum": aval, "prod": aval}


def jvp(primals, tangents, *, treedef, static, output):
    tangents = [ad.instantiate_zeros(t) for t in tangents]
    out = p.bind(*primals, treedef=treedef, static=static, output=output)
    (a, b), (ta, tb), scale = primals, tangents, static[-1]
    return out, [ta * b + a * tb, (ta + tb) * scale]     # flat order: prod, sum


def transpose(cts, *args, treedef, static, output):
    raise AssertionError("p is differentiated through its JVP, never transposed")


def batch(axis_size, axis_name, trace_type, args, dims, **params):
    args = [jnp.moveaxis(x, d, 0) if d is not batching.not_mapped else
            jnp.broadcast_to(x, (axis_size,) + x.shape) for x, d in zip(args, dims)]
    return p.bind(*args, **params), [0, 0]


p = jax.extend.core.Primitive("pair_op")
p.multiple_results = True
p.def_impl(primitive_def(impl))
p.def_abstract_eval(primitive_def(abstract))
ad.primitive_jvps[p] = jvp
ad.primitive_transposes[p] = transpose
batching.axis_primitive_batchers[p] = batch
mlir.register_lowering(p, mlir.lower_fun(primitive_def(impl), multiple_results=True))

x = np.array([1.0, 2.0, 3.0], np.float32)
y = np.array([0.5, 0.25, 2.0], np.float32)
f = lambda x, y: primitive_bind(p, {"a": x, "b": y}, 2.0)
print(np.asarray(f(x, y)["sum"]).tolist())
print(np.asarray(jax.jit(f)(x, y)["prod"]).tolist())
print(np.asarray(jax.vmap(f, in_axes=(0, None))(x[:, None], y)["prod"]).tolist())
print(np.asarray(jax.grad(lambda x: f(x, y)["prod"].sum() + f(x, y)["sum"].sum())(x)).tolist())
print(np.asarray(jax.jit(jax.vmap(jax.grad(lambda x: f(x, 3.0 * x)["prod"])))(x)).tolist())


@lu.transformation_with_aux
def flatten_fun(in_tree, *flat):
    out = yield jtu.tree_unflatten(in_tree, flat), {}
    yield jtu.tree_flatten(out)


flat, tree = jtu.tree_flatten(({"w": x}, y))
fun, out_tree = flatten_fun(lu.wrap_init(lambda d, v: {"z": d["w"] * v}), tree)
outs = fun.call_wrapped(*flat)
print(np.asarray(jtu.tree_unflatten(out_tree(), outs)["z"]).tolist())
print(pe.PartialVal.unknown(jax.core.get_aval(x)).get_aval(), pe.PartialVal.known(x).is_known())
"""

EXPECTED = """\
[3.0, 4.5, 10.0]
[0.5, 0.5, 6.0]
[[0.5, 0.25, 2.0], [1.0, 0.5, 4.0], [1.5, 0.75, 6.0]]
[2.5, 2.25, 4.0]
[6.0, 12.0, 18.0]
[0.5, 0.5, 6.0]
float32[3] True
"""


def test_library_shaped_code_runs_under_the_alias():
    env = {**os.environ}
    env.pop("SPMDC_CPU_DEVICES", None)
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(PROGRAM)], env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.stdout == EXPECTED, r.stderr
