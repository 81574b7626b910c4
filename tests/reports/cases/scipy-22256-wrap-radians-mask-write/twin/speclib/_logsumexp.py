from speclib._array_api import array_namespace


def wrap_radians(x, xp=None):
    xp = array_namespace(x) if xp is None else xp
    # Wrap radians to (-pi, pi]
    wrapped = -((-x + xp.pi) % (2 * xp.pi) - xp.pi)
    # keep the relative precision of angles that need no wrapping
    no_wrap = xp.abs(x) < xp.pi
    return xp.where(no_wrap, x, wrapped)
