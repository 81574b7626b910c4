"""JAX302 legacy-prng-key (opt-in)."""

from __future__ import annotations

import libcst as cst

from ..analysis import KEY_RESULTS, SEEDED_KEY_MAKERS, RuleContext
from ..fix import UNSAFE, replace
from .base import Rule
from .edits import reference_to

# The seeded key makers by the kind of key they make: a legacy raw one and its typed twin.
_LEGACY = next(name for name in sorted(SEEDED_KEY_MAKERS) if KEY_RESULTS[name] == "uint32")
_TYPED = next(name for name in sorted(SEEDED_KEY_MAKERS) if KEY_RESULTS[name] == "key")
_MODULE, _, _TYPED_ATTR = _TYPED.rpartition(".")


class LegacyPrngKey(Rule):
    code = "JAX302"
    name = "legacy-prng-key"
    summary = (
        "`jax.random.PRNGKey(...)` makes a raw uint32 key that JAX's key-reuse checker cannot see (opt-in)"
    )
    fix_safety = UNSAFE
    default_enabled = False
    doc = """
## What it does
Flags calls of `jax.random.PRNGKey(seed)`, which make a legacy raw key (a `uint32[2]` array), and suggests
`jax.random.key(seed)`, which makes a typed key. Off by default: enable it with `select = ["JAX302"]`.

## Why is this bad
Only typed keys are tracked by `jax.config.update("jax_debug_key_reuse", True)`: with legacy keys a reused
key silently gives the same numbers again (see JAX301). Typed keys also carry their PRNG implementation, so
they cannot be mixed up with ordinary integer arrays, and `jax_legacy_prng_key="error"` rejects raw keys.

## Example
```python
key = jax.random.PRNGKey(0)
```

## Use instead
```python
key = jax.random.key(0)
```

## Fix safety
The fix replaces `PRNGKey` by `key` (through the module's own import of `jax` or `jax.random`). It is
**unsafe**: the key's shape changes from `(2,)` to `()` and its dtype from `uint32` to a key dtype, so code that
indexes, reshapes, concatenates, serializes or compares raw keys (or passes them to NumPy) must be adapted;
`jax.random.key_data(key)` gives the raw data when it is really needed.

## References
- https://docs.jax.dev/en/latest/jep/9263-typed-keys.html
- https://docs.jax.dev/en/latest/_autosummary/jax.random.key.html
- https://docs.jax.dev/en/latest/_autosummary/jax.experimental.key_reuse.html
"""

    def visit_Call(self, node: cst.Call, ctx: RuleContext) -> None:
        if ctx.qualname(node.func) != _LEGACY:
            return
        ctx.report(
            self,
            node,
            "Legacy raw key from jax.random.PRNGKey: use jax.random.key(...) for a typed key, which "
            "jax_debug_key_reuse can check for reuse (the key's shape and dtype change)",
            fix=self._fix(node, ctx),
        )

    @staticmethod
    def _fix(node: cst.Call, ctx: RuleContext):
        func = node.func
        if isinstance(func, cst.Attribute) and ctx.qualname(func.value) == _MODULE:
            new_func: cst.BaseExpression | None = func.with_changes(attr=cst.Name(_TYPED_ATTR))
        else:
            new_func = reference_to(_TYPED, ctx)
        if new_func is None:
            return None
        return replace(node, node.with_changes(func=new_func), UNSAFE)
