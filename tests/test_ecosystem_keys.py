"""JAX301 through the library table across modules and in notebooks, through the real `jaxlint` command: keys
consumed by equinox layers (`key=`), `nnx.Rngs(key)`, distrax `sample(seed=)`, a haiku transformation's
`apply(params, rng, x)` and a key an object keeps as built (`self.key`), each in a helper of another module
(its export carries what it consumes) and in notebook cells; the twins that split their keys stay silent. A kept
key drawn again by a second call of a project method is reported at the draw, in the method's module, naming
the caller's file and line (`CallFact.repeated`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import jaxlint
from tests.conftest import notebook

LAYERS = """
import distrax
import equinox as eqx
import haiku as hk
import jax
from flax import nnx


def make_layer(key):
    return eqx.nn.Linear(2, 2, key=key)


def make_rngs(key):
    return nnx.Rngs(key)


def draw(key):
    return distrax.Normal(0.0, 1.0).sample(seed=key)


def forward(x):
    return hk.dropout(hk.next_rng_key(), 0.5, x)


net = hk.transform(forward)


def predict(params, rng, x):
    return net.apply(params, rng, x)


class Walker:
    def __init__(self, key):
        self.key = key

    def step(self, x):
        return x + jax.random.normal(self.key, x.shape)
"""

TRAIN = """
import jax

from layers import Walker, draw, make_layer, make_rngs, predict


def build(key):
    layer = make_layer(key)
    return layer, jax.random.normal(key)


def build_rngs(key):
    return make_rngs(key), make_rngs(key)


def draws(key):
    return draw(key) + draw(key)


def train(params, batches, rng):
    for batch in batches:
        out = predict(params, rng, batch)
    return out


def walk(key, x):
    walker = Walker(key)
    return walker.step(walker.step(x))
"""

TRAIN_SPLIT = """
import jax

from layers import Walker, draw, make_layer, make_rngs, predict


def build(key):
    key, sub = jax.random.split(key)
    return make_layer(sub), jax.random.normal(key)


def build_rngs(key):
    k1, k2 = jax.random.split(key)
    return make_rngs(k1), make_rngs(k2)


def draws(key):
    k1, k2 = jax.random.split(key)
    return draw(k1) + draw(k2)


def train(params, batches, rng):
    for batch in batches:
        rng, sub = jax.random.split(rng)
        out = predict(params, sub, batch)
    return out


def walk(key, x):
    k1, k2 = jax.random.split(key)
    return Walker(k1).step(Walker(k2).step(x))
