"""`Explorer`: the ipywidgets panel. Controls on top, the chosen view of the example below.

Every change of a control re-renders through the view's library call; renders are
cached per combination (example, transformations, view, the options that view reads),
so going back to a combination is instant.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import ipywidgets as widgets

from jaxtour.explorer import _html
from jaxtour.explorer._compose import Composed, Transforms, compose
from jaxtour.explorer._gallery import GALLERY
from jaxtour.explorer._request import Options, Request, Shown, Subject
from jaxtour.explorer._save import views, views_page
from jaxtour.explorer._views import DEFAULT_VIEW, VIEWS

AXES = (0, 1, 2, -1)
DEPTHS = (("0", 0), ("1", 1), ("2", 2), ("3", 3), ("all", None))
_SMALL = widgets.Layout(width="auto")


class Explorer(widgets.VBox):
    """One function through every JAX lens; built by `jaxtour.explore`.

    Attributes (controls you can also set from Python): `example`, `jit`, `grad`,
    `jvp`, `vmap`, `axis`, `view`, `depth`, `group`, `rankdir`, `step` (the step
    through view's slider: -1 shows the whole run). `shown` is what the
    panel shows now (a `Shown` holding the library's result, or a `Problem`).
    """

    def __init__(self, loaders: dict[str, Callable[[], Subject]]) -> None:
        self._loaders = loaders
        self._subjects: dict[str, Subject] = {}
        self._cache: dict[tuple, tuple[Shown | _html.Problem, str]] = {}
        # One transformed function per combination, kept: JAX caches traces and
        # compilations per function object, so other views and options reuse them.
        self._composed: dict[tuple, Composed] = {}
        self.renders = 0  # cache misses, for the curious and the tests
        self._pages: dict[tuple, str] = {}  # every view, for exported notebooks
        self._make_controls(list(loaders))
        super().__init__(self._layout())
        self.add_class("jaxtour-explorer")
        for control in self._controls():
            control.observe(self._changed, names="value")
        self.render()

    # --- controls ----------------------------------------------------------------------------
    def _make_controls(self, names: list[str]) -> None:
        self.example = widgets.Dropdown(options=names, description="example")
        self.about = widgets.HTML()
        self.jit, self.grad, self.jvp, self.vmap = (
            widgets.ToggleButton(description=name, tooltip=f"jax.{name}", layout=_SMALL)
            for name in ("jit", "grad", "jvp", "vmap")
        )
        self.axis = widgets.Dropdown(
            options=AXES,
            description="axis",
            disabled=True,
            layout=widgets.Layout(width="130px"),
        )
        self.view = widgets.Dropdown(
            options=[(v.label, k) for k, v in VIEWS.items()],
            value=DEFAULT_VIEW,
            description="view",
        )
        self.depth = widgets.Dropdown(
            options=DEPTHS,
            value=Options().depth,
            description="depth",
            tooltip="how deep nested jaxprs are drawn",
            layout=widgets.Layout(width="140px"),
        )
        self.group = widgets.Checkbox(
            value=Options().group,
            description="group by source line",
            indent=False,
            layout=_SMALL,
        )
        self.rankdir = widgets.ToggleButtons(
            options=[("↓", "TB"), ("→", "LR")],
            tooltips=["top to bottom", "left to right"],
            style={"button_width": "40px"},
        )
        self.step = widgets.IntSlider(
            value=-1, min=-1, max=0, description="step", tooltip="-1: the whole run"
        )
        self.status = widgets.HTML()
        self.output = widgets.HTML()
        for name in (
            "example",
            "jit",
            "grad",
            "jvp",
            "vmap",
            "axis",
            "view",
            "depth",
            "group",
            "rankdir",
            "step",
            "output",
        ):
            getattr(self, name).add_class(f"jaxtour-explorer-{name}")

    def _controls(self) -> list[widgets.ValueWidget]:
        return [
            self.example,
            self.jit,
            self.grad,
            self.jvp,
            self.vmap,
            self.axis,
            self.view,
            self.depth,
            self.group,
            self.rankdir,
            self.step,
        ]

    def _layout(self) -> list[widgets.Widget]:
        row = lambda *children: widgets.HBox(
            children, layout=widgets.Layout(align_items="center", flex_flow="row wrap")
        )
        return [
            row(self.example, self.about),
            row(
                widgets.Label("transform:"),
                self.jit,
                self.grad,
                self.jvp,
                self.vmap,
                self.axis,
            ),
            row(
                self.view, self.depth, self.group, self.rankdir, self.step, self.status
            ),
            self.output,
        ]

    # --- state -------------------------------------------------------------------------------
    @property
    def transforms(self) -> Transforms:
        """The transformations the toggles select."""
        axis = self.axis.value if self.vmap.value else None
        return Transforms(self.jit.value, self.grad.value, self.jvp.value, axis)

    @property
    def options(self) -> Options:
        """The drawing options, with those the current view does not read left at default."""
        reads = VIEWS[self.view.value].options
        default = Options()
        return Options(
            self.depth.value if "depth" in reads else default.depth,
            self.group.value if "group" in reads else default.group,
            self.rankdir.value if "rankdir" in reads else default.rankdir,
            self.step.value if "step" in reads else default.step,
        )

    @property
    def subject(self) -> Subject:
        """The example now shown, loaded (and kept) on first use."""
        name = self.example.value
        if name not in self._subjects:
            self._subjects[name] = self._loaders[name]()
        return self._subjects[name]

    @property
    def shown(self) -> Shown | _html.Problem:
        """What the panel shows now."""
        return self._cache[self._key()][0]

    @property
    def label(self) -> str:
        """The composition shown, e.g. ``jit(grad(cubic))``."""
        return self.transforms.describe(self.subject.label)

    @property
    def composed(self) -> Composed:
        """The example with the chosen transformations applied (made once, then kept)."""
        key = (self.example.value, self.transforms)
        if key not in self._composed:
            subject = self.subject
            self._composed[key] = compose(
                subject.fn, subject.args, self.transforms, subject.label
            )
        return self._composed[key]

    def _key(self) -> tuple:
        return (self.example.value, self.transforms, self.view.value, self.options)

    # --- rendering ---------------------------------------------------------------------------
    def _changed(self, change: Any) -> None:
        self.render()

    def render(self) -> None:
        """Show the current combination: from the cache, or drawn and cached."""
        self._sync_controls()
        key = self._key()
        start = time.perf_counter()
        cached = key in self._cache
        if not cached:
            self.status.value = "<i>rendering…</i>"
            self._cache[key] = self._draw()
            self.renders += 1
        took = "from cache" if cached else f"{time.perf_counter() - start:.2f} s"
        if "step" in VIEWS[self.view.value].options:
            self._size_step_slider()
        self.status.value = f"<small>{took}</small>"
        self.output.value = self._cache[key][1]

    def _draw(self) -> tuple[Shown | _html.Problem, str]:
        view = VIEWS[self.view.value]
        try:
            shown = view.draw(
                Request(self.subject, self.transforms, self.composed, self.options)
            )
            return shown, _html.panel(shown)
        except Exception as err:  # shown in the panel: a bad combination is not a crash
            problem = _html.explain(err, self._safe_label(), view.label)
            return problem, _html.panel(problem)

    def _size_step_slider(self) -> None:
        """The slider ends at the run's last step (the run is kept: this costs nothing)."""
        from jaxtour.explorer import _step_through

        if not isinstance(self.shown, Shown):
            return
        request = Request(self.subject, self.transforms, self.composed, self.options)
        self.step.max = _step_through.last_step(request)

    def _safe_label(self) -> str:
        try:
            return self.label
        except Exception:  # the example itself failed to load
            return self.example.value

    def _sync_controls(self) -> None:
        self.axis.disabled = not self.vmap.value
        reads = VIEWS[self.view.value].options
        self.depth.disabled = "depth" not in reads
        self.group.disabled = "group" not in reads
        self.rankdir.disabled = "rankdir" not in reads
        self.step.disabled = "step" not in reads
        self.step.layout.display = None if "step" in reads else "none"
        self.about.value = f"<small>{_about(self.example.value)}</small>"

    # --- without a kernel --------------------------------------------------------------------
    def save(self, path: str | os.PathLike) -> Path:
        """Write every view of what the panel shows (its example and transformations)
        into one HTML page that needs no kernel and no network, opening on the view
        shown; views switch by a click.

        Raises:
            ValueError: `path` does not end in .html.
        """
        from jaxtour._files import user_path, write_atomically

        path = user_path(path)
        if path.suffix.lower() != ".html":
            raise ValueError(
                f"Cannot save the explorer as {path.name!r}: it writes a page, "
                "use a .html suffix."
            )
        page = views_page(self._request, self._safe_label(), self._now())
        write_atomically(path, page.encode())
        return path

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        # The widget for a live kernel (JupyterLab prefers it when it can show it);
        # beside it, for exported notebooks, every view of what the panel shows
        # (text/html: they switch with no kernel) and the picture it shows as SVG
        # (what GitHub and the decks show).
        bundle = super()._repr_mimebundle_(**kwargs)
        key = self._key()
        if key not in self._pages:  # drawn once per combination: a display repeats it
            self._pages[key] = views(self._request, self._safe_label(), self._now())
        bundle["text/html"] = self._pages[key]
        shown = self.shown
        if isinstance(shown, Shown) and hasattr(shown.result, "svg"):  # a Diagram
            bundle["image/svg+xml"] = shown.result.svg()
        return bundle

    def _request(self) -> Request:
        return Request(self.subject, self.transforms, self.composed, self.options)

    def _now(self) -> tuple[str, str]:
        """(the view shown, the panel's HTML of it)."""
        return self.view.value, self._cache[self._key()][1]


def _about(name: str) -> str:
    example = GALLERY.get(name)
    return (
        example.about
        if example
        else "your function, with the example arguments you gave"
    )
