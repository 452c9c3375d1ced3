"""Every lens on models as researchers write them (tests/corpus_models.py): no crash,
the values JAX or the framework computes, pictures no wider than 5,000 px, and the
user's model left as it was."""

import corpus_models as corpus
import jax
import numpy as np
import pytest

from jaxtour import autodiff, cost, tracing, viz

FAKE_PEAKS = cost.Peaks("cpu:cpu", 50e9, 10e9)
NAMES = [m.name for m in corpus.MODELS]


@pytest.fixture(scope="module", params=NAMES)
def model(request):
    m = corpus.BY_NAME[request.param]
    return m, m.make_args()


def _opts(m):
    return {"static_argnames": m.static_argnames} if m.static_argnames else {}


def _snapshot(args):
    return [
        np.asarray(jax.random.key_data(x)) if _is_key(x) else np.asarray(x)
        for x in jax.tree.leaves(args)
    ]


def _is_key(x):
    return jax.numpy.issubdtype(getattr(x, "dtype", float), jax.dtypes.prng_key)


def _fits(diagram):
    width = corpus.svg_width_px(diagram.svg())
    assert width <= corpus.MAX_WIDTH_PX, (diagram.title, round(width))


def test_forward_lenses_draw_the_model(model):
    m, args = model
    before = _snapshot(args)
    _fits(viz.draw_jaxpr(m.fn, **_opts(m))(*args, **m.kwargs))
    _fits(viz.draw_hlo(m.fn, **_opts(m))(*args, **m.kwargs))
    assert viz.compare_stages(m.fn, **_opts(m))(*args, **m.kwargs).headline
    assert viz.draw_pipeline(m.fn, **_opts(m))(*args, **m.kwargs).title
    after = _snapshot(args)
    assert all(np.array_equal(a, b) for a, b in zip(before, after, strict=True))


@pytest.mark.slow  # compiles each model's gradient programs (bf16 block: ~10 s)
def test_gradient_lenses_give_the_frameworks_gradient(model):
    m, args = model
    graph = autodiff.grad_graph(m.loss, m.argnums)(*args)
    corpus.close(graph.values_of("gradient"), m.grad_ref(*args), m.rtol)
    # values=False: only the title is asserted here, and computing the numbers compiles
    # the model's vjp once more (bf16 block: 9 s). The numbers' path (both halves of
    # jax.vjp evaluated) is grad_graph's above; vjp values against jax.vjp are
    # test_corpus.py's and test_autodiff_jvp_vjp.py's.
    assert autodiff.draw_vjp(m.loss, values=False)(*args).title.startswith("vjp of ")
    _fits(autodiff.draw_grad(m.loss, m.argnums)(*args))


@pytest.mark.slow  # runs each model under every tracing lens
def test_tracing_lenses_run_the_model(model):
    m, _ = model
    args, fresh = m.make_args(), m.make_args()  # eager NNX calls advance their Rngs
    steps = tracing.step_through(m.fn, **_opts(m))(*args, **m.kwargs)
    want = m.fn_ref(*fresh, **m.kwargs)  # the framework's jit: one compilation
    np.testing.assert_allclose(
        np.asarray(steps.outputs, np.float32), np.asarray(want, np.float32), rtol=m.rtol
    )
    assert "<svg" in steps.diagram().svg()
    # a causal mask's -inf is an Inf by design: look for NaNs only
    nans = tracing.find_nans(m.fn, include_inf=False, **_opts(m))
    assert not nans(*args, **m.kwargs).found


def test_cost_lenses_count_the_model(model):
    m, args = model
    table = cost.cost_table(m.fn, **_opts(m))(*args, **m.kwargs)
    assert table.flops > 0
    traffic = cost.fusion_traffic(m.fn, **_opts(m))(*args, **m.kwargs)
    assert traffic.fused_bytes > 0 and traffic.unfused_bytes > 0
    roof = cost.draw_roofline(m.fn, peaks=FAKE_PEAKS, **_opts(m))(*args, **m.kwargs)
    assert roof._repr_png_().startswith(b"\x89PNG")
    # the two policies compared (the default third, dots_saveable, compiles the
    # gradient once more: bf16 block 3 s; test_cost_memory.py tests the defaults)
    both = ("no checkpoint", "nothing_saveable")
    memory = cost.grad_memory(m.loss, policies=both, argnums=m.argnums)(*args)
    nothing = memory.policy("nothing_saveable")
    assert nothing.residual_bytes <= memory.policy("no checkpoint").residual_bytes
