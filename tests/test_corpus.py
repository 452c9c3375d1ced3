"""The regression corpus: user programs in the styles of JAX's docs, each given to every
visualiser; no crash, the values JAX computes, and pictures no wider than 5,000 px.

Heavy programs (a 50-array training state) run in `benchmarks/corpus.py`; the sharded
ones run in a fresh interpreter with 8 simulated CPU devices.
"""

import re

import corpus_programs as corpus
import pytest
from devices import run_with_devices

LIGHT = [p for p in corpus.PROGRAMS if p.devices == 1 and not p.heavy]
SHARDED = [p.name for p in corpus.PROGRAMS if p.devices > 1 and not p.heavy]


@pytest.mark.slow  # every visualiser compiles each program
@pytest.mark.parametrize("program", LIGHT, ids=[p.name for p in LIGHT])
def test_every_visualiser_draws_the_program_with_jax_values(program):
    if program.skip:
        pytest.skip(program.skip)
    widths = corpus.check(program)
    assert {"draw_jaxpr", "draw_hlo_compiled", "draw_pipeline"} <= set(widths)
    too_wide = _too_wide(widths)
    assert not too_wide, f"wider than {corpus.MAX_WIDTH_PX} px: {too_wide}"


@pytest.mark.slow  # every visualiser compiles each program
def test_sharded_programs_draw_with_jax_values():
    result = run_with_devices(f"""
        import json, sys
        sys.path.insert(0, "tests")
        import corpus_programs as corpus
        print(json.dumps({{name: corpus.check(corpus.BY_NAME[name]) for name in {SHARDED!r}}}))
    """)
    assert set(result) == set(SHARDED)
    too_wide = {p: _too_wide(row) for p, row in result.items() if _too_wide(row)}
    assert not too_wide, f"wider than {corpus.MAX_WIDTH_PX} px: {too_wide}"


def _too_wide(widths: dict) -> dict:
    return {k: round(v) for k, v in widths.items() if v > corpus.MAX_WIDTH_PX}


@pytest.mark.slow  # every visualiser compiles each program
def test_a_train_step_on_a_state_of_50_arrays_fits_a_slide():
    # Issue 22: one box per leaf made this step's jaxpr 21,215 px wide.
    from jaxtour import viz

    program = corpus.BY_NAME["train_step_50"]
    args = program.make_args()
    drawers = (
        viz.draw_jaxpr(program.fn),
        viz.draw_hlo(program.fn, stage="stablehlo"),
        viz.draw_hlo(program.fn),
    )
    for draw in drawers:
        diagram = draw(*args)
        # the title names how it fits: leaves grouped, or (a jaxpr this long) the
        # equations nested by the code's own calls
        assert re.search(r"pytrees as one node each|nested by your code", diagram.title)
        # nested by the code's calls, a picture opens as many calls as fit 2/5 of the
        # drawer's budget (60 of max_eqns' or max_ops' 150): named boxes, at most a
        # slide's 60; with its leaves grouped instead, it stays under 40 nodes
        most = 60 if "nested by your code" in diagram.title else 39
        assert diagram.counts[0] <= most, diagram.title
        assert corpus.svg_width_px(diagram.svg()) <= corpus.MAX_WIDTH_PX, diagram.title


def test_svg_width_reads_points_and_pixels():
    assert corpus.svg_width_px('<svg width="300pt" height="2pt">') == 400
    assert corpus.svg_width_px('<svg height="2" width="120px">') == 120
    with pytest.raises(ValueError, match="no width"):
        corpus.svg_width_px("<svg>")
