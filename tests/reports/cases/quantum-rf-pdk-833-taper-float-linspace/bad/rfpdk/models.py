import jax.numpy as jnp


def cpw_impedance(width, gap):
    ratio = width / (width + 2 * gap)
    return 30 * jnp.pi * (1 - ratio) / (1 + ratio) + 20.0


def taper_cross_section(wl=1.0, length=100.0, width1=10.0, width2=4.0, gap1=6.0, gap2=2.0, points=5):
    ws = jnp.linspace(width1, width2, points)
    gs = jnp.linspace(gap1, gap2, points)
    sections = []
    for i in range(points):
        sections.append((float(ws[i]), float(gs[i])))  # expect: JAX102
    z = jnp.array([cpw_impedance(w, g) for w, g in sections])
    gamma = (z[1:] - z[:-1]) / (z[1:] + z[:-1])
    s21 = jnp.prod(jnp.sqrt(1 - gamma**2)) * jnp.exp(-2j * jnp.pi * length / wl)
    return {("o1", "o2"): s21}


MODELS = {"taper_cross_section": taper_cross_section}
