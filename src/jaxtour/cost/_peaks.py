"""The device's roof, measured on the spot: peak matmul FLOP/s and memory bytes/s.

Two short JAX micro-benchmarks, the fastest of the runs that fit in about a second
each: a float32 matmul at JAX's default precision (what your float32 programs get: TF32
on recent NVIDIA GPUs, bfloat16 passes on TPU, true float32 on CPU), and `x + 1` in
place (its buffer donated) over an array far bigger than the caches. A fresh output
buffer per call would time the allocator and page faults, not memory. The result is
cached per device, in memory and in `peaks.json` under the cache folder
(`$JAXTOUR_CACHE`, else `$XDG_CACHE_HOME/jaxtour`, else `~/.cache/jaxtour`); a corrupt
file is measured anew.
"""

from __future__ import annotations

import json
import math
import os
import time
import warnings
from pathlib import Path
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from jaxtour import paths
from jaxtour._files import write_atomically
from jaxtour._number_words import si
from jaxtour._report import Report, Table


class Peaks(NamedTuple):
    """What one device can do at best: FLOP/s of a float32 matmul, bytes/s of a copy."""

    device: str
    flops_per_s: float
    bytes_per_s: float

    @property
    def device_name(self) -> str:
        """The device in words for a title: its kind ("NVIDIA H200", "TPU v5 lite"),
        or its platform where the kind only repeats it ("CPU" for `cpu:cpu`).

        Example:
            >>> Peaks("cpu:cpu", 1.0, 1.0).device_name
            'CPU'
            >>> Peaks("gpu:NVIDIA H200", 1.0, 1.0).device_name
            'NVIDIA H200'
        """
        platform, _, kind = self.device.partition(":")
        return kind if kind and kind.lower() != platform.lower() else platform.upper()

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

    def report(self) -> Report:
        """The two peaks and the ridge between them, as one `Report`."""
        row = [si(self.flops_per_s, "FLOP/s"), si(self.bytes_per_s, "B/s")]
        return Report(
            f"The roof of {self.device_name}, measured here",
            tables=[
                Table(
                    ["matmul (float32)", "memory (copy)", "ridge"],
                    [[*row, f"{self.ridge:.3g} FLOP/B"]],
                    align="rrr",
                )
            ],
        )

    # A NamedTuple takes no base class but itself: `Reported`'s three methods, by hand.
    def _repr_html_(self) -> str:
        return self.report().html()

    def __str__(self) -> str:
        return self.report().text()

    def save(self, path: str | os.PathLike) -> Path:
        """Write the peaks as a web page (.html), text (.txt) or Markdown (.md)."""
        return self.report().save(path, who="Peaks")


_MEMORY: dict[str, Peaks] = {}


def cache_dir() -> Path:
    """Where peaks are kept: $JAXTOUR_CACHE, $XDG_CACHE_HOME/jaxtour, ~/.cache."""
    if folder := os.environ.get("JAXTOUR_CACHE"):
        return Path(folder)
    return paths.cache_home() / "jaxtour"


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
    stored = {} if refresh else _read(cache_dir() / "peaks.json", warn=True)
    if key in stored:
        cached = _cached(stored[key], key)
        if cached is not None:
            _MEMORY[key] = cached
            return cached
        warnings.warn(  # a hand-edited or truncated entry: measured again
            f"device_peaks: the cached peaks for {key} in {cache_dir() / 'peaks.json'} "
            f"are not two positive finite numbers ({stored[key]!r}); measuring again.",
            stacklevel=2,
        )
    peaks = measure(device)
    _MEMORY[key] = peaks
    stored = _read(cache_dir() / "peaks.json")
    stored[key] = {"flops_per_s": peaks.flops_per_s, "bytes_per_s": peaks.bytes_per_s}
    try:
        write_atomically(cache_dir() / "peaks.json", json.dumps(stored).encode())
    except OSError as error:  # a read-only home: the figures stay in memory only
        warnings.warn(
            f"device_peaks could not write its cache ({error}); the peaks are kept "
            "for this session only. Set JAXTOUR_CACHE to a writable folder to keep "
            "them.",
            stacklevel=2,
        )
    return peaks


def _cached(entry: Any, key: str) -> Peaks | None:
    """A cache entry as `Peaks`, or None unless both figures are positive and finite."""
    try:
        flops, rate = float(entry["flops_per_s"]), float(entry["bytes_per_s"])
    except (KeyError, TypeError, ValueError):
        return None
    ok = all(math.isfinite(v) and v > 0 for v in (flops, rate))
    return Peaks(key, flops, rate) if ok else None


def _read(path: Path, warn: bool = False) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (FileNotFoundError, NotADirectoryError):  # none yet, or no folder for it
        return {}
    except (OSError, ValueError):  # corrupt: measured anew, then rewritten
        data = None
    if not isinstance(data, dict):
        if warn:
            warnings.warn(
                f"device_peaks: {path} is not a JSON object of cached peaks; "
                "measuring again and rewriting it.",
                stacklevel=3,
            )
        return {}
    return data


def best_seconds(fn: Any, *args: Any, repeats: int = 5, budget: float = 0.0) -> float:
    """The fastest of at least `repeats` timed calls (more while within `budget` s)."""
    jax.block_until_ready(fn(*args))
    best, spent, runs = float("inf"), 0.0, 0
    while runs < repeats or (spent < budget and runs < 50):
        start = time.perf_counter()
        jax.block_until_ready(fn(*args))
        elapsed = time.perf_counter() - start
        best, spent, runs = min(best, elapsed), spent + elapsed, runs + 1
    return best


def measure(device: jax.Device) -> Peaks:
    """Run the two micro-benchmarks on `device` (no cache)."""
    small = device.platform == "cpu"
    # on a CPU, short runs (~20 ms) and many of them: the fastest is the one no other
    # process interrupted, which a few long runs on a busy machine may never see
    n = 1024 if small else 8192
    elements = 256 * 2**20 // 4  # 256 MiB: beyond any CPU's L3 and any GPU's L2
    a = jax.device_put(jnp.ones((n, n), jnp.float32), device)
    matmul = jax.jit(lambda p, q: p @ q)
    flops = 2 * n**3 / best_seconds(matmul, a, a, repeats=3, budget=1.5)
    return Peaks(device_key(device), flops, _bandwidth(device, elements))


def _bandwidth(device: jax.Device, elements: int) -> float:
    """Bytes/s of `x + 1` written over its own buffer: each byte read once, written."""
    step = jax.jit(lambda v: v + 1, donate_argnums=0)
    state = [jax.device_put(jnp.zeros((elements,), jnp.float32), device)]

    def again() -> Any:
        state[0] = step(state[0])
        return state[0]

    with warnings.catch_warnings():  # a backend that cannot donate still gives a figure
        warnings.simplefilter("ignore")
        seconds = best_seconds(again, repeats=3, budget=1.0)
    return 2 * elements * 4 / seconds
