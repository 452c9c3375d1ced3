"""Every lens on models as researchers write them (tests/corpus_models.py), timed warm.

Run: .venv/bin/python benchmarks/models.py [--models eqx_mlp,bf16_block] [--repeat 3]
For each model (a Flax NNX step with Dropout and Optax, an Equinox MLP, a bfloat16
transformer block, ...) and each lens, it prints the first call and the median warm
call, each with its picture made (SVG for a Diagram, PNG for a Plot, text for a
report). Target: every warm call under 1 s; ceiling 2 s.

`--whole` (issue 47) times a Flax NNX transformer block (tests/model_zoo.py) drawn as the
code that wrote it and saved as a kernel-free page, side by side with the same drawing
flat (`group_by=None`): the picture's size before and after, and the times. Target: draw
and save the block under 1 s warm.
"""

from __future__ import annotations

import argparse
import functools
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import corpus_models as corpus
import model_zoo

from jaxtour import _render, autodiff, cost, tracing, viz

PEAKS = cost.Peaks("cpu:cpu", 50e9, 10e9)  # fixed: the roofline's own cost, not a probe


def _picture(result) -> object:
    """What Jupyter shows for `result`: its rich repr (SVG, PNG, HTML), else its text."""
    for rich in ("_repr_svg_", "_repr_png_", "_repr_html_", "_repr_markdown_"):
        if hasattr(result, rich):
            return getattr(result, rich)()
    return str(result)


def lenses(m: corpus.Model, args: tuple) -> dict[str, Callable[[], object]]:
    """One thunk per lens call on `m`, as a user would write it."""
    kw, opts = (
        m.kwargs,
        ({"static_argnames": m.static_argnames} if m.static_argnames else {}),
    )
    return {
        "draw_jaxpr": lambda: viz.draw_jaxpr(m.fn, **opts)(*args, **kw),
        "draw_hlo": lambda: viz.draw_hlo(m.fn, **opts)(*args, **kw),
        "draw_grad": lambda: autodiff.draw_grad(m.loss, m.argnums)(*args),
        "draw_vjp": lambda: autodiff.draw_vjp(m.loss)(*args),
        "step_through": lambda: tracing.step_through(m.fn, **opts)(*args, **kw),
        "find_nans": lambda: tracing.find_nans(m.fn, **opts)(*args, **kw),
        "cost_table": lambda: cost.cost_table(m.fn, **opts)(*args, **kw),
        "fusion_traffic": lambda: cost.fusion_traffic(m.fn, **opts)(*args, **kw),
        "draw_roofline": lambda: cost.draw_roofline(m.fn, peaks=PEAKS, **opts)(
            *args, **kw
        ),
        "grad_memory": lambda: cost.grad_memory(m.loss, argnums=m.argnums)(*args),
    }


def _seconds(thunk: Callable[[], object]) -> float:
    start = time.perf_counter()
    _picture(thunk())
    return time.perf_counter() - start


def _draw_whole(f: Callable, args: tuple, group_by: str | None) -> object:
    return viz.draw_jaxpr(f, group_by=group_by)(*args)


def whole(repeat: int, folder: Path) -> None:
    """The NNX block and its train step: nested by the code and saved as a page, against
    the flat drawing, each warm (median of `repeat`)."""
    (loss, args), (step, step_args) = model_zoo.nnx_block()
    cases = {
        "block loss": (loss, args),
        "nnx.jit train step": (step, step_args),
    }
    print(
        "first: the first call (tracing, JAX's caches cold) drawn and saved; "
        "draw/+page: warm, the layouts from the render cache (keyed on the DOT "
        "text); uncached: warm, that cache emptied before each call"
    )
    print(
        f"{'program':<20} {'drawing':<8} {'size px':>13} {'first s':>8} {'draw s':>7}"
        f" {'+page s':>8} {'uncached':>9}"
    )
    for name, (f, a) in cases.items():
        for how, group_by in (("flat", None), ("nested", "auto")):
            draw = functools.partial(_draw_whole, f, a, group_by)
            start = time.perf_counter()
            first_drawing = draw()
            size = first_drawing.size_px  # the first call: tracing, caches
            first_drawing.save(folder / "page.html")
            first = time.perf_counter() - start
            times, pages, cold = [], [], []
            for _ in range(repeat):
                _render._render_cached.cache_clear()
                start = time.perf_counter()
                draw().save(folder / "page.html")
                cold.append(time.perf_counter() - start)
            for _ in range(repeat):
                start = time.perf_counter()
                d = draw()
                d.svg()
                middle = time.perf_counter()
                d.save(folder / "page.html")
                times.append(middle - start)
                pages.append(time.perf_counter() - start)
            w, h = size
            print(
                f"{name:<20} {how:<8} {f'{w:,.0f}x{h:,.0f}':>13} {first:8.3f} "
                f"{statistics.median(times):7.3f} {statistics.median(pages):8.3f}"
                f" {statistics.median(cold):9.3f}"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(m.name for m in corpus.MODELS))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--whole", action="store_true", help="the NNX block, issue 47")
    options = parser.parse_args()
    if options.whole:
        import tempfile

        with tempfile.TemporaryDirectory() as folder:
            whole(options.repeat, Path(folder))
        return
    print(f"{'model':<18} {'lens':<15} {'first s':>8} {'warm s':>8}")
    worst = 0.0
    for name in options.models.split(","):
        m = corpus.BY_NAME[name]
        args = m.make_args()
        for lens, thunk in lenses(m, args).items():
            first = _seconds(thunk)
            warm = statistics.median(_seconds(thunk) for _ in range(options.repeat))
            worst = max(worst, warm)
            flag = "" if warm < 1 else "  over 1 s" if warm < 2 else "  OVER 2 s"
            print(f"{name:<18} {lens:<15} {first:8.3f} {warm:8.3f}{flag}")
    print(f"slowest warm call: {worst:.3f} s (target 1 s, ceiling 2 s)")


if __name__ == "__main__":
    main()
