"""The pytest entry point's old path; the plugin lives in jaxlint.runtime.recompiles.pytest_plugin."""

from jaxlint.runtime.recompiles.pytest_plugin import *  # noqa: F403
from jaxlint.runtime.recompiles.pytest_plugin import pytest_addoption, pytest_configure  # noqa: F401
