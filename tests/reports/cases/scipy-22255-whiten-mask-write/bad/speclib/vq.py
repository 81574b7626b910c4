import warnings

from speclib._array_api import array_namespace


def whiten(obs):
    xp = array_namespace(obs)
    std_dev = xp.std(obs, axis=0)
    zero_std_mask = std_dev == 0
    if xp.any(zero_std_mask):
        std_dev[zero_std_mask] = 1.0  # expect: JAX103
        warnings.warn("Some columns have standard deviation zero; they are not rescaled.")
    return obs / std_dev
