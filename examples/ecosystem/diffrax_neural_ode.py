"""Diffrax's neural ODE example, made small: an Equinox MLP as the vector field,
`diffeqsolve` with `Tsit5` and a PID step-size controller, trained a few steps with Optax
to fit spirals from a known linear ODE. Prints the losses and the solver's step count."""
import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
import optax


def dataset(key, size=16, length=20):
    ts = jnp.linspace(0, 4, length)
    y0 = jax.random.uniform(key, (size, 2), minval=-0.6, maxval=1)

    def solve(y0):
        term = diffrax.ODETerm(lambda t, y, args: jnp.stack([y[1] / (1 + 0.1 * t), -y[0]]))
        sol = diffrax.diffeqsolve(term, diffrax.Tsit5(), ts[0], ts[-1], 0.1, y0,
                                  saveat=diffrax.SaveAt(ts=ts))
        return sol.ys
    return ts, jax.vmap(solve)(y0)


class Func(eqx.Module):
    mlp: eqx.nn.MLP

    def __init__(self, key):
        self.mlp = eqx.nn.MLP(2, 2, 16, 2, activation=jax.nn.softplus,
                              final_activation=jax.nn.tanh, key=key)

    def __call__(self, t, y, args):
        return self.mlp(y)


class NeuralODE(eqx.Module):
    func: Func

    def __call__(self, ts, y0):
        solution = diffrax.diffeqsolve(
            diffrax.ODETerm(self.func), diffrax.Tsit5(), t0=ts[0], t1=ts[-1],
            dt0=ts[1] - ts[0], y0=y0,
            stepsize_controller=diffrax.PIDController(rtol=1e-3, atol=1e-6),
            saveat=diffrax.SaveAt(ts=ts))
        return solution.ys


data_key, model_key = jax.random.split(jax.random.PRNGKey(5678))
ts, ys = dataset(data_key)
print("data checksum:", f"{float(jnp.sum(ys)):.5f}")
model = NeuralODE(Func(model_key))


@eqx.filter_value_and_grad
def grad_loss(model, ti, yi):
    y_pred = jax.vmap(model, in_axes=(None, 0))(ti, yi[:, 0])
    return jnp.mean((yi - y_pred) ** 2)


optim = optax.adabelief(3e-3)
opt_state = optim.init(eqx.filter(model, eqx.is_inexact_array))


@eqx.filter_jit
def make_step(ti, yi, model, opt_state):
    loss, grads = grad_loss(model, ti, yi)
    updates, opt_state = optim.update(grads, opt_state)
    return loss, eqx.apply_updates(model, updates), opt_state


for step in range(8):
    loss, model, opt_state = make_step(ts[:10], ys[:, :10], model, opt_state)
    if step % 2 == 0 or step == 7:
        print(f"step {step}: loss {float(loss):.6f}")
solution = diffrax.diffeqsolve(
    diffrax.ODETerm(model.func), diffrax.Tsit5(), 0.0, 4.0, 0.2, ys[0, 0],
    stepsize_controller=diffrax.PIDController(rtol=1e-3, atol=1e-6))
print("accepted steps:", int(solution.stats["num_accepted_steps"]),
      "end point:", [round(v, 4) for v in solution.ys[-1].tolist()])
