"""jaxtour: see what JAX does to your code."""

from jaxtour._devices import describe_devices
from jaxtour._diagram import Diagram
from jaxtour._render import RendererUnavailableError
from jaxtour._version import __version__
from jaxtour._wait import time_limit
from jaxtour.explorer import explore  # cheap: ipywidgets and JAX load on first call

__all__ = [
    "Diagram",
    "RendererUnavailableError",
    "__version__",
    "describe_devices",
    "explore",
    "time_limit",
]
