import jax.numpy as jnp


class FitException(Exception):
    pass


class GreaterThan:
    def __init__(self, upper, lower):
        self.upper, self.lower = upper, lower

    def __call__(self, arguments):
        return arguments[self.upper] > arguments[self.lower]


class Both:
    def __init__(self, first, second):
        self.first, self.second = first, second

    def __call__(self, arguments):
        return self.first(arguments) and self.second(arguments)  # expect: JAX101


class Model:
    names = ("sigma_1", "sigma_2", "sigma_3")

    def __init__(self):
        self.assertions = [Both(GreaterThan("sigma_2", "sigma_1"), GreaterThan("sigma_3", "sigma_2"))]

    def arguments_from(self, vector):
        return dict(zip(self.names, vector))

    def check_assertions(self, arguments):
        for assertion in self.assertions:
            if not assertion(arguments):  # expect: JAX101
                raise FitException("assertion violated")


class Fitness:
    def __init__(self, model, data):
        self.model, self.data = model, data

    def __call__(self, vector):
        arguments = self.model.arguments_from(vector)
        self.model.check_assertions(arguments)
        widths = jnp.stack([arguments[name] for name in self.model.names])
        return -jnp.sum((self.data - widths) ** 2)
