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
        with backend() as np:
            top = np.concatenate([self.array, np.zeros((self.dom, other.cod))], axis=1)
            bottom = np.concatenate([np.zeros((other.dom, self.cod)), other.array], axis=1)
            array = np.concatenate([top, bottom], axis=0)
        return Matrix(array, dom, cod)
