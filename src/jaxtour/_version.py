"""The kit's version: one place, read by `jaxtour --version`, `doctor`, the slide index and
setuptools (pyproject.toml), without importing the package's public face."""

__version__ = "0.1.0"
