"""The device's roof, measured on the spot: peak matmul FLOP/s and memory bytes/s.

Two short JAX micro-benchmarks (a float32 matmul; `x + 1` over an array far bigger than
the caches), the best of a few runs each. The result is cached per device, in memory
and in `peaks.json` under the cache folder (`$JAXTOUR_CACHE`, else
`$XDG_CACHE_HOME/jaxtour`, else `~/.cache/jaxtour`); a corrupt file is measured anew.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from jaxtour._files import write_atomically


class Peaks(NamedTuple):
    """What one device can do at best: FLOP/s of a float32 matmul, bytes/s of a copy."""

    device: str
    flops_per_s: float
    bytes_per_s: float

    @property
    def ridge(self) -> float:
        """The intensity (FLOP/byte) where the roof turns flat; memory bounds below."""
        return self.flops_per_s / self.bytes_per_s

    def attainable(self, intensity: float) -> float:
        """The roofline: min(peak FLOP/s, bandwidth x intensity)."""
        return min(self.flops_per_s, self.bytes_per_s * intensity)

    def __repr__(self) -> str:
        return (
            f"Peaks({self.device!r}: {self.flops_per_s / 1e9:.3g} GFLOP/s, "
            f"{self.bytes_per_s / 1e9:.3g} GB/s, ridge {self.ridge:.3g} FLOP/B)"
        )


_MEMORY: dict[str, Peaks] = {}


def cache_dir() -> Path:
    """Where peaks are kept: $JAXTOUR_CACHE, $XDG_CACHE_HOME/jaxtour, ~/.cache."""
    if folder := os.environ.get("JAXTOUR_CACHE"):
        return Path(folder)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "jaxtour"


def device_key(device: jax.Device) -> str:
    """`cpu:cpu`, `gpu:NVIDIA H100 80GB HBM3`: one cache entry per kind of device."""
    return f"{device.platform}:{device.device_kind}"


def device_peaks(device: jax.Device | None = None, *, refresh: bool = False) -> Peaks:
    """The measured roof of `device` (default: JAX's first), cached once measured.

    Args:
        device: a `jax.Device`; None for `jax.devices()[0]`.
        refresh: measure again even when a cached figure exists.

    Returns:
        `Peaks`: matmul FLOP/s and memory bytes/s, as measured here (a few seconds on a
        CPU the first time; instant from the cache).

    Raises:
        TypeError: `device` is not a `jax.Device`.
    """
    device = device if device is not None else jax.devices()[0]
    if not isinstance(device, jax.Device):
        raise TypeError(
            f"device_peaks needs a jax.Device (e.g. jax.devices()[0]) or "
            f"None; got {type(device).__name__}."
        )
    key = device_key(device)
    if not refresh and key in _MEMORY:
        return _MEMORY[key]
    stored = {} if refresh else _read(cache_dir() / "peaks.json")
    if isinstance(stored.get(key), dict):
        try:
            _MEMORY[key] = Peaks(
                key,
                float(stored[key]["flops_per_s"]),
                float(stored[key]["bytes_per_s"]),
            )
            return _MEMORY[key]
        except (KeyError, TypeError, ValueError):
            pass  # a hand-edited or truncated entry: measure again
    peaks = measure(device)
    _MEMORY[key] = peaks
    stored = _read(cache_dir() / "peaks.json")
    stored[key] = {"flops_per_s": peaks.flops_per_s, "bytes_per_s": peaks.bytes_per_s}
    write_atomically(cache_dir() / "peaks.json", json.dumps(stored, indent=1).encode())
    return peaks


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):  # missing or corrupt: measured anew, then rewritten
        return {}
    return data if isinstance(data, dict) else {}


def best_seconds(fn: Any, *args: Any, repeats: int = 5) -> float:
    """The fastest of `repeats` timed calls, after one warm-up call."""
    jax.block_until_ready(fn(*args))
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(fn(*args))
        best = min(best, time.perf_counter() - start)
    return best


def measure(device: jax.Device) -> Peaks:
    """Run the two micro-benchmarks on `device` (no cache)."""
    small = device.platform == "cpu"
    n = 1024 if small else 8192
    elements = (32 if small else 512) * 2**20 // 4  # 32 MiB on a CPU, 512 MiB otherwise
    a = jax.device_put(jnp.ones((n, n), jnp.float32), device)
    x = jax.device_put(jnp.ones((elements,), jnp.float32), device)
    with jax.default_matmul_precision("highest"):  # float32, not TF32 / bfloat16 passes
        matmul = jax.jit(lambda p, q: p @ q)
        flops = 2 * n**3 / best_seconds(matmul, a, a, repeats=10)
    copy = jax.jit(lambda v: v + 1)  # reads and writes every byte once
    bandwidth = 2 * x.nbytes / best_seconds(copy, x, repeats=10)
    return Peaks(device_key(device), flops, bandwidth)
