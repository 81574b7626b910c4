import sys

from gridenv.spaces import Discrete


class Environment:
    def __init__(self, height, width):
        self.height = height
        self.width = width

    def observation_space(self):
        # categorical observations: one entity id per cell
        return Discrete(sys.maxsize, shape=(self.height, self.width))  # expect: JAX503
