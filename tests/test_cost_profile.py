"""`profile`: measured time per compiled op, mapped back to source lines.

Timing tests assert mechanisms with wide margins (a matmul of 2^34 FLOPs, ~0.2 s on a
laptop core, 2^40 on a GPU, against an add of 2^22 elements; 1024^3 against 32^3
multiply-adds): a busy laptop can hold any op back for tens of milliseconds, so the heavy
op must take longer.
The timeline arithmetic is tested on made-up events, against sums done by hand; the
wall's itemisation on a made-up `Profile`. The wall and dispatch figures are tested as
mechanisms: an independent unprofiled timing of a 2^34 FLOP program, made just before
and after its profile, a profiler made slow on purpose, a no-op that pays for 1000
argument leaves against one that pays for 1, timed between two of the other's.
"""

import dataclasses
import inspect
import math
import statistics
import time

import jax
import jax.numpy as jnp
import pytest

from jaxtour import Diagram, _ir
from jaxtour.cost import OpTime, Profile, _timeline, profile
from jaxtour.cost._profile import op_rows
from jaxtour.cost._profile_view import HEAT
from jaxtour.cost._timeline import OpEvent, Timeline, exclusive, op_events, per_call
from jaxtour.cost._walls import Walls, no_op_twin


def heavy_and_light(a, b):
    product = a @ b  # the matmul: 2 * N^3 FLOPs
    return product + 1.0  # elementwise: N^2 adds


def two_matmuls(big, small):
    large = big @ big
    little = small @ small
    return large.sum() + little.sum()


def _line_of(fn, text):
    lines, first = inspect.getsourcelines(fn)
    offset = next(i for i, line in enumerate(lines) if text in line)
    return f"test_cost_profile.py:{first + offset}"


def heavy_size() -> int:
    """The heavy matmul's size: a call of milliseconds, far beyond its dispatch (a GPU
    does 2048^3 in tens of microseconds, less than its dispatch and sync)."""
    return 2048 if jax.default_backend() == "cpu" else 8192


@pytest.fixture(scope="module")
def heavy_timed():
    """The heavy program's `Profile`, and unprofiled timings of the same call made just
    before and just after it: a machine whose speed drifts weighs on both alike."""
    n = heavy_size()
    a = jnp.ones((n, n))
    compiled = jax.jit(heavy_and_light).lower(a, a).compile()

    def timed():
        start = time.perf_counter()
        jax.block_until_ready(compiled(a, a))
        return time.perf_counter() - start

    before = [timed() for _ in range(2)]
    p = profile(heavy_and_light)(a, a)
    return p, before + [timed() for _ in range(2)]


@pytest.fixture(scope="module")
def heavy(heavy_timed):
    return heavy_timed[0]


def test_the_matmul_ranks_first_with_most_of_the_time_and_names_its_line(heavy):
    top = heavy.rows[0]
    assert "dot_general" in top.primitives
    assert top.share >= 0.5, str(heavy)
    assert _line_of(heavy_and_light, "a @ b") in top.lines
    assert [r.seconds for r in heavy.rows] == sorted(
        (r.seconds for r in heavy.rows), reverse=True
    )
    assert sum(r.share for r in heavy.rows) == pytest.approx(1.0)
    assert top.flops == 2 * heavy_size() ** 3
    assert top.flops_per_s == top.flops / top.seconds


def test_summed_op_time_is_the_calls_time_within_a_wide_margin(heavy):
    # the ops account for a 2^34 FLOP program's time; dispatch is microseconds (tens of
    # milliseconds on a busy machine)
    assert 0.3 < heavy.op_seconds / heavy.wall_seconds < 3, str(heavy)
    assert heavy.calls == 5 and 0 <= heavy.overlap_seconds <= heavy.op_seconds
    assert 0 <= heavy.between_ops_seconds < heavy.wall_seconds


def test_the_wall_agrees_with_an_unprofiled_timing_of_the_same_call(heavy_timed):
    heavy, walls = heavy_timed
    # a 2^34 FLOP call: the same work either way, timed around the profile (not in a
    # later test) so that a load or a clock speed that drifts weighs on both
    assert 1 / 3 < heavy.wall_seconds / statistics.median(walls) < 3, str(heavy)
    # dispatch does none of that work
    assert heavy.dispatch_seconds < heavy.wall_seconds / 10, str(heavy)


