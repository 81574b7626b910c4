import numpy as np
from tnet import TensorNetwork

net = TensorNetwork(backend="jax", dtype=np.float64)  # expect: JAX501
node = net.add_node(np.random.rand(2, 3))
if node.dtype != np.float64:
    print(f"OBSERVED: a float64 node was stored as {node.dtype}")