"""


def run(root: Path, *paths: str) -> list[tuple[str, int, int | None]]:
    return sorted((Path(f["path"]).name, f["line"], f.get("cell")) for f in findings(root, *paths))


def findings(root: Path, *paths: str) -> list[dict]:
    env = {**os.environ, "PYTHONPATH": str(Path(jaxlint.__file__).resolve().parent.parent)}
    done = subprocess.run(
        [sys.executable, "-m", "jaxlint", "--no-cache", "--select", "JAX301", "--format", "json", *paths],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")


def test_library_keys_across_modules(tmp_path: Path) -> None:
    write(tmp_path, {"layers.py": LAYERS, "train.py": TRAIN})
    assert run(tmp_path, ".") == [
        ("layers.py", 36, None),  # walker.step twice (train.py:27): self.key is the key it was built with
        ("train.py", 8, None),  # make_layer(key) (eqx.nn.Linear), then jax.random.normal(key)
        ("train.py", 12, None),  # make_rngs(key) twice (nnx.Rngs)
        ("train.py", 16, None),  # draw(key) twice (distrax sample(seed=))
        ("train.py", 21, None),  # predict(params, rng, ...) (haiku apply) on every iteration
    ]


def test_held_key_is_reported_at_the_draw_naming_the_caller(tmp_path: Path) -> None:
    """The finding for `walker.step` called twice in train.py is at the draw in layers.py (linted alone: the
    project's other modules give it the fact), and names train.py's line; a loop of calls in a package module
    is named by its file and the loop's line."""
    loop = """
        from layers import Walker


        def walk_all(key, xs):
            walker = Walker(key)
            for x in xs:
                x = walker.step(x)
            return x
        """
    write(tmp_path, {"layers.py": LAYERS, "train.py": TRAIN})
    held = findings(tmp_path, "layers.py")
    assert [(f["line"], "kept by the object as built" in f["message"]) for f in held] == [(36, True)]
    assert "called repeatedly at train.py:27" in held[0]["message"]
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    write(tmp_path, {"train.py": TRAIN_SPLIT, "pkg/loops.py": loop})
    held = findings(tmp_path, "layers.py")
    assert [f["line"] for f in held] == [36]
    assert "called repeatedly at pkg/loops.py:6" in held[0]["message"]
    (tmp_path / "pkg" / "loops.py").unlink()
    assert run(tmp_path, "layers.py") == []


def test_library_keys_across_modules_split(tmp_path: Path) -> None:
    write(tmp_path, {"layers.py": LAYERS, "train.py": TRAIN_SPLIT})
    assert run(tmp_path, ".") == []


def test_library_keys_in_a_notebook(tmp_path: Path) -> None:
    imports = """
        import distrax
        import equinox as eqx
        import jax
        from flax import nnx
        """
    reuse = """
        key = jax.random.key(0)
        encoder = nnx.Linear(2, 2, rngs=nnx.Rngs(key))
        decoder = nnx.Linear(2, 2, rngs=nnx.Rngs(key))
        layer = eqx.nn.Linear(2, 2, key=key)
        """
    draws = """
        normal = distrax.Normal(0.0, 1.0)
        a = normal.sample(seed=key)
        """
    (tmp_path / "explore.ipynb").write_text(notebook(imports, reuse, draws), encoding="utf-8")
    assert run(tmp_path, "explore.ipynb") == [
        ("explore.ipynb", 3, 3),  # cell 3: normal.sample(seed=key) after the Rngs and the layer
        ("explore.ipynb", 4, 2),  # cell 2: the second nnx.Rngs(key)
        ("explore.ipynb", 5, 2),  # cell 2: eqx.nn.Linear(..., key=key)
    ]


def test_library_keys_in_a_notebook_split(tmp_path: Path) -> None:
    cells = (
        """
        import distrax
        import equinox as eqx
        import jax
        from flax import nnx
        """,
        """
        k1, k2, k3, k4 = jax.random.split(jax.random.key(0), 4)
        encoder = nnx.Linear(2, 2, rngs=nnx.Rngs(k1))
        decoder = nnx.Linear(2, 2, rngs=nnx.Rngs(k2))
        layer = eqx.nn.Linear(2, 2, key=k3)
        """,
        """
        normal = distrax.Normal(0.0, 1.0)
        a = normal.sample(seed=k4)
        """,
    )
    (tmp_path / "explore.ipynb").write_text(notebook(*cells), encoding="utf-8")
    assert run(tmp_path, "explore.ipynb") == []


LIFT = """
import jax
import jax.numpy as jnp


class Normal:
    def __init__(self, loc, scale):
        self.loc = loc
        self.scale = scale

    def sample(self, key, n):
        return self.loc + self.scale * jax.random.normal(key, (n,))


class Lifted:
    def __init__(self, fn, seed):
        self.fn = fn
        self._seed = seed

    def __call__(self, dist):
        key = jax.random.key(self._seed)
        return self.fn(dist.sample(key, 16))
"""


def test_key_from_a_kept_seed_through_a_parameter_the_caller_shows(tmp_path: Path) -> None:
    """`jax.random.key(self._seed)` of a seed only construction sets is one key per call; `dist.sample(key, n)`
    consumes it where the only caller (another module) passes a `Normal`: the finding is at that draw, naming
    the caller's second call. A caller passing an object of unknown class, or calling once, leaves it silent."""
    caller = """
        from lift import Lifted, Normal

        twice = Lifted(lambda x: 2 * x, seed=0)
        x = Normal(0.0, 1.0)
        a = twice(x)
        b = twice(x)
        """
    write(tmp_path, {"lift.py": LIFT, "main.py": caller})
    found = findings(tmp_path, ".")
    assert [(Path(f["path"]).name, f["line"]) for f in found] == [("lift.py", 21)]
    assert "made from 'self._seed'" in found[0]["message"] and "main.py:6" in found[0]["message"]
    unknown = caller.replace("x = Normal(0.0, 1.0)", "x = make_normal()").replace(
        "import Lifted, Normal", "import Lifted, Normal\nfrom factory import make_normal"
    )
    write(tmp_path, {"main.py": unknown})
    assert run(tmp_path, ".") == []
    write(tmp_path, {"main.py": caller.replace("b = twice(x)", "b = Lifted(abs, seed=1)(x)")})
    assert run(tmp_path, ".") == []


def test_held_key_of_a_class_re_exported_by_a_package(tmp_path: Path) -> None:
    """`from pkg import Walker` of a class that `pkg/__init__.py` re-exports: the repeated call's fact reaches the
    module defining the method (`ProjectIndex.defined` follows the class's re-export), reported at its draw."""
    (tmp_path / "pkg").mkdir()
    write(
        tmp_path,
        {
            "pkg/__init__.py": "from .walker import Walker\n",
            "pkg/walker.py": LAYERS,
            "main.py": """
                import jax
                from pkg import Walker

                walker = Walker(jax.random.key(0))
                x = walker.step(walker.step(jax.numpy.ones(2)))
                """,
        },
    )
    found = findings(tmp_path, ".")
    assert [(f["path"].replace("\\", "/").rsplit("/", 2)[-2:], f["line"]) for f in found] == [
        (["pkg", "walker.py"], 36)
    ]
    assert "called repeatedly at main.py:5" in found[0]["message"]


SAMPLER = """
import equinox as eqx
import jax


class Sampler(eqx.Module):
    key: jax.Array

    def next_batch(self):
        new_key, sub = jax.random.split(self.key)
        new = eqx.tree_at(lambda m: m.key, self, new_key)
        return new, jax.random.uniform(sub, (4,))

    def get_batch(self):
        return self.next_batch()
"""


def test_held_key_handed_back_is_the_callers_reuse(tmp_path: Path) -> None:
    """A method that splits the key its object keeps and returns the object with the advanced key (a functional
    update, `eqx.tree_at`) is right: the caller that drops the returned object and calls again on the old one
    reuses the key, reported at its second call in its own module, not at the split. Calling the returned
    object again is clean."""
    caller = """
        import jax
        from data import Sampler

        sampler = Sampler(jax.random.key(0))
        _, first = sampler.get_batch()
        _, second = sampler.get_batch()
        """
    write(tmp_path, {"data.py": SAMPLER, "main.py": caller})
    found = findings(tmp_path, ".")
    assert [(Path(f["path"]).name, f["line"]) for f in found] == [("main.py", 6)]
    assert "sampler.key" in found[0]["message"]
    kept = caller.replace("_, first", "sampler, first").replace("_, second", "sampler, second")
    write(tmp_path, {"main.py": kept})
    assert run(tmp_path, ".") == []
