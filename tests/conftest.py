import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
# Every rule fixture and example: the real code the equivalence tests of the speed shortcuts run over.
LINTED_SOURCES = sorted((FIXTURES / "rules").glob("*.py")) + sorted((ROOT / "examples").rglob("*.py"))


@pytest.fixture
def jaxlint_cmd():
    """The real command, run by this interpreter."""
    return [sys.executable, "-m", "jaxlint"]


@pytest.fixture
def clean_env():
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    return env
