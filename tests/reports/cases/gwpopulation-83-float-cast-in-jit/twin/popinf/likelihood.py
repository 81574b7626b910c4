import jax.numpy as jnp


def to_number(value, kind):
    return value.astype(kind)


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
        total_variance = jnp.sum(variances)
        for i in range(self.n_events):
            sample[f"ln_bf_{i}"] = to_number(ln_bfs[i], float)
            sample[f"var_{i}"] = to_number(variances[i], float)
        sample["variance"] = to_number(total_variance, float)
        return sample
