"""Each rule's documented `## Example` is flagged by that rule, and its `## Use instead` is not.

The doc blocks are snippets: they are linted after a prelude of the usual imports and the names the snippets
take as given (a jitted `train_step`, arrays `params`, `batch`, ...), so that what the doc shows is what the
rule sees. A rule whose example needs more context than that says so in its snippet.
"""

from __future__ import annotations

import re

import pytest

from jaxlint import lint_source
from jaxlint.rules import ALL_RULES, Rule

PRELUDE = """\
import functools
import time
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

params = batch = x = key = jnp.zeros(3)


@jax.jit
def train_step(params, batch):
    return params


@jax.jit
def loss_fn(params, batch):
    return jnp.sum(params)


def loss(params, x, y):
    return jnp.sum((params * x - y) ** 2)


loss_a = loss_b = loss_fn(params, batch)
"""


# Rules whose "Use instead" cannot follow the example in one module: it acts on module-wide state.
_ALONE_ONLY = {
    "JAX301": "the fix splits the same `key` that the example already consumed",
    "JAX501": "the fix enables x64 for the whole module, the example included",
    "JAX503": "the fix enables x64 for the whole module, the example included",
}


def python_blocks(doc: str, section: str) -> list[str]:
    """The ```python blocks of one `## section` of a rule's doc."""
    part = re.split(r"^## ", doc, flags=re.MULTILINE)
    body = next((p for p in part if p.startswith(section + "\n")), "")
    return re.findall(r"```python\n(.*?)```", body, flags=re.DOTALL)


def _codes(snippet: str, rule: type[Rule]) -> list[str]:
    source = PRELUDE + "\n\n" + snippet
    return [f.code for f in lint_source(source, "example.py", select=[rule.code])]


@pytest.mark.parametrize("rule", ALL_RULES, ids=lambda r: r.code)
def test_example_is_flagged(rule: type[Rule]) -> None:
    blocks = python_blocks(rule.doc, "Example")
    assert blocks, f"{rule.code}: no python block under ## Example"
    for block in blocks:
        assert rule.code in _codes(block, rule), f"{rule.code}: its ## Example is not flagged:\n{block}"


@pytest.mark.parametrize("rule", ALL_RULES, ids=lambda r: r.code)
def test_use_instead_is_clean(rule: type[Rule]) -> None:
    examples = "\n".join(python_blocks(rule.doc, "Example"))
    for block in python_blocks(rule.doc, "Use instead"):
        assert rule.code not in _codes(block, rule), f"{rule.code}: its ## Use instead is flagged:\n{block}"
        if rule.code in _ALONE_ONLY:
            continue
        # The fix may use what the example defined (`mlp`): after the example, it must add no finding.
        before = _codes(examples, rule).count(rule.code)
        after = _codes(examples + "\n\n" + block, rule).count(rule.code)
        assert after == before, f"{rule.code}: its ## Use instead is flagged after the example:\n{block}"
