"""The package version: a leaf, so that every module can take it without importing the package's API."""

__version__ = "0.1.0"
