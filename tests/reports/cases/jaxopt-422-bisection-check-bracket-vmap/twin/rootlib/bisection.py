from dataclasses import dataclass
from typing import Callable

import jax
import jax.numpy as jnp


@dataclass(frozen=True)
class Bisection:
    optimality_fun: Callable
    lower: float
    upper: float
    maxiter: int = 30
    check_bracket: bool = True

    def run(self, **kwargs):
        f = lambda x: self.optimality_fun(x, **kwargs)  # noqa: E731
        lower_value, upper_value = f(self.lower), f(self.upper)
        if self.check_bracket:
            if jnp.sign(lower_value) == jnp.sign(upper_value):
                raise ValueError("f(lower) and f(upper) must have opposite signs")

        def step(_, bounds):
            lo, hi = bounds
            mid = 0.5 * (lo + hi)
            same = jnp.sign(f(mid)) == jnp.sign(f(lo))
            return jnp.where(same, mid, lo), jnp.where(same, hi, mid)

        lo, hi = jax.lax.fori_loop(0, self.maxiter, step, (jnp.asarray(self.lower, float), jnp.asarray(self.upper, float)))
        return 0.5 * (lo + hi)
