"""Facts that cross module boundaries: which project functions other modules call, and with what.

While a module is walked, calls to functions of *other* project modules are recorded as `CallFact`s (its
summary): calls from traced code with traced arguments, and calls from anywhere with Python scalar literals.
The file driver (`lint.py`) names the project's modules (`ProjectIndex`: the linted paths and their package
roots), turns every module's summary into the facts each module receives (`ProjectIndex.incoming`), and lints
again the modules whose incoming facts changed, until nothing changes. The walker of a receiving module applies
them as it applies its own call sites (`flow.py`): a helper called from traced code is traced; a Python scalar
passed to a non-static parameter of a jitted function is a traced scalar there.

Everything here is small frozen data: summaries travel between worker processes and into the findings cache.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable, Mapping

# A per-argument fact beside values.py's flags: the argument is a Python bool/int/float literal (or a name
# bound to one). Above every flag values.py defines.
LITERAL = 1 << 12

# Rounds of "lint again the modules whose incoming facts changed": each round carries facts one call deeper.
MAX_ROUNDS = 4


@dataclasses.dataclass(frozen=True, order=True)
class CallFact:
    """One call of another module's function, as the caller sees it."""

    target: str  # the callee's dotted name as the caller's imports resolve it ("model.dropout")
    kind: int  # the caller's transformation kind (transforms.NONE outside traced code)
    context: str  # the caller's context, for messages ("jax.jit-compiled 'step'")
    positional: tuple[int, ...]  # per positional argument up to any `*args`: value flags, or LITERAL
    keywords: tuple[tuple[str, int], ...] = ()

    def to_json(self) -> list:
        return [self.target, self.kind, self.context, list(self.positional), [list(k) for k in self.keywords]]

    @staticmethod
    def from_json(row: object) -> CallFact | None:
        """The fact a cache entry holds, or None when the row is not what `to_json` writes."""
        if not isinstance(row, list) or len(row) != 5:
            return None
        target, kind, context, positional, keywords = row
        if not (
            isinstance(target, str)
            and isinstance(kind, int)
            and isinstance(context, str)
            and isinstance(positional, list)
            and all(type(p) is int for p in positional)
            and isinstance(keywords, list)
            and all(
                isinstance(k, list) and len(k) == 2 and isinstance(k[0], str) and type(k[1]) is int
                for k in keywords
            )
        ):
            return None
        return CallFact(target, kind, context, tuple(positional), tuple((k, v) for k, v in keywords))


# What one module receives: its top-level function name -> the facts other modules give it, sorted.
Incoming = Mapping[str, tuple[CallFact, ...]]


# Packages that are never the linted project: calls into them are not recorded.
_LIBRARIES = frozenset(
    "builtins jax jaxlib numpy scipy flax equinox optax chex haiku jaxtyping orbax einops torch tensorflow "
    "functools itertools collections dataclasses typing math os sys time random re json logging abc".split()
)


class ModuleFacts:
    """The project as one module's walk sees it: what it receives, which calls to record, and its summary.

    The summary records calls into any imported module but the libraries above: which modules belong to the
    project is the driver's business, so a module's summary (and its cache entry) does not depend on it."""

    def __init__(self, incoming: Incoming | None = None) -> None:
        self.incoming: Incoming = incoming or {}
        self.outgoing: set[CallFact] = set()

    @staticmethod
    def records(qualname: str | None) -> bool:
        return qualname is not None and "." in qualname and qualname.partition(".")[0] not in _LIBRARIES

    def summary(self) -> tuple[CallFact, ...]:
        return tuple(sorted(self.outgoing))


def incoming_key(incoming: Incoming) -> str:
    """A stable text of the facts a module was linted with (for the findings cache key)."""
    return repr(sorted((name, facts) for name, facts in incoming.items())) if incoming else ""


def module_name(path: str) -> str | None:
    """`pkg/sub/mod.py` -> "pkg.sub.mod" when `pkg` and `sub` hold `__init__.py` (the package root is the
    first folder up without one); a lone `train.py` is "train". None for notebooks and non-identifiers."""
    if not path.endswith(".py"):
        return None
    folder, file = os.path.split(os.path.abspath(path))
    parts = [file[:-3]]
    while os.path.isfile(os.path.join(folder, "__init__.py")):
        folder, package = os.path.split(folder)
        if not package:
            break
        parts.append(package)
    if parts[0] == "__init__":
        parts.pop(0)
    if not parts or not all(p.isidentifier() for p in parts):
        return None
    return ".".join(reversed(parts))


class ProjectIndex:
    """The linted modules by dotted name, and the facts their summaries give each other."""

    def __init__(self, paths: Iterable[str]) -> None:
        self.modules: dict[str, str] = {}  # dotted name -> path
        self.names: dict[str, str] = {}  # path -> dotted name
        ambiguous: set[str] = set()
        for path in paths:
            name = module_name(path)
            if name is None:
                continue
            if name in self.modules:
                ambiguous.add(name)  # two roots give one name: which one an import means is unknown
            self.modules[name] = path
            self.names[path] = name
        for name in ambiguous:
            self.names.pop(self.modules.pop(name), None)
        self.names = {path: name for path, name in self.names.items() if name in self.modules}
        self.heads = frozenset(name.partition(".")[0] for name in self.modules)

    def resolve(self, target: str) -> tuple[str, str] | None:
        """ "pkg.model.dropout" -> (path of pkg/model.py, "dropout"): a top-level function of a project module."""
        module, _, function = target.rpartition(".")
        if module in self.modules and function:
            return self.modules[module], function
        return None

    def incoming(
        self, summaries: Mapping[str, Iterable[CallFact]]
    ) -> dict[str, dict[str, tuple[CallFact, ...]]]:
        """path -> function name -> the facts the other modules' summaries give it."""
        found: dict[str, dict[str, set[CallFact]]] = {}
        for caller, facts in summaries.items():
            origin = self.names.get(caller, os.path.basename(caller))
            for fact in facts:
                resolved = self.resolve(fact.target)
                if resolved is None or resolved[0] == caller:
                    continue
                path, function = resolved
                fact = dataclasses.replace(fact, target=function, context=f"{fact.context} in {origin}")
                found.setdefault(path, {}).setdefault(function, set()).add(fact)
        return {
            path: {name: tuple(sorted(facts)) for name, facts in sorted(functions.items())}
            for path, functions in found.items()
        }
