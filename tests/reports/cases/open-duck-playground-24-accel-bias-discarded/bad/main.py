import jax
import numpy as np

from duck import mujoco_infer
from duck.joystick import Joystick

qvel = np.array([0.2, -0.1, 0.0])
command = np.array([0.3, 0.0, 0.0])
env = Joystick()
train_obs = np.asarray(jax.jit(env.get_obs)(qvel, command))
deploy_obs = mujoco_infer.get_obs(qvel, command)
if not np.allclose(train_obs, deploy_obs, atol=1e-5):
    print(f"OBSERVED: training observation {train_obs[:3]} differs from deployment {deploy_obs[:3]}")