def test_the_wall_is_timed_with_no_profiler_running(monkeypatch):
    record = _timeline.record
    slow = 0.2  # a profiler made slow on purpose: 200 ms more per recorded call

    def slow_record(run, calls):
        return record(lambda: (time.sleep(slow), run())[1], calls)

    monkeypatch.setattr(_timeline, "record", slow_record)
    p = profile(jnp.sin)(jnp.ones(8))
    assert p.profiled_wall_seconds >= slow and p.wall_seconds < slow / 2, str(p)
    assert p.profiler_seconds == p.profiled_wall_seconds - p.wall_seconds


def test_dispatch_pays_for_the_same_arguments():
    def first(tree):
        return tree[0] * 2

    few, many = [jnp.ones(2)], [jnp.ones(2) for _ in range(1000)]
    timed = profile(first)
    # one leaf timed before and after 1000: a machine that slows down meanwhile slows
    # one of the two, and the faster is kept
    few_s = timed(few).dispatch_seconds
    many_s = timed(many).dispatch_seconds
    few_s = min(few_s, timed(few).dispatch_seconds)
    # flattening and checking a pytree of 1000 leaves: 10-30x one leaf (a ~15-35 µs
    # call), on 2 cores under load too
    assert many_s > 4 * few_s, (many_s, few_s)


def test_the_no_op_twin_takes_the_buffers_the_program_reads_and_does_no_work():
    def f(a, unused, c):
        return a @ c

    args = (jnp.ones((4, 4)), jnp.ones(3), jnp.ones((4, 4)))
    used = _ir.used_inputs(jax.make_jaxpr(f)(*args))
    twin = no_op_twin(args, {}, used)
    module = _ir.parse_hlo(twin.as_text())
    entry = module.computations[module.entry].ops
    assert sum(op.opcode == "parameter" for op in entry) == 2
    assert not any(op.opcode in ("dot", "fusion") for _, op in module.walk())
    assert float(twin(*args)) == 0.0


def two_layer_loss(p, x):
    h = jax.nn.relu(x @ p["w1"] + p["b1"])
    return -jnp.mean(jax.nn.log_softmax(h @ p["w2"] + p["b2"]))


def test_rows_are_named_by_what_their_ops_hold():
    p = {"w1": jnp.ones((32, 16)), "b1": jnp.ones(16), "w2": jnp.ones((16, 4))}
    p["b2"] = jnp.ones(4)
    grad = jax.jit(jax.grad(two_layer_loss)).lower(p, jnp.ones((8, 32)))
    module = _ir.parse_hlo(grad.compile().as_text())
    entry = module.computations[module.entry].ops
    rows = op_rows(module, {op.name: 1e-6 for op in entry}, len(entry) * 1e-6)
    for row in rows:
        held = _ir.held_ops(module, next(o for o in entry if o.name == row.op))
        holds_dot = any(op.opcode == "dot" for op in held)
        # XLA tags backward dots `transpose`; they are dots all the same
        assert ("dot_general" in row.primitives) == holds_dot, row
    assert sum("dot_general" in r.primitives for r in rows) >= 4  # 2 forward, 2+ back


def test_a_pure_elementwise_program_lists_no_dot():
    p = profile(lambda x: jnp.cos(jnp.sin(x) * 2.0 + 1.0), calls=1)(jnp.ones(256))
    assert p.rows and not any("dot_general" in r.primitives for r in p.rows)
    assert {"sin", "cos"} <= {q for r in p.rows for q in r.primitives}


def test_two_matmuls_of_very_different_sizes_rank_in_order():
    # 1024^3 against 32^3 multiply-adds: 32768 times the work, an eighth of the heavy
    # matmul's on a CPU
    p = profile(two_matmuls, calls=3)(jnp.ones((1024, 1024)), jnp.ones((32, 32)))
    rank = {line: i for i, r in enumerate(p.rows) for line in r.lines}
    big, small = (_line_of(two_matmuls, f"{x} @ {x}") for x in ("big", "small"))
    assert rank[big] < rank[small], str(p)


