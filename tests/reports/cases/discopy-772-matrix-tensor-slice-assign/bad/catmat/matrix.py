from catmat.backend import backend


class Matrix:
    def __init__(self, array, dom, cod):
        self.array, self.dom, self.cod = array, dom, cod

    @staticmethod
    def zero(dom, cod):
        with backend() as np:
            return Matrix(np.zeros((dom, cod)), dom, cod)

    def tensor(self, other):
        dom, cod = self.dom + other.dom, self.cod + other.cod
        array = Matrix.zero(dom, cod).array
        array[: self.dom, : self.cod] = self.array  # expect: JAX103
        array[self.dom :, self.cod :] = other.array  # expect: JAX103
        return Matrix(array, dom, cod)
