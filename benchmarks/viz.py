"""Time from call to SVG for the IR pictures: draw_jaxpr and draw_hlo on the MLP's step.

Run: .venv/bin/python benchmarks/viz.py [--batch 128] [--repeat 5] [--tiny]
Three cases, each as `draw_x(f, ...)(*args).svg()`, for each renderer (embedded, and
system `dot` when on PATH):
  - the jaxpr of the MLP's training step (`jaxtour.mlp.update`, 784-512-256-10);
  - its compiled HLO (trace, lower, compile, parse, draw, render);
  - a synthetic 1,000-equation program, drawn collapsed (one node per source line).
It prints the first call (JAX compiling, the renderer starting) and the median warm
call with the render cache cleared, split into building the Diagram (trace, lower,
compile, walk) and rendering it; then a JSON object with the same figures.
Targets (warm): MLP jaxpr < 1 s, MLP compiled HLO < 1 s, 1,000 equations < 3 s.
"""

from __future__ import annotations

import argparse
import json
import time

import jax
import jax.numpy as jnp
from _timing import first_and_warm

from jaxtour import _render
from jaxtour.mlp import example_batch, init_params, update
from jaxtour.viz import draw_hlo, draw_jaxpr

TARGETS_S = {"mlp_jaxpr": 1.0, "mlp_compiled_hlo": 1.0, "synthetic_jaxpr": 3.0}


def synthetic(x, w):
    """Ten equations per block, on five lines, repeated: 1,000 equations for 100 blocks."""
    for _ in range(synthetic.blocks):
        h = jnp.tanh(x @ w)  # dot_general, tanh
        h = h * 0.5 + x  # mul, add
        x = h / (1.0 + jnp.abs(h))  # abs, add, div
        x = x - jnp.max(x)  # reduce_max, sub
        x = jnp.sin(x)  # sin
    return x


synthetic.blocks = 100


def cases(sizes: tuple[int, ...], batch: int, blocks: int) -> dict[str, tuple]:
    """name -> (configured drawing function, example arguments)."""
    params = init_params(jax.random.key(0), sizes)
    x, y = example_batch(batch)
    x = x[:, : sizes[0]]
    synthetic.blocks = blocks
    vector, matrix = jnp.ones((4, 8)), jnp.ones((8, 8))
    return {
        "mlp_jaxpr": (draw_jaxpr(update), (params, x, y)),
        "mlp_compiled_hlo": (draw_hlo(update, stage="compiled"), (params, x, y)),
        "synthetic_jaxpr": (draw_jaxpr(synthetic), (vector, matrix)),
    }


def call_to_svg(draw, args: tuple) -> dict[str, float]:
    """One draw(*args).svg(), timed in two halves, the render cache cleared first."""
    _render._render_cached.cache_clear()
    start = time.perf_counter()
    diagram = draw(*args)
    built = time.perf_counter()
    svg = diagram.svg()
    done = time.perf_counter()
    if not svg.lstrip().startswith("<?xml"):
        raise RuntimeError("the renderer returned something other than SVG")
    nodes, _ = diagram.counts
    return {
        "total_s": done - start,
        "build_s": built - start,
        "render_s": done - built,
        "nodes": nodes,
        "title": diagram.title,
    }


def measure(renderer: str, draw, args: tuple, repeat: int) -> dict:
    keys = ("total_s", "build_s", "render_s")
    call = lambda: call_to_svg(draw, args)
    first, figures = first_and_warm(renderer, call, repeat, keys)
    return {**figures, "nodes": first["nodes"], "title": first["title"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--sizes", default="784,512,256,10", help="layer widths")
    parser.add_argument(
        "--blocks",
        type=int,
        default=100,
        help="blocks of 10 equations in the synthetic program",
    )
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument(
        "--tiny",
        action="store_true",
        help="smoke test: sizes 16,8,10, batch 4, 10 blocks, one repeat",
    )
    opts = parser.parse_args()
    sizes = (16, 8, 10) if opts.tiny else tuple(int(s) for s in opts.sizes.split(","))
    batch, blocks, repeat = (
        (4, 10, 1) if opts.tiny else (opts.batch, opts.blocks, opts.repeat)
    )
    renderers = ["embedded"] + (["system"] if _render.system_dot() else [])
    results: dict = {}
    for name, (draw, args) in cases(sizes, batch, blocks).items():
        for renderer in renderers:
            r = results.setdefault(name, {})[renderer] = measure(
                renderer, draw, args, repeat
            )
            verdict = "meets" if r["warm_total_s"] < TARGETS_S[name] else "MISSES"
            print(
                f"{name:17s} {renderer:9s} {r['nodes']:4d} nodes: first {r['first_s']:.2f} s, "
                f"warm {r['warm_total_s']:.3f} s (build {r['warm_build_s']:.3f} s + render "
                f"{r['warm_render_s']:.3f} s): {verdict} the {TARGETS_S[name]} s target"
                f"  [{r['title']}]"
            )
    print(
        json.dumps(
            {
                "jax": jax.__version__,
                "backend": jax.default_backend(),
                "sizes": sizes,
                "batch": batch,
                "blocks": blocks,
                "repeat": repeat,
                "targets_s": TARGETS_S,
                "results": results,
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
