"""Flax Linen's quick start: a small CNN (`nn.Conv`, `avg_pool`, `nn.Dense`) trained
with a `TrainState` and Optax SGD with momentum on synthetic 8x8 "images", as the MNIST
quick start does on real ones. Prints the losses and the accuracy."""
import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax.training import train_state


class CNN(nn.Module):
    @nn.compact
    def __call__(self, x):
        x = nn.relu(nn.Conv(features=8, kernel_size=(3, 3))(x))
        x = nn.avg_pool(x, window_shape=(2, 2), strides=(2, 2))
        x = x.reshape((x.shape[0], -1))
        x = nn.relu(nn.Dense(features=32)(x))
        return nn.Dense(features=3)(x)


rng = np.random.default_rng(0)
images = rng.normal(size=(48, 8, 8, 1)).astype(np.float32)
labels = (np.argmax(images.reshape(48, -1)[:, :3], axis=1)).astype(np.int32)

cnn = CNN()
variables = cnn.init(jax.random.PRNGKey(0), jnp.ones((1, 8, 8, 1)))
print(nn.tabulate(cnn, jax.random.PRNGKey(0), compute_flops=False)(jnp.ones((1, 8, 8, 1)))
      .count("Conv"), "conv rows in the summary")
state = train_state.TrainState.create(apply_fn=cnn.apply, params=variables["params"],
                                      tx=optax.sgd(0.05, momentum=0.9))


@jax.jit
def train_step(state, batch, targets):
    def loss_fn(params):
        logits = state.apply_fn({"params": params}, batch)
        return optax.softmax_cross_entropy_with_integer_labels(logits, targets).mean(), logits
    (loss, logits), grads = jax.value_and_grad(loss_fn, has_aux=True)(state.params)
    accuracy = jnp.mean(jnp.argmax(logits, -1) == targets)
    return state.apply_gradients(grads=grads), loss, accuracy


for step in range(25):
    state, loss, accuracy = train_step(state, images, labels)
    if step % 5 == 0 or step == 24:
        print(f"step {step}: loss {float(loss):.6f} accuracy {float(accuracy):.4f}")
print("param shapes:", jax.tree_util.tree_map(lambda p: p.shape, state.params))