def test_draw_colours_the_slowest_op_deepest(heavy):
    d = heavy.draw()
    assert isinstance(d, Diagram) and d.counts[0] == len(heavy.rows)
    assert d.title.startswith(
        f"Where the time went: heavy_and_light on {jax.default_backend()}"
    )
    assert f'fillcolor="{HEAT[-1]}"' in d.source or f"fillcolor={HEAT[-1]}" in d.source
    assert d.svg().startswith("<?xml")


def test_text_and_html_views_list_every_op(heavy):
    text, html = str(heavy), heavy._repr_html_()
    assert all(r.op in text and r.op in html for r in heavy.rows)
    assert repr(heavy).startswith(
        f"Profile('heavy_and_light' on {jax.default_backend()}: "
    )


def test_a_loop_body_counts_to_its_loop():
    def loop(x):
        return jax.lax.fori_loop(0, 20, lambda i, v: jnp.sin(v) @ v, x)

    p = profile(loop)(jnp.ones((128, 128)))
    entry = {op.name for op in p.module.computations[p.module.entry].ops}
    assert {r.op for r in p.rows} <= entry
    assert p.rows[0].kind == "while" and "dot_general" in p.rows[0].primitives


def test_static_arguments_are_held_as_jax_jit_holds_them():
    p = profile(lambda x, n: jnp.tanh(x) * n, static_argnums=1)(jnp.ones(8), 3)
    assert p.rows and p.name == "<lambda>"


@pytest.mark.parametrize("calls", [0, -1, 2.5, True])
def test_calls_must_be_a_positive_int(calls):
    with pytest.raises(ValueError, match=r"profile: `calls` must be a positive int"):
        profile(jnp.sin, calls=calls)


def test_profile_needs_a_function():
    with pytest.raises(TypeError, match="profile needs a function to trace"):
        profile(3)


# --- the trace arithmetic, on made-up events ----------------------------------------------


def _event(op, run, start, duration, lane=(1, 1)):
    return OpEvent(op, run, lane, start, duration, False)


def test_a_loop_event_keeps_only_its_own_time():
    events = [
        _event("while", "r", 0, 100),
        _event("body", "r", 10, 30),
        _event("body", "r", 50, 30),
        _event("after", "r", 100, 5),
    ]
    own = {(e.op, e.start): t for e, t in exclusive(events)}
    assert own == {
        ("while", 0): 40,
        ("body", 10): 30,
        ("body", 50): 30,
        ("after", 100): 5,
    }


def test_per_call_takes_medians_and_sees_overlap_across_lanes():
    events = [
        e
        for run, scale in (("1", 1), ("2", 2), ("3", 3))
        for e in (
            _event("a", run, 0, 10 * scale),
            _event("b", run, 0, 10 * scale, lane=(1, 2)),  # runs beside a
        )
    ]
    line = per_call(events)
    assert line.seconds == {"a": pytest.approx(20e-6), "b": pytest.approx(20e-6)}
    assert line.op_seconds == pytest.approx(40e-6)
    assert line.overlap_seconds == pytest.approx(20e-6)
    assert line.calls == 3 and line.between_seconds == 0


def test_time_between_ops_is_each_calls_idle_time_inside_its_span():
    events = [
        # call 1: a gap of 5 µs between a and b
        _event("a", "1", 0, 10),
        _event("b", "1", 15, 5),
        # call 2: c on another lane fills b's gap: no idle time
        _event("a", "2", 100, 10),
        _event("c", "2", 108, 6, lane=(1, 2)),
        _event("b", "2", 114, 6),
        # call 3: gaps of 4 and 6 µs; a while's body inside it is not a gap
        _event("a", "3", 200, 10),
        _event("while", "3", 214, 20),
        _event("body", "3", 216, 4),
        _event("b", "3", 240, 5),
    ]
    assert per_call(events).between_seconds == pytest.approx(5e-6)  # median of 5, 0, 10


