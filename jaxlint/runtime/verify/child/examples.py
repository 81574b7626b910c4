"""The examples users declare in `[tool.jaxlint.verify.examples]`: call arguments as Python text."""

from __future__ import annotations

import dataclasses
import inspect
import re
from typing import Any

from .inputs import Arg, CallInputs, NoInputs, attribute_candidates
from .pinned_jax import api
from .resolve import CLASSMETHOD, METHOD, Target


class _Example:
    """One declared example. It is evaluated again for every attempt, so that keys it makes are made under
    the attempt's checking mode (typed keys for key-reuse checking, even from `jax.random.PRNGKey`)."""

    def __init__(self, expression: str, namespace: dict[str, Any], signature: inspect.Signature) -> None:
        self.expression = expression
        self.namespace = namespace
        self.signature = signature

    def evaluate(self) -> dict[str, Any]:
        args, kwargs = eval(f"__jaxlint_args__({self.expression})", self.namespace)
        return dict(self.signature.bind_partial(*args, **kwargs).arguments)


@dataclasses.dataclass(frozen=True)
class ExampleSpec:
    """One argument of a declared example: parameter `name`, or one item of its *args/**kwargs."""

    example: _Example
    name: str
    item: int | str | None = None

    def describe(self) -> str:
        return self.name

    def build(self, traced: bool) -> Any:
        value = self.example.evaluate()[self.name]
        return value if self.item is None else value[self.item]


def example_calls(target: Target, expressions: list[str], namespace: dict[str, Any]) -> list[CallInputs]:
    """The user's declared examples: each a string of call arguments, evaluated with jax/jnp/np at hand.
    A method's example may pass `self=...` by keyword; otherwise `self` is built as in the search."""
    calls = []
    params = target.parameters
    names = [p.name for p in params]
    bound = params[0].name if target.binding in (METHOD, CLASSMETHOD) and params else None
    for expression in expressions:
        with_self = bool(bound) and re.search(rf"(^|[,(\s]){bound}\s*=(?!=)", expression) is not None
        signature = inspect.Signature([p for p in params if with_self or p.name != bound])
        example = _Example(expression, namespace, signature)
        try:
            arguments = example.evaluate()
        except Exception as error:
            raise NoInputs(f"example '{expression}' failed: {type(error).__name__}: {error}") from None
        positional: list[Arg] = []
        keyword: dict[str, Arg] = {}
        instance = ExampleSpec(example, bound) if with_self and bound else None
        for name, value in arguments.items():
            if name == bound:
                continue
            param = signature.parameters[name]
            static = target.is_static(names.index(name), name)
            if param.kind == param.VAR_POSITIONAL:
                positional += [
                    Arg(ExampleSpec(example, name, i), not static and _traceable(v, target))
                    for i, v in enumerate(value)
                ]
            elif param.kind == param.VAR_KEYWORD:
                keyword.update(
                    {k: Arg(ExampleSpec(example, name, k), _traceable(v, target)) for k, v in value.items()}
                )
            elif param.kind == param.POSITIONAL_ONLY:
                positional.append(Arg(ExampleSpec(example, name), not static and _traceable(value, target)))
            else:
                keyword[name] = Arg(ExampleSpec(example, name), not static and _traceable(value, target))
        attributes = {} if instance else {n: c[0] for n, c in attribute_candidates(target, bound).items()}
        text = f"example: {expression}"
        calls.append(
            CallInputs(positional, keyword, attributes, text, declared=True, real=True, instance=instance)
        )
    return calls


def _traceable(value: Any, target: Target) -> bool:
    """Under the user's jax.jit every non-static argument is traced; for a plain function, only arguments
    that hold arrays are (a Python number stays the concrete value the caller wrote)."""
    if target.under_jit:
        return True
    import jax

    leaves = jax.tree_util.tree_leaves(value)
    return bool(leaves) and any(
        isinstance(leaf, jax.ShapeDtypeStruct) or hasattr(leaf, "shape") and hasattr(leaf, "dtype")
        for leaf in leaves
    )


def example_namespace(module_namespace: dict[str, Any]) -> dict[str, Any]:
    import jax
    import jax.numpy as jnp
    import numpy as np

    namespace = dict(module_namespace)
    namespace.update(
        jax=jax,
        jnp=jnp,
        np=np,
        lax=jax.lax,
        sds=api().ShapeDtypeStruct,  # JAX's own, whatever the module put in its place
        __jaxlint_args__=lambda *args, **kwargs: (args, kwargs),
    )
    return namespace
