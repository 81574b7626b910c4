import jax.numpy as jnp


class Joystick:
    def get_accelerometer(self, qvel):
        return jnp.array([qvel[0] * 0.5, qvel[1] * 0.5, 9.81])

    def get_obs(self, qvel, command):
        accelerometer = self.get_accelerometer(qvel)
        return jnp.concatenate([accelerometer, command])
