"""Flax NNX basics: an `nnx.Module` MLP with `nnx.Linear`, `nnx.BatchNorm` and
`nnx.Dropout`, `nnx.Rngs`, an `nnx.Optimizer`, and an `nnx.jit` training step with
`nnx.value_and_grad`, on a small synthetic classification set. Prints the losses."""
import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax import nnx


class MLP(nnx.Module):
    def __init__(self, din, dmid, dout, *, rngs: nnx.Rngs):
        # No bias before BatchNorm, which cancels it: its gradient would be rounding
        # noise, which Adam magnifies into updates (and the batch statistics with them).
        self.linear1 = nnx.Linear(din, dmid, use_bias=False, rngs=rngs)
        self.bn = nnx.BatchNorm(dmid, rngs=rngs)
        self.dropout = nnx.Dropout(0.1, rngs=rngs)
        self.linear2 = nnx.Linear(dmid, dout, rngs=rngs)

    def __call__(self, x):
        x = nnx.gelu(self.dropout(self.bn(self.linear1(x))))
        return self.linear2(x)


rng = np.random.default_rng(0)
images = rng.normal(size=(64, 16)).astype(np.float32)
labels = (images[:, :4].sum(axis=1) > 0).astype(np.int32)

model = MLP(16, 32, 2, rngs=nnx.Rngs(0))
print("first kernel row:", [round(v, 6) for v in model.linear1.kernel[0, :4].tolist()])
optimizer = nnx.Optimizer(model, optax.adamw(1e-2), wrt=nnx.Param)


def loss_fn(model, x, y):
    logits = model(x)
    return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean(), logits


@nnx.jit
def train_step(model, optimizer, x, y):
    (loss, logits), grads = nnx.value_and_grad(loss_fn, has_aux=True)(model, x, y)
    optimizer.update(model, grads)
    return loss, (logits.argmax(-1) == y).mean()


model.train()
for step in range(20):
    loss, accuracy = train_step(model, optimizer, images, labels)
    if step % 5 == 0 or step == 19:
        print(f"step {step}: loss {float(loss):.6f} accuracy {float(accuracy):.4f}")
model.eval()
logits = model(images)
print("eval accuracy:", f"{float((logits.argmax(-1) == labels).mean()):.4f}")
print("param count:", sum(x.size for x in jax.tree_util.tree_leaves(nnx.state(model, nnx.Param))))
print("batch stats mean:", f"{float(jnp.mean(model.bn.mean[...])):.6f}")