def test_op_events_keep_the_module_and_prefer_device_lanes():
    raw = [
        {
            "ph": "M",
            "pid": 7,
            "name": "process_name",
            "args": {"name": "/device:GPU:0"},
        },
        {
            "ph": "X",
            "pid": 1,
            "tid": 1,
            "ts": 0,
            "dur": 5,
            "name": "launch",
            "args": {"hlo_module": "jit_f", "hlo_op": "fusion", "run_id": "1"},
        },
        {
            "ph": "X",
            "pid": 7,
            "tid": 2,
            "ts": 1,
            "dur": 3,
            "name": "fusion",
            "args": {"hlo_module": "jit_f", "hlo_op": "fusion", "run_id": "1"},
        },
        {
            "ph": "X",
            "pid": 7,
            "tid": 2,
            "ts": 9,
            "dur": 3,
            "name": "other",
            "args": {"hlo_module": "jit_g", "hlo_op": "dot", "run_id": "1"},
        },
    ]
    [event] = op_events(raw, "jit_f")
    assert (event.op, event.device, event.duration) == ("fusion", True, 3.0)


def _made_up(wall, profiled, dispatch, ops, between):
    row = OpTime("add", ops, 1.0, ("f.py:1",), ("add",), "add", 8.0, 96.0)
    timeline = Timeline({"add": ops}, ops, 0.0, between, 5)
    return Profile("f", "cpu", [row], timeline, Walls(wall, profiled, dispatch), None)


def test_the_wall_is_itemised_in_measured_parts_and_the_rest_is_unexplained():
    p = _made_up(wall=100e-6, profiled=180e-6, dispatch=12e-6, ops=50e-6, between=8e-6)
    assert p.parts() == {"ops": 50e-6, "between ops": 8e-6, "dispatch": 12e-6}
    assert p.unexplained_seconds == pytest.approx(30e-6)
    assert p.profiler_seconds == pytest.approx(80e-6)
    assert sum(p.parts().values()) + p.unexplained_seconds == pytest.approx(100e-6)
    notes = " ".join(p.notes())
    assert "unexplained 30 µs (0.30x)" in notes and "dispatch 12 µs (0.12x)" in notes
    assert "the profiler's own cost is 80 µs per call" in notes
    assert "dispatch from Python" not in notes and "is in no op" not in notes


def test_parts_timed_under_the_profiler_may_exceed_the_wall_and_say_so():
    p = _made_up(wall=100e-6, profiled=90e-6, dispatch=10e-6, ops=95e-6, between=5e-6)
    assert p.unexplained_seconds == pytest.approx(-10e-6)
    notes = " ".join(p.notes())
    assert "the parts sum to 10 µs more than the wall" in notes
    assert "the profiler's own cost is -10 µs per call (below zero" in notes


def test_notes_say_when_a_program_is_too_short_to_time():
    p = _made_up(wall=20e-6, profiled=30e-6, dispatch=5e-6, ops=5e-6, between=0.0)
    assert "too short to time op by op" in " ".join(p.notes())


def test_draw_keeps_the_slowest_ops_and_folds_the_rest(heavy):
    assert len(heavy.rows) >= 2
    d = heavy.draw(max_ops=1)
    assert d.counts[0] == 2 and f"{len(heavy.rows) - 1} faster ops" in d.source
    with pytest.raises(
        ValueError, match=r"Profile\.draw: `max_ops` must be a positive"
    ):
        heavy.draw(max_ops=0)


def test_a_model_with_leaves_jax_cannot_trace_is_profiled_as_jit_would_hold_them():
    model = {"w": jnp.ones((64, 64)), "activation": jnp.tanh, "name": "mlp"}

    def forward(model, x):
        return model["activation"](x @ model["w"]).sum()

    p = profile(forward)(model, jnp.ones((8, 64)))
    assert any("dot_general" in r.primitives for r in p.rows)


def test_static_argnames_are_held_as_jax_jit_holds_them():
    p = profile(lambda x, *, n: jnp.tanh(x) * n, static_argnames="n")(jnp.ones(8), n=3)
    assert p.rows


def test_the_roofline_places_each_op_at_its_measured_rate():
    from jaxtour.cost import Peaks, draw_roofline

    peaks = Peaks("cpu:cpu", 1e15, 1e15)  # a roof no CPU op reaches
    a = jnp.ones((512, 512))
    ceiling = draw_roofline(heavy_and_light, peaks=peaks)(a, a)
    roof = draw_roofline(heavy_and_light, peaks=peaks, measured=True)(a, a)
    assert roof.measured and not ceiling.measured
    assert roof.title.endswith("; ops at their measured rate")
    labels = [t.get_text() for t in roof.figure.legends[0].get_texts()]
    assert any(
        label.startswith("compiled ops at their measured rate") for label in labels
    )
    flops = {r.name: r.flops for r in roof.table.ops}
    for point in roof.points:  # each rate is the op's FLOPs over a measured time
        took = flops[point.name] / point.flops_per_s
        assert 0 < took < 60 and point.flops_per_s < peaks.attainable(point.intensity)
    assert {p.name for p in roof.points} <= {p.name for p in ceiling.points}


