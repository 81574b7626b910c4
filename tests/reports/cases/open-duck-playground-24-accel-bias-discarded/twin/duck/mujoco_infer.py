import numpy as np


def get_obs(qvel, command):
    accelerometer = np.array([qvel[0] * 0.5, qvel[1] * 0.5, 9.81])
    return np.concatenate([accelerometer, command])
