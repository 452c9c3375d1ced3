"""Each cost lens's whole-call figure beside a ground truth found another way (issue 45).

Run: .venv/bin/python benchmarks/ground_truths.py [--json]
Programs like the issue's, on 8 simulated CPU devices:
  - a scanned epoch of 8 minibatches: against its unrolled twin (the kit's count and
    XLA's cost_analysis() of the twin, which has no loop);
  - fori_loop with static bounds and a counted while_loop: against hand counts;
  - a data-dependent while_loop: labelled per iteration, against one iteration by hand;
  - a loss with NamedSharding on a 2x4 mesh and its shard_map twin: fusion's saving
    against the unsharded loss (and, per device, against one device's share);
  - an FFT convolution: against XLA's cost_analysis().
Each row: the lens, its figure, the truth, where the truth comes from, ratio. The
acceptance is a ratio within 0.85-1.15, or a label saying what the figure leaves out.
"""

from __future__ import annotations

import argparse
import json
from functools import partial

import jax

jax.config.update("jax_num_cpu_devices", 8)

import jax.numpy as jnp  # noqa: E402
from jax.sharding import NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

from jaxtour import _ir  # noqa: E402
from jaxtour.cost import Peaks, Roofline, cost_table, fusion_traffic  # noqa: E402
from jaxtour.cost._ledger import total  # noqa: E402

STEPS = 8
PEAKS = Peaks("cpu:fixed", 50e9, 10e9)  # a fixed roof: intensities, not timings


def step(w, xy):
    x, y = xy
    grad = jax.grad(lambda w: jnp.mean((jnp.tanh(x @ w["a"]) @ w["b"] - y) ** 2))(w)
    w = jax.tree.map(lambda p, g: p - 0.1 * g, w, grad)
    return w, jnp.sum(w["b"])


def epoch(w, xs, ys):
    return jax.lax.scan(step, w, (xs, ys))


def unrolled(w, xs, ys):  # lists of minibatches: the same work, no loop
    losses = []
    for x, y in zip(xs, ys, strict=True):
        w, loss = step(w, (x, y))
        losses.append(loss)
    return w, jnp.stack(losses)


def loss(w, x, y):
    return jnp.mean((jnp.tanh(x @ w["a"]) @ w["b"] - y) ** 2)


def row(program, lens, figure, truth, source):
    return {
        "program": program,
        "lens": lens,
        "figure": figure,
        "truth": truth,
        "source": source,
        "ratio": figure / truth if truth else float("nan"),
    }


def loops() -> list[dict]:
    w = {"a": jnp.full((32, 64), 0.01), "b": jnp.full((64, 8), 0.01)}
    xs = jax.random.normal(jax.random.key(0), (STEPS, 128, 32))
    ys = jnp.ones((STEPS, 128, 8))
    scan, twin = (
        cost_table(epoch)(w, xs, ys),
        cost_table(unrolled)(w, list(xs), list(ys)),
    )
    saving = fusion_traffic(epoch)(w, xs, ys).saving
    twin_saving = fusion_traffic(unrolled)(w, list(xs), list(ys)).saving
    module_rows = _ir.hlo_counts(
        _ir.parse_hlo(jax.jit(epoch).lower(w, xs, ys).compile().as_text())
    )
    loop_flops = next(c.flops for op, c in module_rows if op.opcode == "while")
    roof, twin_roof = Roofline(scan, PEAKS, 1.0), Roofline(twin, PEAKS, 1.0)
    name, truth = "scan epoch (8 minibatches)", "unrolled twin"
    return [
        row(
            name,
            "cost_table compiled FLOPs",
            scan.flops,
            twin.xla["flops"],
            f"{truth}, XLA",
        ),
        row(name, "cost_table compiled FLOPs", scan.flops, twin.flops, f"{truth}, kit"),
        row(
            name,
            "cost_table compiled bytes",
            scan.bytes,
            twin.xla["bytes_accessed"],
            f"{truth}, XLA",
        ),
        row(
            name,
            "cost_table jaxpr FLOPs",
            total(scan.equations)[0],
            total(twin.equations)[0],
            f"{truth}, kit",
        ),
        row(
            name,
            "cost_table jaxpr bytes",
            total(scan.equations)[2],
            total(twin.equations)[2],
            f"{truth}, kit",
        ),
        row(
            name,
            "XLA cost_analysis() FLOPs (labelled: each body once)",
            scan.xla["flops"],
            twin.xla["flops"],
            f"{truth}, XLA",
        ),
        row(name, "fusion_traffic saving", saving, twin_saving, f"{truth}, kit"),
        row(
            name,
            "draw_roofline intensity",
            scan.intensity,
            twin.intensity,
            f"{truth}, kit",
        ),
        row(
            name,
            "draw_roofline FLOP/s (same time)",
            roof.flops_per_s,
            twin_roof.flops_per_s,
            f"{truth}, kit",
        ),
        row(
            name,
            "profile's while-op FLOPs (_ir.hlo_counts)",
            loop_flops,
            twin.flops,
            f"{truth}, kit",
        ),
    ]


