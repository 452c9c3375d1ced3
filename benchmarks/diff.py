"""`diff(f, g)`, warm, beside what JAX alone takes to trace, lower and compile the two.

Run: .venv/bin/python benchmarks/diff.py [--repeat 10]
The two programs are a two-layer MLP's loss (784-512-10, batch 128) in float32 and the
same loss with its matmuls cast to bfloat16. Side by side:
- cold (after `jax.clear_caches()`, median of 3): JAX alone tracing, lowering and
  compiling both (`jax.jit(f).trace(*args).lower().compile()`), against a first
  `diff(f, g)(*args)`, which does the same and reads and matches the three levels;
- warm (median of `repeat`): `diff(f, g)(*args)` again (JAX's caches answer the
  compilation), `str(d)`, and `d.save("d.html")` (three drawings as inline SVG).
Then a JSON object with the same figures. Target: a warm diff under 1 s.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

import jax
import jax.numpy as jnp

from jaxtour.viz import diff


def loss(params: dict, x: jax.Array, y: jax.Array) -> jax.Array:
    h = jax.nn.relu(x @ params["w1"])
    return jnp.mean((h @ params["w2"] - y) ** 2)


def loss_bf16(params: dict, x: jax.Array, y: jax.Array) -> jax.Array:
    bf = jnp.bfloat16
    h = jax.nn.relu(x.astype(bf) @ params["w1"].astype(bf))
    return jnp.mean(((h @ params["w2"].astype(bf)).astype(jnp.float32) - y) ** 2)


def _median(thunk, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        thunk()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=10)
    repeat = parser.parse_args().repeat
    params = {"w1": jnp.ones((784, 512)), "w2": jnp.ones((512, 10))}
    args = (params, jnp.ones((128, 784)), jnp.ones((128, 10)))

    def jax_alone() -> None:
        for fn in (loss, loss_bf16):
            jax.jit(fn).trace(*args).lower().compile()

    def cold(thunk):
        return lambda: (jax.clear_caches(), thunk())

    compare = diff(loss, loss_bf16)
    figures = {
        "jax_cold_s": _median(cold(jax_alone), 3),
        "diff_cold_s": _median(cold(lambda: diff(loss, loss_bf16)(*args)), 3),
    }
    d = compare(*args)
    page = Path(tempfile.mkdtemp()) / "d.html"
    figures |= {
        "diff_warm_s": _median(lambda: compare(*args), repeat),
        "text_s": _median(lambda: str(d), repeat),
        "page_s": _median(lambda: d.save(page), max(repeat // 2, 1)),
    }
    ratio = figures["diff_cold_s"] / figures["jax_cold_s"]
    ms = {k: f"{v * 1e3:8.1f} ms" for k, v in figures.items()}
    print(f"{d.names[0]} → {d.names[1]}")
    print(f"  cold: JAX alone (trace, lower, compile both) {ms['jax_cold_s']}")
    print(
        f"  cold: diff(f, g)(*args)                      {ms['diff_cold_s']}  ({ratio:.2f}x)"
    )
    print(
        f"  warm: diff(f, g)(*args)                      {ms['diff_warm_s']}  (target < 1 s)"
    )
    print(f"  warm: str(d)                                 {ms['text_s']}")
    print(f"  warm: d.save('d.html') (3 drawings)          {ms['page_s']}")
    print(f"  {d.headline()}")
    figures["diff_cold_vs_jax_cold"] = ratio
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