@pytest.mark.slow  # compiles for 8 devices
def test_dispatch_is_timed_with_the_arguments_shardings():
    from devices import run_with_devices

    result = run_with_devices("""
        import json
        import jax, jax.numpy as jnp
        from jaxtour.cost import profile
        from jaxtour.cost._walls import no_op_twin
        mesh = jax.make_mesh((8,), ("X",))
        x = jax.device_put(jnp.ones((64, 16)), jax.NamedSharding(mesh, jax.P("X")))
        twin = no_op_twin((x,), {}, [True])
        p = profile(lambda x: jnp.tanh(x) * 2.0)(x)
        print(json.dumps({
            "same": twin.input_shardings[0][0] == x.sharding,
            "dispatch": p.dispatch_seconds, "wall": p.wall_seconds, "rows": len(p.rows),
        }))
    """)
    assert result["same"] and result["rows"] >= 1
    assert result["dispatch"] > 0 and result["wall"] > 0


def _dots(module):
    return sum(op.opcode == "dot" for _, op in module.walk())


def _result_types(module):
    return sorted(op.type for op in module.computations[module.entry].ops)


def test_a_weak_typed_argument_compiles_apart_as_in_jax_jit():
    def scale(x, s):
        return x * s

    x, weak = jnp.ones((256, 256), jnp.bfloat16), jnp.asarray(2.0)
    p = profile(scale, calls=1)
    p(x, jnp.float32(2.0))  # a strong f32 scalar promotes x to f32
    oracle = _ir.parse_hlo(jax.jit(scale).lower(x, weak).compile().as_text())
    assert _result_types(p(x, weak).module) == _result_types(oracle)  # stays bf16


def test_a_static_argument_is_keyed_by_equality_not_by_its_repr():
    @dataclasses.dataclass(frozen=True)
    class Depth:
        name: str
        layers: int = dataclasses.field(repr=False)  # two configs print alike

    def stack(x, cfg):
        for _ in range(cfg.layers):
            x = jnp.tanh(x @ x)
        return x

    x = jnp.ones((32, 32))
    held = profile(stack, calls=1, static_argnums=1)
    held(x, Depth("net", 1))
    deep = jax.jit(stack, static_argnums=1).lower(x, Depth("net", 3)).compile()
    assert _dots(held(x, Depth("net", 3)).module) == _dots(
        _ir.parse_hlo(deep.as_text())
    )


def _tanh_power(x, n):
    step = lambda s: (s[0] + 1, jnp.tanh(s[1] @ s[1]))
    return jax.lax.while_loop(lambda s: s[0] < n, step, (0, x))[1]


def test_a_loop_of_unknown_trip_count_gets_no_rate_and_says_why():
    x, n = jnp.ones((64, 64)) * 1e-3, 50
    p = profile(_tanh_power, calls=1)(x, n)  # n traced: the trips are n's value
    (loop,) = [r for r in p.rows if r.kind == "while"]
    assert loop.per_iteration and loop.flops_per_s is None
    assert loop.flops == 2 * 64**3 + 2  # one iteration: the matmul, the add, the test
    assert any(
        note.startswith(f"{loop.op}: a loop whose trip count") for note in p.notes()
    )
    assert "- (trips unknown)" in str(p)
    # n static: the trip count is known, every iteration counted (by hand), a rate given
    held = profile(_tanh_power, calls=1, static_argnums=1)(x, n)
    (loop,) = [r for r in held.rows if r.kind == "while"]
    assert loop.flops == n * (2 * 64**3 + 1) + (n + 1) and not loop.per_iteration
    assert loop.flops_per_s == loop.flops / loop.seconds


