"""Equinox's README: a `Linear` module as a dataclass pytree with `filter_jit` and
`filter_grad`, then `eqx.nn.MLP` trained a few steps with Optax on synthetic data (as
in "All of Equinox"). Prints the outputs and losses."""
import equinox as eqx
import jax
import jax.numpy as jnp
import optax


class Linear(eqx.Module):
    weight: jax.Array
    bias: jax.Array

    def __init__(self, in_size, out_size, key):
        wkey, bkey = jax.random.split(key)
        self.weight = jax.random.normal(wkey, (out_size, in_size))
        self.bias = jax.random.normal(bkey, (out_size,))

    def __call__(self, x):
        return self.weight @ x + self.bias


@eqx.filter_jit
@eqx.filter_grad
def loss_fn(model, x, y):
    pred_y = jax.vmap(model)(x)
    return jax.numpy.mean((y - pred_y) ** 2)


batch_size, in_size, out_size = 32, 2, 3
model = Linear(in_size, out_size, key=jax.random.PRNGKey(0))
x = jax.numpy.zeros((batch_size, in_size))
y = jax.numpy.zeros((batch_size, out_size))
grads = loss_fn(model, x, y)
print("linear grad weight:", [round(v, 6) for v in grads.weight.ravel().tolist()])
print("linear grad bias:", [round(v, 6) for v in grads.bias.tolist()])

# "All of Equinox": an MLP, filtered transformations, an Optax optimiser.
key = jax.random.PRNGKey(1)
mkey, dkey = jax.random.split(key)
mlp = eqx.nn.MLP(in_size=2, out_size=1, width_size=16, depth=2, key=mkey)
xs = jax.random.uniform(dkey, (64, 2), minval=-1, maxval=1)
ys = jnp.sin(3 * xs[:, :1]) + xs[:, 1:] ** 2


def mlp_loss(model, x, y):
    return jnp.mean((jax.vmap(model)(x) - y) ** 2)


optim = optax.adam(3e-2)
opt_state = optim.init(eqx.filter(mlp, eqx.is_inexact_array))


@eqx.filter_jit
def make_step(model, opt_state, x, y):
    loss, grads = eqx.filter_value_and_grad(mlp_loss)(model, x, y)
    updates, opt_state = optim.update(grads, opt_state, eqx.filter(model, eqx.is_array))
    return eqx.apply_updates(model, updates), opt_state, loss


for step in range(30):
    mlp, opt_state, loss = make_step(mlp, opt_state, xs, ys)
    if step % 10 == 0 or step == 29:
        print(f"mlp step {step}: loss {float(loss):.6f}")
params, static = eqx.partition(mlp, eqx.is_array)
print("parameter count:", sum(p.size for p in jax.tree_util.tree_leaves(params)))
print("recombined output:", f"{float(eqx.combine(params, static)(jnp.ones(2))[0]):.6f}")
