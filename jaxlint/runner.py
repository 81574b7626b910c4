"""Renamed `lint.py`; this re-export stays until the callers are updated."""

from .lint import lint_file, lint_files, lint_source_for, settings_for  # noqa: F401
