"""What the drawing benchmarks share: a first call, then the median of warm calls."""

from __future__ import annotations

import os
import statistics
from collections.abc import Callable

from jaxtour import _render


def first_and_warm(
    renderer: str, call: Callable[[], dict], repeat: int, keys: tuple[str, ...]
) -> tuple[dict, dict]:
    """Run `call` once, then `repeat` times, with `renderer` (embedded or dot).

    Returns the first run's figures, and the median warm figure of each of `keys`,
    named ``warm_<key>``, beside ``first_s`` (the first run's ``total_s``).
    """
    os.environ[_render.RENDERER_VARIABLE] = renderer
    first = call()
    warm = [call() for _ in range(repeat)]
    medians = {f"warm_{k}": statistics.median(w[k] for w in warm) for k in keys}
    return first, {"first_s": first["total_s"], **medians}
