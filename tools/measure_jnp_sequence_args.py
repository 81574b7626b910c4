"""Measure which `jax.numpy` functions reject Python sequences, for JAX502 (python-sequence-input).

Run by hand when JAX changes, with jax installed, and commit the output:

    python tools/measure_jnp_sequence_args.py > jaxlint/analysis/semantics/data/jnp_sequence_args.txt.new

then keep the header comment of `jaxlint/analysis/semantics/data/jnp_sequence_args.txt` (update the JAX version in it).

It calls every public function of `jax.numpy`, `jax.numpy.linalg` and `jax.numpy.fft` with a Python list at
each positional slot (a list of arrays, a list of floats, and a nested list), the other slots filled with small
arrays or scalars. A slot is `rejects` when a list of arrays or floats raises `TypeError: <name> requires
ndarray or scalar arguments, got <class 'list'> at position N`; `nested` (`~`) when a flat list is accepted
(a sequence of arrays, as in `jnp.stack`) but a list of lists raises the same error.
"""

from __future__ import annotations


def measure() -> str:
    import inspect
    import sys
    import warnings

    import jax
    import jax.numpy as jnp

    warnings.simplefilter("ignore")
    message = "requires ndarray or scalar arguments"
    variants = {
        "arrays": lambda: [jnp.ones((2, 2)), jnp.ones((2, 2))],
        "scalars": lambda: [1.0, 2.0],
        "nested": lambda: [[1.0, 2.0], [3.0, 4.0]],
    }
    fillers = (lambda: jnp.ones((2, 2)), lambda: jnp.ones((2,)), lambda: 1, lambda: 0.5)

    def outcome(function, count: int, position: int, make) -> str:
        for filler in fillers:
            args = [filler() for _ in range(count)]
            args[position] = make()
            try:
                function(*args)
                return "ok"
            except TypeError as error:
                if message in str(error):
                    return "reject"
            except Exception:  # noqa: BLE001 - any other failure says nothing about sequences
                pass
        return "other"

    lines = []
    for namespace, prefix in ((jnp, ""), (jnp.linalg, "linalg."), (jnp.fft, "fft.")):
        for name in sorted(dir(namespace)):
            function = getattr(namespace, name)
            if name.startswith("_") or inspect.isclass(function) or inspect.ismodule(function):
                continue
            if not callable(function):
                continue
            try:
                params = list(inspect.signature(function).parameters.values())
            except (TypeError, ValueError):
                params = []
            positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
            required = sum(1 for p in positional if p.default is p.empty)
            nin = getattr(function, "nin", None)
            star = any(p.kind == p.VAR_POSITIONAL for p in params)
            slots_count = nin if isinstance(nin, int) else (3 if star and not positional else len(positional))
            slots = []
            for position in range(max(slots_count, 1)):
                count = max(required, position + 1, nin or 0)
                found = {key: outcome(function, count, position, make) for key, make in variants.items()}
                param = positional[position].name if position < len(positional) and nin is None else ""
                if "reject" in (found["arrays"], found["scalars"]):
                    slots.append(f"{position}:{param}" if param else f"{position}")
                elif found["nested"] == "reject" and "ok" in (found["arrays"], found["scalars"]):
                    slots.append(f"~{position}:{param}" if param else f"~{position}")
            if star and not positional and slots == ["0", "1", "2"]:
                slots = ["*"]
            if slots:
                lines.append(" ".join([prefix + name, *slots]))
    print(f"# jax {jax.__version__}", file=sys.stderr)
    return "\n".join(lines)


if __name__ == "__main__":
    print(measure())
