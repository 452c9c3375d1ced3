"""Time from call to SVG for `draw_grad` on the MLP loss (784-512-256-10, batch 128).

Run: .venv/bin/python benchmarks/autodiff.py [--batch 128] [--repeat 5] [--tiny]
For each renderer (embedded, and system `dot` when on PATH) it prints the first call
(JAX compiling each primitive, the renderer starting) and the median warm call with
the render cache cleared, split into building the model (trace, evaluate) and drawing
it (DOT, SVG); then a JSON object with the same figures. Target: warm < 1.5 s.
"""

from __future__ import annotations

import argparse
import json
import time

import jax
from _timing import first_and_warm

from jaxtour import _render
from jaxtour.autodiff import grad_graph
from jaxtour.autodiff._dot import to_diagram
from jaxtour.mlp import init_params, loss

TARGET_S = 1.5


def example(sizes: tuple[int, ...], batch: int):
    """MLP params for `sizes`, and a random batch (x f32[batch, sizes[0]], y labels)."""
    params = init_params(jax.random.key(0), sizes)
    key_x, key_y = jax.random.split(jax.random.key(1))
    x = jax.random.normal(key_x, (batch, sizes[0]))
    y = jax.random.randint(key_y, (batch,), 0, sizes[-1])
    return params, x, y


def call_to_svg(args: tuple) -> dict[str, float]:
    """One draw_grad(loss)(*args).svg(), timed in its two halves, renders not cached."""
    _render._render_cached.cache_clear()
    start = time.perf_counter()
    graph = grad_graph(loss)(*args)
    built = time.perf_counter()
    svg = to_diagram(graph).svg()
    done = time.perf_counter()
    if not svg.lstrip().startswith("<?xml"):
        raise RuntimeError("the renderer returned something other than SVG")
    return {
        "total_s": done - start,
        "model_s": built - start,
        "draw_s": done - built,
        "nodes": len(graph.nodes),
    }


def measure(renderer: str, args: tuple, repeat: int) -> dict:
    keys = ("total_s", "model_s", "draw_s")
    first, figures = first_and_warm(renderer, lambda: call_to_svg(args), repeat, keys)
    return {**figures, "nodes": first["nodes"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--sizes", default="784,512,256,10", help="layer widths")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument(
        "--tiny",
        action="store_true",
        help="smoke test: sizes 16,8,4, batch 4, one repeat",
    )
    opts = parser.parse_args()
    sizes = (16, 8, 4) if opts.tiny else tuple(int(s) for s in opts.sizes.split(","))
    batch, repeat = (4, 1) if opts.tiny else (opts.batch, opts.repeat)
    args = example(sizes, batch)
    renderers = ["embedded"] + (["system"] if _render.system_dot() else [])
    results = {}
    for renderer in renderers:
        r = results[renderer] = measure(renderer, args, repeat)
        verdict = "meets" if r["warm_total_s"] < TARGET_S else "MISSES"
        print(
            f"{renderer:9s} MLP {'-'.join(map(str, sizes))}, batch {batch}, {r['nodes']} "
            f"nodes: first {r['first_s']:.2f} s, warm {r['warm_total_s']:.3f} s (model "
            f"{r['warm_model_s']:.3f} s + draw {r['warm_draw_s']:.3f} s): {verdict} the "
            f"{TARGET_S} s target"
        )
    if "system" not in results:
        print("system    no `dot` on PATH: not measured")
    print(
        json.dumps(
            {
                "sizes": sizes,
                "batch": batch,
                "repeat": repeat,
                "jax": jax.__version__,
                "backend": jax.default_backend(),
                "target_s": TARGET_S,
                "results": results,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
