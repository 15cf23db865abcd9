"""Haiku's MNIST example on a small synthetic stand-in for MNIST (64 random 28x28
"digits" whose label is the brightest of ten image strips): `hk.transform` of an
`hk.nets.MLP`, Adam from Optax, a jitted update. Prints the losses and the accuracy."""
import haiku as hk
import jax
import jax.numpy as jnp
import numpy as np
import optax

rng = np.random.default_rng(0)
images = rng.uniform(size=(64, 28, 28, 1)).astype(np.float32)
labels = images[:, :, :, 0].reshape(64, 28 * 28)[:, :780].reshape(64, 10, 78).mean(-1)
labels = labels.argmax(-1).astype(np.int32)


def net_fn(images):
    x = images.astype(jnp.float32)
    mlp = hk.Sequential([hk.Flatten(), hk.Linear(64), jax.nn.relu, hk.Linear(10)])
    return mlp(x)


net = hk.without_apply_rng(hk.transform(net_fn))
optimiser = optax.adam(1e-3)


def loss(params, images, labels):
    logits = net.apply(params, images)
    one_hot = jax.nn.one_hot(labels, 10)
    l2 = sum(jnp.sum(jnp.square(p)) for p in jax.tree_util.tree_leaves(params))
    return -jnp.sum(one_hot * jax.nn.log_softmax(logits)) / labels.shape[0] + 1e-4 * l2


@jax.jit
def update(params, opt_state, images, labels):
    grads = jax.grad(loss)(params, images, labels)
    updates, opt_state = optimiser.update(grads, opt_state)
    return optax.apply_updates(params, updates), opt_state


@jax.jit
def accuracy(params, images, labels):
    return jnp.mean(jnp.argmax(net.apply(params, images), axis=-1) == labels)


params = net.init(jax.random.PRNGKey(42), images[:1])
print("parameter shapes:", {k: {n: v.shape for n, v in m.items()} for k, m in params.items()})
opt_state = optimiser.init(params)
for step in range(40):
    if step % 10 == 0:
        print(f"step {step}: loss {float(loss(params, images, labels)):.6f} "
              f"accuracy {float(accuracy(params, images, labels)):.4f}")
    params, opt_state = update(params, opt_state, images, labels)
print("final loss:", f"{float(loss(params, images, labels)):.6f}")
