import jax.numpy as jnp

RESAMPLE_FIGURE_OF_MERIT = -1.0e99


class GreaterThan:
    def __init__(self, upper, lower):
        self.upper, self.lower = upper, lower

    def __call__(self, arguments):
        return arguments[self.upper] > arguments[self.lower]


class Both:
    def __init__(self, first, second):
        self.first, self.second = first, second

    def __call__(self, arguments):
        return jnp.logical_and(self.first(arguments), self.second(arguments))


class Model:
    names = ("sigma_1", "sigma_2", "sigma_3")

    def __init__(self):
        self.assertions = [Both(GreaterThan("sigma_2", "sigma_1"), GreaterThan("sigma_3", "sigma_2"))]

    def arguments_from(self, vector):
        return dict(zip(self.names, vector))

    def assertions_satisfied(self, arguments):
        satisfied = jnp.array(True)
        for assertion in self.assertions:
            satisfied = jnp.logical_and(satisfied, assertion(arguments))
        return satisfied


class Fitness:
    def __init__(self, model, data):
        self.model, self.data = model, data

    def __call__(self, vector):
        arguments = self.model.arguments_from(vector)
        widths = jnp.stack([arguments[name] for name in self.model.names])
        log_likelihood = -jnp.sum((self.data - widths) ** 2)
        satisfied = self.model.assertions_satisfied(arguments)
        return jnp.where(satisfied, log_likelihood, RESAMPLE_FIGURE_OF_MERIT)
