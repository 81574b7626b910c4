from tnet.network import TensorNetwork

__all__ = ["TensorNetwork"]
