"""The explorer's step-through view: what `step_through(...).diagram(upto=k)` draws."""

import jax
import pytest

from jaxtour import explore
from jaxtour.explorer import _gallery, _step_through
from jaxtour.tracing import step_through

cubic = _gallery.cubic


@pytest.fixture
def panel():
    p = explore(cubic, 1.0)
    p.view.value = "step through"
    return p


def test_the_slider_is_shown_only_for_the_step_view():
    p = explore(cubic, 1.0)
    assert p.step.disabled and p.step.layout.display == "none"
    p.view.value = "step through"
    assert not p.step.disabled and p.step.layout.display is None
    assert p.depth.disabled  # the step view draws no nested boxes


def test_the_whole_run_then_each_step_as_step_through_draws_it(panel):
    oracle = step_through(cubic)(1.0)
    assert panel.step.value == -1 and panel.step.max == len(oracle) - 1 == 6
    assert panel.shown.result.source == oracle.diagram().source
    assert panel.shown.code == "step_through(cubic, rankdir='TB')(*args)"
    panel.step.value = 2
    assert panel.shown.result.source == oracle.diagram(upto=2).source
    title = panel.shown.result.title
    assert title.startswith("cubic: step 2 of 7, mul at _gallery.py:")
    assert panel.shown.code.endswith("(*args).diagram(upto=2)")


def test_transformations_and_direction_reach_the_run(panel):
    panel.step.value = 3
    panel.grad.value = True
    panel.rankdir.value = "LR"
    oracle = step_through(jax.grad(cubic), rankdir="LR")(1.0)
    assert panel.step.max == len(oracle) - 1
    assert panel.shown.result.source == oracle.diagram(upto=3).source
    assert panel.shown.code == (
        "step_through(grad(cubic), rankdir='LR')(*args).diagram(upto=3)"
    )


def test_moving_the_slider_steps_through_once(monkeypatch):
    runs = []

    def counted(fn):
        runs.append(fn)
        return step_through(fn)

    monkeypatch.setattr(_step_through, "step_through", counted)
    p = explore(_gallery.tanh, 0.5)
    p.view.value = "step through"
    for k in (0, 1, 2, -1):
        p.step.value = k
    p.rankdir.value = "LR"
    assert len(runs) == 1 and len(_step_through._RUNS) <= _step_through.KEEP
    p.grad.value = True  # another function: another run
    assert len(runs) == 2


def test_one_function_explored_at_other_arguments_shows_their_values():
    def cube(x):
        return x**3

    first, second = explore(cube, 1.0), explore(cube, 2.0)
    for p in (first, second):
        p.view.value = "step through"
    oracle = step_through(cube)(2.0)
    assert second.shown.result.source == oracle.diagram().source
    assert first.shown.result.source == step_through(cube)(1.0).diagram().source


def test_a_run_of_no_steps_is_drawn_whole_at_any_slider_position():
    """`lambda x: x` has no equation: the slider's 0 is no step to stop at."""

    def identity(x):
        return x

    p = explore(identity, 1.0)
    p.view.value = "step through"
    p.step.value = 0
    assert p.shown.code == "step_through(identity, rankdir='TB')(*args)"
    assert p.shown.result.source == step_through(identity)(1.0).diagram().source
