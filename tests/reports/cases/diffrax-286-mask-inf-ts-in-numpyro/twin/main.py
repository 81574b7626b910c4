import diffrax
import jax
import jax.numpy as jnp
import numpyro
import numpyro.distributions as dist
from numpyro.infer import Predictive

T_EVAL = jnp.linspace(0.0, 5.0, 50)


def decay(t, y, args):
    return -args * y


def below_threshold(t, y, args, **kwargs):
    return y[0] < 0.05


def solve(gamma):
    return diffrax.diffeqsolve(
        diffrax.ODETerm(decay),
        diffrax.Tsit5(),
        t0=0.0,
        t1=T_EVAL[-1],
        dt0=0.01,
        y0=jnp.array([1.0]),
        args=gamma,
        saveat=diffrax.SaveAt(ts=T_EVAL),
        event=diffrax.Event(below_threshold),
    )


def model():
    gamma = numpyro.sample("gamma", dist.LogNormal(0.0, 0.3))
    sol = solve(gamma)
    finite = jnp.isfinite(sol.ts)
    numpyro.deterministic("freeze_out_time", jnp.max(jnp.where(finite, sol.ts, -jnp.inf)))


draws = Predictive(model, num_samples=4)(jax.random.key(0))
print(draws["freeze_out_time"])
