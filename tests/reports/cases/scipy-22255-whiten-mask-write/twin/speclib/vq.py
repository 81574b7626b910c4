import warnings

from speclib._array_api import array_namespace


def whiten(obs):
    xp = array_namespace(obs)
    std_dev = xp.std(obs, axis=0)
    zero_std_mask = std_dev == 0
    std_dev = xp.where(zero_std_mask, 1.0, std_dev)
    if xp.any(zero_std_mask):
        warnings.warn("Some columns have standard deviation zero; they are not rescaled.")
    return obs / std_dev
