"""Pictures of the MLP: learning curve, test digits with predictions, the speed ladder.

Each returns a `Plot` (the kit's matplotlib picture, no pyplot state): Jupyter shows it,
a script writes it with `.save(path)`, and `.figure` is the matplotlib `Figure`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from jaxtour._plot import Plot, figure

_GOOD, _BAD, _MAIN, _SOFT = "#2a9d8f", "#e63946", "#264653", "#a8dadc"


def plot_history(history: Any, target: float = 0.98) -> Plot:
    """The learning curve: training loss per batch and per epoch; accuracy per epoch."""
    fig = figure(11, 4)
    ax_loss, ax_acc = fig.subplots(1, 2)
    steps = max(len(history.batch_loss) // max(len(history.loss), 1), 1)
    batch_x = np.arange(1, len(history.batch_loss) + 1) / steps
    epochs = np.arange(1, len(history.loss) + 1)
    ax_loss.semilogy(
        batch_x, history.batch_loss, color=_SOFT, lw=0.8, label="each batch"
    )
    ax_loss.semilogy(epochs - 0.5, history.loss, "o-", color=_MAIN, label="epoch mean")
    ax_loss.set(xlabel="epoch", ylabel="training loss (log scale)", title="Loss")
    ax_acc.plot(
        epochs,
        100 * np.asarray(history.train_accuracy),
        "o-",
        color=_MAIN,
        label="train",
    )
    ax_acc.plot(
        epochs, 100 * np.asarray(history.test_accuracy), "s-", color=_GOOD, label="test"
    )
    ax_acc.axhline(100 * target, color=_BAD, ls="--", lw=1, label=f"{100 * target:g} %")
    ax_acc.set(xlabel="epoch", ylabel="accuracy (%)", title="Accuracy")
    ax_acc.xaxis.get_major_locator().set_params(integer=True)
    for ax in (ax_loss, ax_acc):
        ax.grid(alpha=0.3)
        ax.legend()
    title = (
        f"784-512-256-10 MLP on MNIST ({history.device}): "
        f"{100 * history.test_accuracy[-1]:.2f} % test accuracy"
        if history.loss
        else ""
    )
    fig.suptitle(title)
    return Plot(fig, title or "learning curve")


def plot_predictions(
    images: np.ndarray, labels: np.ndarray, predicted: np.ndarray, columns: int = 8
) -> Plot:
    """A grid of digits titled with the prediction; mistakes in red."""
    rows = -(-len(images) // columns)
    fig = figure(1.3 * columns, 1.5 * rows)
    for i, ax in enumerate(fig.subplots(rows, columns, squeeze=False).ravel()):
        ax.axis("off")
        if i < len(images):
            right = predicted[i] == labels[i]
            ax.imshow(np.asarray(images[i]).reshape(28, 28), cmap="gray_r")
            ax.set_title(
                f"{predicted[i]}" if right else f"{predicted[i]} (is {labels[i]})",
                color=_GOOD if right else _BAD,
                fontsize=12,
            )
    wrong = int(np.sum(np.asarray(predicted) != np.asarray(labels)))
    return Plot(fig, f"{len(images)} digits, {wrong} predicted wrong")


def plot_ladder(result: dict) -> Plot:
    """Seconds per epoch of each ladder variant (log scale): the median round, a bar from
    the fastest to the slowest round, speed-up and % of matmul; the one-matmul control's
    rows (the step's matmuls alone) hatched."""
    names = list(result["epoch_s"])
    seconds = np.array([result["epoch_s"][n] for n in names])
    spread = np.array(
        [
            result.get("spread_s", {}).get(n, [s, s, s])
            for n, s in zip(names, seconds, strict=True)
        ]
    )
    fig = figure(10, 0.6 * len(names) + 1.6)
    ax = fig.subplots()
    colors = [
        _GOOD if n == "jaxtour-train" else _MAIN if "jax" in n else _SOFT for n in names
    ]
    bars = ax.barh(names, seconds, color=colors)
    for bar, name in zip(bars, names, strict=True):
        if name.startswith("matmuls-"):
            bar.set_hatch("//")
            bar.set_alpha(0.6)
    ax.errorbar(
        seconds,
        np.arange(len(names)),
        xerr=[seconds - spread[:, 0], spread[:, 2] - seconds],
        fmt="none",
        ecolor="black",
        capsize=4,
        lw=1,
    )
    ax.set_xscale("log")
    ax.invert_yaxis()
    for y, name in enumerate(names):
        ratio = result["ratio_vs_numpy_f64"].get(name, float("nan"))
        fraction = result["matmul_fraction_by_variant"][name]
        ax.text(
            spread[y, 2] * 1.08,
            y,
            f"{seconds[y]:.2f} s   ×{ratio:.1f}   {100 * fraction:.0f} % of matmul",
            va="center",
            fontsize=12,
        )
    ax.set_xlim(spread[:, 0].min() / 2, spread[:, 2].max() * 14)
    ax.tick_params(labelsize=12)
    where = (
        result["platform"]
        if result["device"] == result["platform"]
        else (f"{result['platform']} ({result['device']})")
    )
    ax.set_xlabel(
        f"seconds per epoch (60,000 images, batch {result['batch_size']}; log scale)\n"
        "bar: median round; whisker: fastest to slowest round",
        fontsize=12,
    )
    title = (
        f"One epoch on {where}; hatched: the step's matmuls alone. "
        f"Matmul rate {result['matmul_gflops']:.0f} GFLOP/s"
    )
    ax.set_title(title, fontsize=13)
    ax.set_axisbelow(True)
    ax.grid(axis="x", alpha=0.3, which="both")
    return Plot(fig, title)
