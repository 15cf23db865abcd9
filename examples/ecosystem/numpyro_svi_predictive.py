"""NumPyro's SVI and Predictive, as its docs use them: a Bayesian linear regression on
small synthetic data fitted with an `AutoNormal` guide and `Trace_ELBO`, then the prior
predictive, the posterior from the guide, and the posterior predictive of `Predictive`.
Prints the losses, the fitted coefficients and the predictive means."""
import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
from numpyro.infer import SVI, Predictive, Trace_ELBO
from numpyro.infer.autoguide import AutoNormal

rng = np.random.RandomState(0)
x = rng.normal(size=(40, 3)).astype(np.float32)
y = (x @ np.array([1.5, -2.0, 0.5], np.float32) + 0.3
     + 0.1 * rng.normal(size=40).astype(np.float32))


def model(x, y=None):
    w = numpyro.sample("w", dist.Normal(jnp.zeros(3), 1.0).to_event(1))
    b = numpyro.sample("b", dist.Normal(0.0, 1.0))
    sigma = numpyro.sample("sigma", dist.Exponential(1.0))
    with numpyro.plate("data", x.shape[0]):
        numpyro.sample("obs", dist.Normal(x @ w + b, sigma), obs=y)


prior = Predictive(model, num_samples=100)(jax.random.PRNGKey(0), x)
print("prior predictive shape:", prior["obs"].shape,
      "mean:", f"{float(jnp.mean(prior['obs'])):.4f}")

guide = AutoNormal(model)
svi = SVI(model, guide, numpyro.optim.Adam(0.05), Trace_ELBO())
result = svi.run(jax.random.PRNGKey(1), 300, x, y, progress_bar=False)
print("svi losses:", [round(float(v), 2) for v in result.losses[::75]])
print("w loc:", [round(float(v), 3) for v in result.params["w_auto_loc"]])
print("b loc:", f"{float(result.params['b_auto_loc']):.3f}")

posterior = guide.sample_posterior(jax.random.PRNGKey(2), result.params, sample_shape=(200,))
print("posterior w mean:", [round(float(v), 3) for v in jnp.mean(posterior["w"], 0)])
predictive = Predictive(model, guide=guide, params=result.params, num_samples=200)
obs = predictive(jax.random.PRNGKey(3), x[:4])["obs"]
print("posterior predictive mean:", [round(float(v), 3) for v in jnp.mean(obs, 0)])
