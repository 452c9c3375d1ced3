"""`diff(f, g)`, warm, beside what JAX alone takes to trace, lower and compile the two.

Run: .venv/bin/python benchmarks/diff.py [--repeat 10]
The two programs are a two-layer MLP's loss (784-512-10, batch 128) in float32 and the
same loss with its matmuls cast to bfloat16. Side by side, each the median of `repeat`
warm calls (JAX's compilation cache already holds both programs):
- JAX alone: `jax.jit(f).trace(*args).lower().compile()` for both programs (the floor
  every diff pays: the kit reads what these stages print);
- `diff(f, g)(*args)`: the same, plus reading the three levels and matching them;
- `str(d)`, and `d.save("d.html")` (three drawings rendered to inline SVG).
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

    compare = diff(loss, loss_bf16)
    d = compare(*args)  # first call: compiles both
    page = Path(tempfile.mkdtemp()) / "d.html"
    figures = {
        "jax_alone_s": _median(jax_alone, repeat),
        "diff_s": _median(lambda: compare(*args), repeat),
        "text_s": _median(lambda: str(d), repeat),
        "page_s": _median(lambda: d.save(page), max(repeat // 2, 1)),
    }
    figures["diff_vs_jax"] = figures["diff_s"] / figures["jax_alone_s"]
    print(f"warm, median of {repeat}: {d.names[0]} → {d.names[1]}")
    print(
        f"  JAX alone (trace, lower, compile both) {figures['jax_alone_s'] * 1e3:8.1f} ms"
    )
    print(
        f"  diff(f, g)(*args)                      {figures['diff_s'] * 1e3:8.1f} ms"
        f"  ({figures['diff_vs_jax']:.2f}x JAX alone; target < 1 s)"
    )
    print(f"  str(d)                                 {figures['text_s'] * 1e3:8.1f} ms")
    print(f"  d.save('d.html') (3 drawings)          {figures['page_s'] * 1e3:8.1f} ms")
    print(f"  {d.headline()}")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
