"""NumPyro's eight schools: the non-centred model sampled with NUTS (few warm-up steps
and samples, one chain), then the same model fitted by SVI with an `AutoNormal` guide.
Prints posterior means and the SVI losses."""
import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
from numpyro.infer import MCMC, NUTS, SVI, Trace_ELBO
from numpyro.infer.autoguide import AutoNormal
from numpyro.infer.reparam import TransformReparam

J = 8
y = np.array([28.0, 8.0, -3.0, 7.0, -1.0, 1.0, 18.0, 12.0])
sigma = np.array([15.0, 10.0, 16.0, 11.0, 9.0, 11.0, 10.0, 18.0])


def eight_schools(J, sigma, y=None):
    mu = numpyro.sample("mu", dist.Normal(0, 5))
    tau = numpyro.sample("tau", dist.HalfCauchy(5))
    with numpyro.plate("J", J):
        with numpyro.handlers.reparam(config={"theta": TransformReparam()}):
            theta = numpyro.sample(
                "theta", dist.TransformedDistribution(
                    dist.Normal(0.0, 1.0), dist.transforms.AffineTransform(mu, tau)))
        numpyro.sample("obs", dist.Normal(theta, sigma), obs=y)


mcmc = MCMC(NUTS(eight_schools), num_warmup=60, num_samples=60, progress_bar=False)
mcmc.run(jax.random.PRNGKey(0), J, sigma, y=y, extra_fields=("potential_energy",))
samples = mcmc.get_samples()
print("sample shapes:", {k: v.shape for k, v in sorted(samples.items())})
print("posterior mean mu:", f"{float(jnp.mean(samples['mu'])):.3f}",
      "tau:", f"{float(jnp.mean(samples['tau'])):.3f}")
print("mean potential energy:",
      f"{float(jnp.mean(mcmc.get_extra_fields()['potential_energy'])):.3f}")

guide = AutoNormal(eight_schools)
svi = SVI(eight_schools, guide, numpyro.optim.Adam(0.05), Trace_ELBO())
result = svi.run(jax.random.PRNGKey(1), 200, J, sigma, y=y, progress_bar=False)
print("svi losses:", [round(float(v), 3) for v in result.losses[::50]])
print("svi mu loc:", f"{float(result.params['mu_auto_loc']):.4f}")