def counted() -> list[dict]:
    n, rows = 4096, []
    programs = {
        "fori_loop(0, 6)": lambda x: jax.lax.fori_loop(
            0, 6, lambda i, c: jnp.sin(c) * 2.0, x
        ),
        "while_loop(i < 6)": lambda x: jax.lax.while_loop(
            lambda c: c[0] < 6, lambda c: (c[0] + 1, jnp.sin(c[1]) * 2.0), (0, x)
        )[1],
    }
    for name, f in programs.items():
        table = cost_table(f)(jnp.ones(n))
        rows.append(
            row(
                name,
                "cost_table compiled FLOPs",
                table.flops,
                6 * n,
                "hand: 6 x n muls",
            )
        )
        rows.append(
            row(
                name,
                "cost_table jaxpr FLOPs",
                total(table.equations)[0],
                6 * n,
                "hand: 6 x n muls",
            )
        )
    f = lambda x: jax.lax.while_loop(lambda c: jnp.sum(c) < 1e9, lambda c: c * 2.0, x)
    table = cost_table(f)(jnp.ones(n))
    label = "per iteration" if table.per_iteration else "UNLABELLED"
    one = n + (n - 1) + 1  # the body's mul; the condition's sum and compare
    rows.append(
        row(
            f"data-dependent while ({label})",
            "cost_table jaxpr FLOPs",
            total(table.equations)[0],
            one,
            "hand: one iteration",
        )
    )
    return rows


def sharded() -> list[dict]:
    auto = (jax.sharding.AxisType.Auto,) * 2
    mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=auto)
    on = lambda a, *spec: jax.device_put(a, NamedSharding(mesh, P(*spec)))
    w = {"a": jnp.full((256, 512), 0.01), "b": jnp.full((512, 64), 0.01)}
    x, y = jax.random.normal(jax.random.key(0), (1024, 256)), jnp.ones((1024, 64))
    all8 = ("data", "model")

    @partial(jax.shard_map, mesh=mesh, in_specs=(P(), P(all8), P(all8)), out_specs=P())
    def twin(w, x, y):
        return jax.lax.pmean(loss(w, x, y), all8)

    ws = {"a": on(w["a"], None, "model"), "b": on(w["b"], "model", None)}
    one = fusion_traffic(loss)(w, x, y).saving
    share = fusion_traffic(loss)(w, x[:128], y[:128]).saving
    mesh_saving = fusion_traffic(loss)(
        ws, on(x, "data", None), on(y, "data", None)
    ).saving
    sm = fusion_traffic(twin)(w, x, y)
    return [
        row(
            "loss, NamedSharding 2x4 (global)",
            "fusion_traffic saving",
            mesh_saving,
            one,
            "unsharded loss",
        ),
        row(
            f"loss, shard_map 2x4 ({sm.basis})",
            "fusion_traffic saving",
            sm.saving,
            share,
            "unsharded loss on one device's share",
        ),
    ]


def fft() -> list[dict]:
    n = 256

    def conv(x, k):
        return jnp.sum(
            jnp.fft.irfft(jnp.fft.rfft(x, n=n) * jnp.fft.rfft(k, n=n), n=n) ** 2
        )

    table = cost_table(conv)(jnp.ones((16, n)), jnp.ones(n))
    return [
        row(
            "FFT convolution",
            "cost_table compiled FLOPs",
            table.flops,
            table.xla["flops"],
            "XLA cost_analysis()",
        ),
        row(
            "FFT convolution",
            "draw_roofline intensity",
            table.intensity,
            table.xla["flops"] / table.xla["bytes_accessed"],
            "XLA cost_analysis()",
        ),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print JSON only")
    args = parser.parse_args()
    rows = [*loops(), *counted(), *sharded(), *fft()]
    if args.json:
        print(json.dumps(rows, indent=1))
        return
    print(
        f"{'program':38} {'lens':52} {'figure':>11} {'truth':>11} {'ratio':>6}  truth from"
    )
    for r in rows:
        within = 0.85 <= r["ratio"] <= 1.15
        flag = (
            "" if within else "  (labelled)" if "labelled" in r["lens"] else "  <- OFF"
        )
        print(
            f"{r['program']:38} {r['lens']:52} {r['figure']:11.4g} {r['truth']:11.4g} "
            f"{r['ratio']:6.3f}  {r['source']}{flag}"
        )
    print(
        json.dumps(
            {
                f"{r['program']} | {r['lens']} | {r['source']}": round(r["ratio"], 4)
                for r in rows
            }
        )
    )


if __name__ == "__main__":
    main()
