"""The explorer: one ipywidgets panel to look at any function through every JAX lens.

`explore(f, *args)` is exported as `jaxtour.explore`. Importing this package is cheap:
ipywidgets and JAX are imported when a panel is built.
"""

from jaxtour.explorer._api import explore

__all__ = ["explore"]
