"""explain_retraces' own jits, one per set of held leaves: kept as jax.jit keeps its
traces, and where one is let go, the retrace it causes is said to be the kit's."""

import equinox as eqx
import jax.numpy as jnp
import pytest

from jaxtour.tracing import _jits, explain_retraces


def _calls(modes: list[str]):
    """A function that notes each trace, and the calls: each mode held in turn (a
    string inside an argument, held fixed as eqx.filter_jit holds it), then the
    first again."""
    traced: list = []

    def f(x, config):
        traced.append(1)
        return x * len(config["mode"])

    return f, traced, [(jnp.ones(3), {"mode": m}) for m in [*modes, modes[0]]]


def _past_the_limit(sets: int) -> tuple:
    """`explain_retraces` of `_calls`' function, called with `sets` held sets and the
    first again, which retraced (its jit let go); and the cause it gave."""
    f, traced, calls = _calls([f"mode {i}" for i in range(sets)])
    retraced = explain_retraces(f)
    for args in calls:
        retraced(*args)
    assert retraced.traces == len(traced) == sets + 1
    (cause,) = retraced.calls[-1].causes
    assert (retraced.calls[-1].event, cause.kind) == ("retrace", "cache")
    return retraced, cause


@pytest.mark.slow  # 140 small programs traced and compiled
def test_held_leaves_seen_70_sets_ago_find_their_jit_as_in_eqx_filter_jit():
    """Issue: past 64 held sets the kit let the first one's jit go, so the 71st call
    traced again, and its cause blamed a cleared cache. Oracle: eqx.filter_jit."""
    modes = [f"mode {i}" for i in range(70)]
    f, traced, calls = _calls(modes)
    oracle = eqx.filter_jit(f)
    for args in calls:
        oracle(*args)
    assert len(traced) == 70
    f, traced, calls = _calls(modes)
    retraced = explain_retraces(f)
    for args in calls:
        retraced(*args)
    assert retraced.traces == len(traced) == 70
    assert retraced.calls[-1].event == "cache hit"
    assert retraced.calls[-1].compared_with == 1


@pytest.mark.slow  # 67 small programs traced and compiled
def test_a_jit_the_kit_let_go_is_said_to_be_so_not_a_cleared_cache(monkeypatch):
    """Past the kit's own bound (3 here), the retrace is the kit's doing (its jit
    let go, and the function it jitted with it: 66 held sets), and says so; a cache
    the user cleared is still said to be that."""
    monkeypatch.setattr(_jits, "_MOST", 3)
    retraced, cause = _past_the_limit(66)
    assert cause.words == (
        "the same signature as an earlier call, yet jit traced again: "
        "explain_retraces keeps one jit per set of static arguments and held "
        "leaves, at most 3, and had let this one's go to make room (64 let go so "
        "far); jax.jit alone might not have traced again"
    )
    retraced.clear_cache()
    retraced(jnp.ones(3), {"mode": "mode 0"})
    assert ".clear_cache()" in retraced.calls[-1].causes[0].words


@pytest.mark.slow  # 67 small programs traced and compiled
def test_the_jits_let_go_are_remembered_within_a_bound_past_it_said_maybe(
    monkeypatch,
):
    """Issue: each jit let go left its key's hash behind for good: one integer more
    per held set, without bound. Past the bound (4 here) the oldest is forgotten,
    and its retrace still says the kit may have let it go, not only a clear_cache."""
    monkeypatch.setattr(_jits, "_MOST", 1)
    monkeypatch.setattr(_jits, "_REMEMBERED", 4)
    retraced, cause = _past_the_limit(66)
    assert len(retraced._jits._dropped) == 4
    assert cause.words.endswith(
        "; or explain_retraces let this one's jit go to make room (it keeps at most "
        "1, and has let 66 go, too many to remember which)"
    )
