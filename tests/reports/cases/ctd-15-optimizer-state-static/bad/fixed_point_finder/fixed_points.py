import jax.numpy as jnp
from jax import grad, jit, lax, vmap
from jax.example_libraries import optimizers


def get_total_fp_loss_fun(rnn_fun):
    batch_rnn_fun = vmap(rnn_fun)
    return jit(lambda h: jnp.mean((h - batch_rnn_fun(h)) ** 2))


def optimize_fp_core(batch_idx_start, num_batches, update_fun, opt_state):
    """Run num_batches optimizer updates on device with a fori_loop."""
    return lax.fori_loop(batch_idx_start, batch_idx_start + num_batches, update_fun, opt_state)


optimize_fp_core_jit = jit(optimize_fp_core, static_argnums=(1, 2, 3))


def optimize_fps(rnn_fun, fp_candidates, hps):
    """Move the candidate states towards fixed points of rnn_fun by gradient descent."""
    total_fp_loss_fun = get_total_fp_loss_fun(rnn_fun)
    opt_init, opt_update, get_params = optimizers.adam(step_size=hps["step_size"])

    def update_fun(i, opt_state):
        grads = grad(total_fp_loss_fun)(get_params(opt_state))
        return opt_update(i, grads, opt_state)

    opt_state = opt_init(fp_candidates)
    print_every = hps["opt_print_every"]
    losses = []
    for oidx in range(hps["num_batches"] // print_every):
        start = oidx * print_every
        opt_state = optimize_fp_core_jit(start, print_every, update_fun, opt_state)  # expect: JAX402
        losses.append(float(total_fp_loss_fun(get_params(opt_state))))
    return get_params(opt_state), losses
