"""The regression corpus (tests/corpus_programs.py), timed: every visualiser, warm, and
a drawing with values against `jit(grad)` of the same shard_map training loss.

Run: .venv/bin/python benchmarks/corpus.py [--programs a,b] [--repeat 3]
It starts with 8 simulated CPU devices. For the shard_map data-parallel loss it prints
`jit(grad)` (trace + compile + run, a fresh function) beside `grad_graph` with values
(trace, one compiled evaluation of each half) and `draw_grad` to SVG warm; then, for each
program and visualiser, the median warm call (to SVG) and the picture's width in px.
Targets: drawing with values within 2x of jit(grad); every warm call under 1 s (2 s
at most); every width at most 5,000 px.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import jax

jax.config.update("jax_num_cpu_devices", 8)
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import corpus_programs as corpus  # noqa: E402

from jaxtour import _render, autodiff, viz  # noqa: E402


def _timed(thunk) -> float:
    start = time.perf_counter()
    jax.block_until_ready(thunk())
    return time.perf_counter() - start


def values_vs_jit_grad() -> dict[str, float]:
    """Cold costs on the shard_map loss: jit(grad) and the drawing with values."""
    program = corpus.BY_NAME["shard_map_data_parallel"]
    fn, args = corpus._static(program, program.make_args())
    fresh = lambda *a: fn(*a)
    return {
        "jit_grad_s": _timed(lambda: jax.jit(jax.grad(fresh))(*args)),
        "grad_graph_values_s": _timed(lambda: autodiff.grad_graph(fresh)(*args) and 0),
        "grad_graph_no_values_s": _timed(
            lambda: autodiff.grad_graph(fresh, values=False)(*args) and 0
        ),
        # Then warm: the same jaxpr again reuses the compiled evaluation.
        "draw_grad_svg_warm_s": _timed(
            lambda: autodiff.draw_grad(fresh)(*args).svg() and 0
        ),
    }


def _visualisers(program: corpus.Program) -> dict:
    fn, args = corpus._static(program, program.make_args())
    calls = {
        "draw_jaxpr": lambda: viz.draw_jaxpr(fn)(*args),
        "draw_hlo_stablehlo": lambda: viz.draw_hlo(fn, stage="stablehlo")(*args),
        "draw_hlo_compiled": lambda: viz.draw_hlo(fn)(*args),
        "draw_pipeline": lambda: viz.draw_pipeline(fn)(*args),
    }
    if program.grad:
        calls["draw_grad"] = lambda: autodiff.draw_grad(fn, program.argnums)(*args)
    if program.vjp:
        calls["draw_vjp"] = lambda: autodiff.draw_vjp(fn)(*args)
    if program.jvp:
        tangents = tuple(jax.tree.map(corpus._tangent, a) for a in args)
        calls["draw_jvp"] = lambda: autodiff.draw_jvp(fn)(args, tangents)
    return calls


def warm_and_width(program: corpus.Program, repeat: int) -> dict:
    """Per visualiser: median warm seconds (call to SVG, renders not cached) and width."""
    rows = {}
    for name, call in _visualisers(program).items():
        svg = call().svg()  # the cold call
        times = []
        for _ in range(repeat):
            _render._render_cached.cache_clear()
            start = time.perf_counter()
            svg = call().svg()
            times.append(time.perf_counter() - start)
        rows[name] = {
            "warm_s": round(statistics.median(times), 3),
            "width_px": round(corpus.svg_width_px(svg)),
        }
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--programs", default="", help="comma-separated names (default all)"
    )
    parser.add_argument("--repeat", type=int, default=3)
    opts = parser.parse_args()
    head = values_vs_jit_grad()
    print(
        "shard_map data-parallel loss, cold: "
        + "  ".join(f"{k} {v:.2f}" for k, v in head.items())
        + f"  ratio {head['grad_graph_values_s'] / head['jit_grad_s']:.2f}x"
    )
    wanted = set(filter(None, opts.programs.split(",")))
    table = {}
    for program in corpus.PROGRAMS:
        if program.skip or (wanted and program.name not in wanted):
            continue
        table[program.name] = warm_and_width(program, opts.repeat)
        for name, row in table[program.name].items():
            print(
                f"{program.name:26} {name:20} {row['warm_s']:7.3f} s {row['width_px']:7} px",
                flush=True,
            )
    print(json.dumps({"values_vs_jit_grad": head, "programs": table}))


if __name__ == "__main__":
    main()
