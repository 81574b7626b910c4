from dataclasses import dataclass
from typing import Callable, NamedTuple

import jax
import jax.numpy as jnp


class State(NamedTuple):
    params: jax.Array
    error: jax.Array
    failed_linesearch: jax.Array
    iter_num: jax.Array


@dataclass(frozen=True)
class GradientSolver:
    fun: Callable
    tol: float = 1e-4
    maxiter: int = 100
    stepsize: float = 0.1
    stop_if_linesearch_fails: bool = False

    def _cond_fun(self, state):
        return (state.error > self.tol) & jnp.logical_or(not self.stop_if_linesearch_fails, ~state.failed_linesearch)

    def _body_fun(self, state):
        grad = jax.grad(self.fun)(state.params)
        params = state.params - self.stepsize * grad
        failed = self.fun(params) > self.fun(state.params)
        error = jnp.linalg.norm(jax.grad(self.fun)(params))
        return State(params, error, failed, state.iter_num + 1)

    def run(self, init_params):
        state = State(init_params, jnp.inf, jnp.array(False), jnp.array(0))
        return jax.lax.while_loop(self._cond_fun, self._body_fun, state).params
