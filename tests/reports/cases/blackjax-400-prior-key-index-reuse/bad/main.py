import jax
import numpyro.distributions as dist

keys = jax.random.split(jax.random.PRNGKey(0), 8)
scale_prior = dist.HalfNormal(1.0)

u_sigma = scale_prior.sample(keys[6])
v_sigma = scale_prior.sample(keys[6])  # expect: JAX301

if float(u_sigma) == float(v_sigma):
    print(f"OBSERVED: u_sigma and v_sigma start at the same value {float(u_sigma):.4f}")
