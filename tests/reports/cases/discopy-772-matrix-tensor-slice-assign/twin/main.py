from catmat.backend import backend
from catmat.matrix import Matrix

with backend("numpy") as np:
    one = Matrix(np.ones((1, 1)), 1, 1)
    print(one.tensor(one).array)

with backend("jax") as np:
    one = Matrix(np.ones((1, 1)), 1, 1)
    print(one.tensor(one).array)
