"""The profiler lens: where the time of a compiled program went, and what it costs to ask.

Run: .venv/bin/python benchmarks/profile.py [--repeat 5] [--batch 128]
Prints, side by side, from one run:
  - a 1024^2 matmul beside cheap elementwise work: the matmul op's share of the op time,
    its source line, and the summed op time over the wall time (target 0.5-1.5x; ops
    that overlap on several threads are said);
  - two matmuls of very different sizes (1024^2 and 64^2): the order they rank in;
  - the MLP's gradient step (`jax.grad(jaxtour.mlp.loss)`, 784-512-256-10): the first
    `profile` call (trace, compile, record) and warm calls (median of --repeat; target
    < 1 s), and `draw()`;
  - where the wall went, on a small MLP loss (its gradient), a `lax.scan` and an
    elementwise chain: `profile`'s wall (no profiler running) beside an independent
    unprofiled timing of `jax.jit(f)` (target 0.6-1.6x), `dispatch_seconds` beside an
    independent no-op `jax.jit` of the same arguments (target within 3x), the profiled
    wall over the unprofiled one (the profiler's own cost), and the itemised parts
    (ops + between ops + dispatch) over the wall, with what is left unexplained;
then a JSON object with the same figures.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import jax
import jax.numpy as jnp

from jaxtour.cost import profile
from jaxtour.mlp import example_batch, init_params, loss

TARGET_S = 1.0


def matmul_and_elementwise(a, b):
    product = a @ b  # the line the matmul op should name
    return jnp.tanh(product + 1.0) * 2.0


def two_matmuls(big, small):
    return (big @ big).sum() + (small @ small).sum()


def scan_steps(x):
    def step(carry, _):
        return jnp.tanh(carry @ carry) * 0.5, carry.sum()

    return jax.lax.scan(step, x, None, length=32)


def elementwise_chain(x):
    for _ in range(12):
        x = jnp.sin(x) * 1.01 + jnp.cos(x)
    return x


def median_wall(call, calls=25):
    jax.block_until_ready(call())
    walls = []
    for _ in range(calls):
        start = time.perf_counter()
        jax.block_until_ready(call())
        walls.append(time.perf_counter() - start)
    return statistics.median(walls)


def one_round(f, args):
    """profile's figures and their ground truths, timed here independently, as ratios:
    the ground truths right after profile's own timings, so a load shift hits both."""
    p = profile(f, calls=10)(*args)
    compiled = jax.jit(f)
    unprofiled = median_wall(lambda: compiled(*args))
    no_op = jax.jit(lambda *a: jnp.zeros(()))
    dispatch = median_wall(lambda: no_op(*args), calls=101)
    wall = p.wall_seconds
    return {
        "wall_over_unprofiled": wall / unprofiled,
        "dispatch_over_no_op": p.dispatch_seconds / dispatch,
        "dispatch_us": p.dispatch_seconds * 1e6,
        "no_op_jit_us": dispatch * 1e6,
        "profiled_over_wall": p.profiled_wall_seconds / wall,
        "parts_over_wall": sum(p.parts().values()) / wall,
        **{f"{k}_over_wall": v / wall for k, v in p.parts().items()},
        "unexplained_over_wall": p.unexplained_seconds / wall,
    }


def where_the_wall_went(name, f, *args, rounds=3):
    """The median of each ratio over `rounds` rounds, and its range."""
    runs = [one_round(f, args) for _ in range(rounds)]
    row = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    spread = {k: (min(r[k] for r in runs), max(r[k] for r in runs)) for k in runs[0]}

    def show(key):
        low, high = spread[key]
        return f"{row[key]:.2f}x [{low:.2f}-{high:.2f}]"

    print(
        f"{name:18} wall/unprofiled {show('wall_over_unprofiled')} (target 0.6-1.6)"
        f" · dispatch/no-op jit {show('dispatch_over_no_op')} ({row['dispatch_us']:.0f}"
        f" vs {row['no_op_jit_us']:.0f} µs; target 1/3-3) · profiled/wall "
        f"{show('profiled_over_wall')} · parts/wall {show('parts_over_wall')} (ops "
        f"{row['ops_over_wall']:.2f}, between ops {row['between ops_over_wall']:.2f}, "
        f"dispatch {row['dispatch_over_wall']:.2f}) · unexplained "
        f"{row['unexplained_over_wall']:.2f}x"
    )
    return {"median": row, "range": spread}


def timed(call):
    start = time.perf_counter()
    out = call()
    return out, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--batch", type=int, default=128)
    args = parser.parse_args()
    figures: dict = {"backend": jax.default_backend(), "jax": jax.__version__}

    a = jnp.ones((1024, 1024))
    p = profile(matmul_and_elementwise)(a, a)
    top = p.rows[0]
    figures["matmul"] = {
        "top_op": top.op,
        "top_share": round(top.share, 3),
        "top_lines": list(top.lines),
        "op_over_wall": round(p.op_seconds / p.wall_seconds, 3),
        "overlap_s": p.overlap_seconds,
        "wall_s": p.wall_seconds,
    }
    print(p, "\n")

    q = profile(two_matmuls)(a, jnp.ones((64, 64)))
    figures["two_matmuls"] = [(r.op, r.seconds, list(r.primitives)) for r in q.rows]
    print(q, "\n")

    params = init_params(jax.random.key(0))
    x, y = example_batch(args.batch)
    grad_step = profile(jax.grad(loss))
    _, first = timed(lambda: grad_step(params, x, y))
    warm = [timed(lambda: grad_step(params, x, y))[1] for _ in range(args.repeat)]
    result, _ = timed(lambda: grad_step(params, x, y))
    _, drawn = timed(lambda: result.draw().svg())
    figures["mlp_grad"] = {
        "first_s": round(first, 3),
        "warm_median_s": round(statistics.median(warm), 3),
        "warm_max_s": round(max(warm), 3),
        "draw_svg_s": round(drawn, 3),
        "ops": len(result.rows),
        "op_over_wall": round(result.op_seconds / result.wall_seconds, 3),
    }
    print(result, "\n")
    print(
        f"matmul op share {top.share:.0%} (target >= 50 %), ops/wall "
        f"{p.op_seconds / p.wall_seconds:.2f}x (target 0.5-1.5x); MLP grad step: first "
        f"{first:.2f} s, warm median {statistics.median(warm):.2f} s "
        f"(target < {TARGET_S} s), draw to SVG {drawn:.2f} s"
    )
    print(
        "\nWhere the wall went (each figure over its ground truth, side by side; the "
        "median of 3 rounds [their range]):"
    )
    small = init_params(jax.random.key(1))
    sx, sy = example_batch(32)
    figures["wall"] = {
        "mlp_loss_grad": where_the_wall_went(
            "MLP loss (grad)", jax.grad(loss), small, sx, sy
        ),
        "scan": where_the_wall_went("lax.scan x32", scan_steps, jnp.ones((64, 64))),
        "elementwise": where_the_wall_went(
            "elementwise chain", elementwise_chain, jnp.ones((256, 256))
        ),
    }
    print(json.dumps(figures, indent=1, default=str))


if __name__ == "__main__":
    main()
