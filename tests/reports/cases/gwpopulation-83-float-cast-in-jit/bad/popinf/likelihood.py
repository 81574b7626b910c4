import jax.numpy as jnp


class PopulationLikelihood:
    def __init__(self, event_samples):
        self.event_samples = event_samples  # (n_events, n_samples)
        self.n_events = event_samples.shape[0]

    def _per_event(self, sample):
        weights = jnp.exp(-0.5 * ((self.event_samples - sample["mu"]) / sample["sigma"]) ** 2)
        means = jnp.mean(weights, axis=-1)
        variances = jnp.var(weights, axis=-1) / weights.shape[-1] / means**2
        return jnp.log(means), variances

    def extra_statistics(self, sample):
        ln_bfs, variances = self._per_event(sample)
        total_variance = float(jnp.sum(variances))  # expect: JAX102
        for i in range(self.n_events):
            sample[f"ln_bf_{i}"] = float(ln_bfs[i])  # expect: JAX102
            sample[f"var_{i}"] = float(variances[i])  # expect: JAX102
        sample["variance"] = total_variance
        return sample
