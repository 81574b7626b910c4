import jax
import jax.numpy as jnp


def compute_x(n_rob, P, cost_mat_inv, lincost):
    nvar = jnp.shape(P)[1]
    sol_x = jnp.dot(cost_mat_inv, lincost)
    primal_sol_x = sol_x[0 : n_rob * nvar]
    cx = primal_sol_x.reshape(n_rob, nvar)
    return jnp.dot(P, cx.T).T


compute_x_jit = jax.jit(compute_x, static_argnums=0)
P = jnp.ones((10, 3))
cost_mat_inv = jnp.eye(8)
print(compute_x_jit(2, P, cost_mat_inv, jnp.arange(8.0)))
