"""chex's assertions and dataclasses, as its README shows them: shape, rank, type and
tree assertions outside and inside `jit`, `chex.dataclass` as a pytree, and
`chex.assert_max_traces`. Prints what passes and the message of what fails."""
import chex
import jax
import jax.numpy as jnp


def check(label, thunk):
    try:
        thunk()
        print(f"{label}: ok")
    except AssertionError as error:
        print(f"{label}: AssertionError {str(error).splitlines()[0][:80]}")


x = jnp.ones((3, 4))
check("assert_shape (3, 4)", lambda: chex.assert_shape(x, (3, 4)))
check("assert_shape (3, None)", lambda: chex.assert_shape(x, (3, None)))
check("assert_shape (4, 3)", lambda: chex.assert_shape(x, (4, 3)))
check("assert_rank 2", lambda: chex.assert_rank(x, 2))
check("assert_type float", lambda: chex.assert_type(x, float))
check("assert_type int", lambda: chex.assert_type(x, int))
check("assert_equal_shape", lambda: chex.assert_equal_shape([x, jnp.zeros((3, 4))]))
check("assert_trees_all_close", lambda: chex.assert_trees_all_close(
    {"a": x, "b": [x * 2]}, {"a": x + 1e-7, "b": [x * 2]}))
check("assert_tree_all_finite", lambda: chex.assert_tree_all_finite({"a": x / 0}))
check("assert_scalar_positive", lambda: chex.assert_scalar_positive(0.5))


@chex.dataclass
class Params:
    weight: chex.Array
    bias: chex.Array


params = Params(weight=jnp.arange(6.0).reshape(2, 3), bias=jnp.ones(3))
doubled = jax.tree_util.tree_map(lambda leaf: 2 * leaf, params)
print("dataclass leaves:", [leaf.tolist() for leaf in jax.tree_util.tree_leaves(doubled)])
print("dataclass replace:", params.replace(bias=jnp.zeros(3)).bias.tolist())


@jax.jit
def affine(params, inputs):
    chex.assert_rank(inputs, 2)
    chex.assert_shape(params.weight, (inputs.shape[-1], None))
    return inputs @ params.weight + params.bias


print("affine:", affine(params, jnp.ones((1, 2))).tolist())


@chex.assert_max_traces(n=1)
def square(v):
    return v * v


square_jit = jax.jit(square)
print("traced once:", square_jit(jnp.float32(3.0)).item(), square_jit(jnp.float32(4.0)).item())
check("second trace", lambda: jax.jit(square)(jnp.ones(2)))
