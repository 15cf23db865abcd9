"""distrax's README and docs, small: distributions (Normal, MultivariateNormalDiag,
Categorical) sampled with a key, their log_prob, entropy and KL divergence; bijectors
(ScalarAffine, Tanh, a Chain, a Lambda) and a Transformed distribution; all of it under
`jit`, `grad` and `vmap`. Prints the values."""
import distrax
import jax
import jax.numpy as jnp
import numpy as np


def show(label, value):
    print(f"{label}:", np.round(np.asarray(value, dtype=np.float64), 4).tolist())


key = jax.random.PRNGKey(1234)
sample_key, categorical_key, transformed_key = jax.random.split(key, 3)

# The README's first example: a diagonal Gaussian, sampled and scored.
mu = jnp.array([-1.0, 0.0, 1.0])
sigma = jnp.array([0.1, 0.2, 0.3])
mvn = distrax.MultivariateNormalDiag(mu, sigma)
samples = mvn.sample(seed=sample_key, sample_shape=(2,))
show("mvn samples", samples)
show("mvn log_prob", mvn.log_prob(samples))
show("mvn entropy", mvn.entropy())
other = distrax.MultivariateNormalDiag(jnp.zeros(3), jnp.ones(3))
show("mvn kl", mvn.kl_divergence(other))

normal = distrax.Normal(loc=0.5, scale=2.0)
x = jnp.linspace(-2.0, 2.0, 5)
show("normal log_prob", normal.log_prob(x))
show("normal cdf", normal.cdf(x))
show("normal entropy", normal.entropy())
show("normal kl", normal.kl_divergence(distrax.Normal(0.0, 1.0)))
show("normal mean, stddev", [normal.mean(), normal.stddev()])

logits = jnp.array([0.5, -1.0, 2.0, 0.0])
categorical = distrax.Categorical(logits=logits)
draws = categorical.sample(seed=categorical_key, sample_shape=(8,))
print("categorical samples:", draws.tolist())
show("categorical probs", categorical.probs)
show("categorical log_prob", categorical.log_prob(jnp.arange(4)))
show("categorical entropy", categorical.entropy())
show("categorical kl", categorical.kl_divergence(distrax.Categorical(logits=jnp.zeros(4))))

# Bijectors: a chain applies its last bijector first.
chain = distrax.Chain([distrax.Tanh(), distrax.ScalarAffine(shift=0.5, scale=2.0)])
y, log_det = chain.forward_and_log_det(x)
show("chain forward", y)
show("chain log_det", log_det)
show("chain inverse", chain.inverse(y))
# A Lambda bijector reads the function's jaxpr (is its Jacobian constant?) and takes its
# log-determinant with jacfwd.
exp_affine = distrax.Lambda(lambda v: 2.0 * jnp.exp(v) + 1.0)
show("lambda forward", exp_affine.forward(x))
show("lambda log_det", exp_affine.forward_log_det_jacobian(x))
print("lambda constant jacobian:", exp_affine.is_constant_jacobian,
      distrax.Lambda(lambda v: 3.0 * v - 1.0).is_constant_jacobian)

# A Transformed distribution: a squashed Gaussian, as in policy-gradient agents.
squashed = distrax.Transformed(distrax.Normal(jnp.zeros(3), jnp.ones(3)), chain)
values, log_probs = squashed.sample_and_log_prob(seed=transformed_key)
show("transformed sample", values)
show("transformed log_prob", log_probs)
show("transformed log_prob again", squashed.log_prob(values))


# Under jit, grad and vmap.
@jax.jit
def gaussian_nll(loc, log_scale, data):
    return -distrax.Normal(loc, jnp.exp(log_scale)).log_prob(data).sum()


data = jnp.array([0.3, -0.2, 1.1, 0.7])
show("jit nll", gaussian_nll(0.0, 0.0, data))
grads = jax.grad(gaussian_nll, argnums=(0, 1))(0.0, 0.0, data)
show("grad nll", grads)
loc, log_scale = 0.0, 0.0
for _ in range(50):
    g_loc, g_log_scale = jax.grad(gaussian_nll, argnums=(0, 1))(loc, log_scale, data)
    loc, log_scale = loc - 0.05 * g_loc, log_scale - 0.05 * g_log_scale
show("fitted loc, scale", [loc, jnp.exp(log_scale)])


@jax.jit
def kl_to_prior(mean, log_std):
    posterior = distrax.MultivariateNormalDiag(mean, jnp.exp(log_std))
    return posterior.kl_divergence(distrax.MultivariateNormalDiag(jnp.zeros(3), jnp.ones(3)))


show("grad kl", jax.grad(kl_to_prior, argnums=(0, 1))(mu, jnp.log(sigma)))
keys = jax.random.split(key, 4)
sample_many = jax.jit(jax.vmap(lambda k: squashed.sample(seed=k)))
show("vmap transformed samples", sample_many(keys))
show("grad transformed log_prob",
     jax.grad(lambda v: squashed.log_prob(v).sum())(jnp.array([0.1, 0.4, 0.8])))
