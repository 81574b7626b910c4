"""Moved to `jaxlint.syntax`; kept so branches still importing it keep working until they are merged."""

from ..syntax import children, walk

__all__ = ["children", "walk"]
