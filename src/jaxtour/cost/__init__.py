"""The cost lens: FLOPs, bytes, rooflines and the memory of `grad`, on your own device.

`cost_table(f)(*args)` counts each equation and compiled op beside XLA's own
`cost_analysis()`; `device_peaks()` measures the device's matmul rate and memory
bandwidth (cached); `draw_roofline(f)(*args)` places the program on that roof;
`fusion_traffic(f)(*args)` puts a number on what fusion saves; `grad_memory(f)(*args)`
shows what `jax.checkpoint` policies trade; `profile(f)(*args)` measures where the
time went, op by compiled op, and maps each op back to your lines.
"""

from jaxtour._number_words import NOT_COUNTED
from jaxtour._plot import Plot
from jaxtour.cost._fusion import FusionTraffic, fusion_traffic
from jaxtour.cost._ledger import CostTable, Row
from jaxtour.cost._memory import POLICIES, GradMemory, Policy, grad_memory
from jaxtour.cost._peaks import Peaks, cache_dir, device_peaks
from jaxtour.cost._profile import OpTime, Profile, profile
from jaxtour.cost._roofline import Point, Roofline, draw_roofline
from jaxtour.cost._table import cost_table

__all__ = [
    "NOT_COUNTED",
    "POLICIES",
    "CostTable",
    "FusionTraffic",
    "GradMemory",
    "OpTime",
    "Peaks",
    "Plot",
    "Point",
    "Policy",
    "Profile",
    "Roofline",
    "Row",
    "cache_dir",
    "cost_table",
    "device_peaks",
    "draw_roofline",
    "fusion_traffic",
    "grad_memory",
    "profile",
]
