"""Render time of a 200-node diagram on each path: system `dot` and embedded Graphviz.

Run: .venv/bin/python benchmarks/render.py [--nodes 200] [--repeat 5]
Prints one line per path (first call, median of warm calls with the cache cleared, and
a cached call), then a JSON object with the same figures.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from jaxtour import Diagram, _render


def layered_graph(nodes: int) -> Diagram:
    """A jaxpr-like DAG: `nodes` boxes in layers of 8, each fed by two of the layer above."""
    lines = [
        "digraph {",
        "rankdir=TB; node [shape=box, style=filled, fillcolor=lightblue];",
    ]
    lines += [f'n{i} [label="eqn {i}: add f32[128,256]"];' for i in range(nodes)]
    lines += [
        f"n{i - 8} -> n{i}; n{i - 7 if i % 8 != 7 else i - 15} -> n{i};"
        for i in range(8, nodes)
    ]
    lines.append("}")
    return Diagram("\n".join(lines), f"{nodes} nodes")


def time_path(which: str, diagram: Diagram, repeat: int) -> dict[str, float]:
    def once() -> float:
        _render._render_cached.cache_clear()
        start = time.perf_counter()
        _render._render_cached(diagram.source, "svg", which)
        return time.perf_counter() - start

    first = once()
    warm = statistics.median(once() for _ in range(repeat))
    start = time.perf_counter()
    _render._render_cached(diagram.source, "svg", which)
    cached = time.perf_counter() - start
    return {"first_s": first, "warm_s": warm, "cached_s": cached}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    diagram = layered_graph(args.nodes)
    paths = ["embedded"] + (["system"] if _render.system_dot() else [])
    results = {}
    for which in paths:
        results[which] = time_path(which, diagram, args.repeat)
        r = results[which]
        print(
            f"{which:9s} {args.nodes} nodes: first {r['first_s']:.3f} s, "
            f"warm {r['warm_s']:.3f} s, cached {r['cached_s'] * 1e6:.0f} µs"
        )
    if "system" not in results:
        print("system    no `dot` on PATH: not measured")
    if len(results) == 2:
        ratio = results["embedded"]["warm_s"] / results["system"]["warm_s"]
        print(f"embedded / system (warm): {ratio:.2f}x")
    print(json.dumps({"nodes": args.nodes, **results}))


if __name__ == "__main__":
    main()
