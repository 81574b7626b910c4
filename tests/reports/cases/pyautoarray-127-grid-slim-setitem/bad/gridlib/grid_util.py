import jax.numpy as np


def grid_slim_from(mask, pixel_scales, origin=(0.0, 0.0)):
    """(y, x) arc-second coordinates of every unmasked pixel, in row-major order."""
    total = int(np.sum(~mask))
    centre = ((mask.shape[0] - 1) / 2 + origin[0], (mask.shape[1] - 1) / 2 + origin[1])
    grid_slim = np.zeros((total, 2))
    index = 0
    for y in range(mask.shape[0]):
        for x in range(mask.shape[1]):
            if not mask[y, x]:
                grid_slim[index, 0] = -(y - centre[0]) * pixel_scales[0]  # expect: JAX103
                grid_slim[index, 1] = (x - centre[1]) * pixel_scales[1]  # expect: JAX103
                index += 1
    return grid_slim