def test_a_conds_rate_is_an_upper_bound_and_says_so():
    def square_or_cube(p, a):
        return jax.lax.cond(p > 0, lambda a: a @ a, lambda a: a @ a @ a, a)

    p = profile(square_or_cube, calls=1)(jnp.float32(1.0), jnp.ones((64, 64)))
    (cond,) = [r for r in p.rows if r.upper_bound]
    assert cond.kind == "conditional" and cond.flops == 2 * 2 * 64**3  # the cube's
    assert any(note.startswith(f"{cond.op}: a cond;") for note in p.notes())
    assert "an upper bound of what ran" in str(p) and "≤ " in str(p)


def _unnamed_calls(gap_inside, ops_of=lambda call: ("a", "b")):
    """Three calls of ops a and b as a GPU's device lane records them: no run id, each
    call's ops `gap_inside` µs apart, calls 100 µs apart."""
    events, start = [], 0.0
    for call in range(3):
        for op in ops_of(call):
            events.append(_event(op, "", start, 10 * (call + 1)))
            start += 10 * (call + 1) + gap_inside
        start += 100
    return events


def test_calls_a_trace_does_not_name_are_told_apart_by_their_idle_gaps():
    line = per_call(_unnamed_calls(2.0), calls=3)
    assert line.calls == 3
    assert line.seconds == {"a": pytest.approx(20e-6), "b": pytest.approx(20e-6)}
    assert line.between_seconds == pytest.approx(2e-6)
    # run ids, where a trace has them, are what tells calls apart
    assert per_call(_unnamed_calls(2.0)).calls == 1


def test_calls_that_cannot_be_told_apart_share_their_total_and_say_so():
    events = _unnamed_calls(2.0, ops_of=lambda call: ("a", "b") if call else ("a",))
    line = per_call(events, calls=3)
    assert line.calls == 3 and math.isnan(line.between_seconds)
    assert line.seconds == {
        "a": pytest.approx(60e-6 / 3),
        "b": pytest.approx(50e-6 / 3),
    }
    timeline = Timeline({"add": 1e-3}, 1e-3, 0.0, math.nan, 3)
    row = OpTime("add", 1e-3, 1.0, ("f.py:1",), ("add",), "add", 8.0, 96.0)
    p = Profile("f", "gpu", [row], timeline, Walls(2e-3, 2.1e-3, 1e-4), None)
    assert "between ops" not in p.parts() and "nan" not in str(p)
    assert "The time between ops is not measured: the trace does not say" in str(p)


def test_a_gpu_program_is_timed_without_cuda_graphs(monkeypatch):
    from jaxtour.cost import _profile

    class Lowered:
        def compile(self, compiler_options=None):
            return compiler_options

    monkeypatch.setattr(jax, "default_backend", lambda: "gpu")
    assert _profile.compile_to_time(Lowered()) == {"xla_gpu_enable_command_buffer": ""}
    monkeypatch.setattr(jax, "default_backend", lambda: "cpu")
    assert _profile.compile_to_time(Lowered()) is None


def test_a_cuda_graph_timed_as_one_row_is_named_in_the_notes():
    row = OpTime("command_buffer_1", 1e-3, 1.0, (), (), "", None, None)
    timeline = Timeline({"command_buffer_1": 1e-3}, 1e-3, 0.0, 0.0, 5)
    p = Profile("f", "gpu", [row], timeline, Walls(2e-3, 2.1e-3, 1e-4), None)
    assert "command_buffer_1: ops XLA ran as one CUDA graph" in str(p)


def test_a_real_trace_stripped_of_its_run_ids_is_cut_into_the_same_calls():
    """The GPU's case made on this machine: a recorded trace whose run ids are blanked
    must be cut back into the calls the run ids said (an oracle for the gap cutting)."""

    def f(x):
        return jnp.tanh(jnp.sin(x) @ x).sum()

    x = jnp.ones((256, 256))
    compiled = jax.jit(f).lower(x).compile()
    module = _ir.parse_hlo(compiled.as_text())

    def run():  # 0.1 s between calls: more than any pause inside one, even when busy
        time.sleep(0.1)
        return compiled(x)

    raw, _ = _timeline.record(run, 5)
    events = op_events(raw, module.name)
    named = per_call(events)
    assert named.calls == 5
    blank = [dataclasses.replace(e, run="") for e in events]
    cut = per_call(blank, calls=5)
    assert cut.calls == 5 and cut.seconds == named.seconds
    assert cut.between_seconds == named.between_seconds
