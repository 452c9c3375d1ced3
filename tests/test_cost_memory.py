"""The memory of grad, and what jax.checkpoint policies trade, on the MLP loss."""

import functools
import math
import re

import jax
import jax.numpy as jnp
import pytest

from jaxtour import mlp
from jaxtour.cost import grad_memory


@pytest.fixture(scope="module")
def report():
    params, (x, y) = mlp.init_params(jax.random.key(0)), mlp.example_batch(64)
    return grad_memory(mlp.loss)(params, x, y)


def test_nothing_saveable_keeps_less_and_computes_more(report):
    default, dots = report.policy("no checkpoint"), report.policy("dots_saveable")
    nothing = report.policy("nothing_saveable")
    assert nothing.residual_bytes < dots.residual_bytes < default.residual_bytes
    assert nothing.flops > default.flops
    # nothing saved: the forward's three matmuls run again, 2 * 64 * (784*512 +
    # 512*256 + 256*10) FLOPs more
    extra = 2 * 64 * (784 * 512 + 512 * 256 + 256 * 10)
    assert nothing.flops - default.flops == pytest.approx(extra, rel=0.01)


def test_residuals_are_the_arrays_the_backward_pass_reads(report):
    # default: among them the hidden activations f32[64, 512] and f32[64, 256]
    assert report.policy("no checkpoint").residual_bytes >= 4 * 64 * (512 + 256)
    assert report.policy("nothing_saveable").residuals == 0


def test_plot_and_text(report):
    text = str(report)
    assert text.startswith("Memory of grad(loss) on ")
    assert "nothing_saveable" in text
    plot = report.plot()
    assert plot.title == "memory vs FLOPs of grad(loss), 3 policies"
    assert plot.png().startswith(b"\x89PNG")


def test_backend_without_memory_analysis(monkeypatch):
    monkeypatch.setattr(jax.stages.Compiled, "memory_analysis", lambda self: None)
    result = grad_memory(lambda x: jnp.sum(jnp.sin(x)))(jnp.ones(3))
    assert all(p.temp_bytes is None for p in result.policies)
    assert result.notes() == [
        f"XLA gives no memory_analysis() on {jax.default_backend()}: temporary buffers "
        "are not shown; the residual bytes come from jax.vjp and hold on every backend."
    ]


def test_bad_input_messages():
    with pytest.raises(
        ValueError,
        match=r"^'keep_all' is not a policy in "
        r"jax.checkpoint_policies; use 'no checkpoint', one of: ",
    ):
        grad_memory(jnp.sum, policies=["keep_all"])
    with pytest.raises(
        TypeError,
        match=r"^grad_memory needs f to return a scalar, as "
        r"jax.grad does; sin returns ",
    ):
        grad_memory(jnp.sin)(jnp.ones(3))
    with pytest.raises(KeyError, match="'offload' was not measured; measured: "):
        grad_memory(jnp.sum, policies=["nothing_saveable"])(jnp.ones(3)).policy(
            "offload"
        )


def test_python_floats_are_measured_as_jax_grad_takes_them():
    # jax.grad(f)(3.0) works; the report is that of the same value as a float32 array
    def f(p):
        return jnp.sin(p["w"]) * p["w"] * 2.0

    floats = grad_memory(f)({"w": 3.0, "b": None})
    arrays = grad_memory(f)({"w": jnp.float32(3.0), "b": None})
    assert floats.policies == arrays.policies
    assert floats.policy("no checkpoint").residuals >= 1


def test_keyword_arguments_reach_f_undifferentiated_as_in_jax_grad():
    def f(w, x, *, scale):
        return jnp.sum(jnp.tanh(x @ w) ** 2) * scale

    by_keyword = grad_memory(f, policies=["no checkpoint"])(W, X, scale=3.0)
    bound = grad_memory(functools.partial(f, scale=3.0), policies=["no checkpoint"])
    assert by_keyword.policies == bound(W, X).policies


def test_has_aux_measures_the_loss_as_jax_grad_differentiates_it():
    def with_aux(w, x):
        return _mlp_loss(w, x), {"norm": jnp.linalg.norm(w)}

    aux = grad_memory(with_aux, has_aux=True, policies=["no checkpoint"])(W, X)
    alone = grad_memory(_mlp_loss, policies=["no checkpoint"])(W, X)
    [with_norm], [without] = aux.policies, alone.policies
    # the same residuals and compiled program (aux, not returned, is dropped by XLA);
    # the traced FLOPs count the norm's 2 x 64
    assert with_norm._replace(flops=0) == without._replace(flops=0)
    assert with_norm.flops == without.flops + 2 * W.size
    with pytest.raises(
        TypeError, match=r"; if it returns \(loss, aux\), pass has_aux=True\.$"
    ):
        grad_memory(with_aux)(W, X)


def test_a_leaf_jax_cannot_trace_is_held_as_before():
    # a function in the differentiated pytree (an activation) is held fixed
    def loss(p, x):
        return jnp.sum(p["act"](x @ p["w"]) ** 2)

    held = grad_memory(loss, policies=["no checkpoint"])({"act": jnp.tanh, "w": W}, X)
    plain = grad_memory(_mlp_loss_once, policies=["no checkpoint"])(W, X)
    assert held.policies == plain.policies


def test_has_aux_wants_a_pair_as_jax_grad_does():
    with pytest.raises(
        TypeError,
        match=r"^grad_memory with has_aux=True needs f to return a pair \(loss, aux\), "
        r"as jax.grad does; <lambda> returned ",
    ):
        grad_memory(lambda w: w * 2.0, has_aux=True)(jnp.ones(3))


def test_integer_arguments_alone_are_refused_as_jax_grad_refuses_them():
    with pytest.raises(
        TypeError,
        match=r"^grad_memory cannot differentiate with respect to argument 0 \(`n`\): it "
        r"holds no floating-point values, and gradients need floating-point inputs "
        r"\(as in jax.grad\)\. Pass 1.0 rather than 1",
    ):
        grad_memory(lambda n: jnp.sum(n * 2.0))(jnp.arange(3))


def test_a_shape_without_values_is_refused_as_jax_grad_refuses_it():
    shape = jax.ShapeDtypeStruct((3,), jnp.float32)
    with pytest.raises(TypeError, match="is not a valid JAX type"):
        jax.grad(lambda x: jnp.sum(jnp.sin(x)))(shape)  # the oracle: JAX refuses it too
    message = (
        "grad_memory cannot differentiate with respect to argument 0 (`x`): it holds a "
        "ShapeDtypeStruct (f32[3]), a shape without values, and jax.grad differentiates "
        "arrays. Pass an array of that shape: jnp.zeros(s.shape, s.dtype)."
    )
    with pytest.raises(TypeError, match=f"^{re.escape(message)}$"):
        grad_memory(lambda x: jnp.sum(jnp.sin(x)))(shape)


def test_compiled_flops_show_what_xla_did_with_the_recomputation(report):
    default, nothing = report.policy("no checkpoint"), report.policy("nothing_saveable")
    # the jaxpr asks for the forward twice; the compiled program never does less than one
    # forward and backward, and never more than the jaxpr asks (within 1 %: a GPU
    # splits products differently in the two programs, an H200 by 0.06 %)
    assert default.compiled_flops <= nothing.compiled_flops * 1.01
    assert nothing.compiled_flops <= nothing.flops * 1.01
    if jax.default_backend() == "cpu":
        # the CPU compiler merges the recomputed forward back into the first one for
        # this loss checkpointed whole (the module docstring says so): same FLOPs
        assert nothing.compiled_flops == pytest.approx(default.compiled_flops, rel=0.01)


def _mlp_loss(w, x):
    h = jnp.tanh(x @ w)
    return jnp.sum(jnp.tanh(h @ w) ** 2)


W, X = jnp.ones((8, 8)) / 8, jnp.ones((4, 8))


def _mlp_loss_once(w, x):
    return jnp.sum(jnp.tanh(x @ w) ** 2)


def test_a_policy_object_is_measured_and_named():
    from jax.ad_checkpoint import checkpoint_name

    def named(w, x):
        h = checkpoint_name(jnp.tanh(x @ w), "h")
        return jnp.sum(jnp.tanh(h @ w) ** 2)

    only_h = jax.checkpoint_policies.save_only_these_names("h")
    result = grad_memory(
        named, policies=[jax.checkpoint_policies.nothing_saveable, only_h]
    )(W, X)
    assert [p.name for p in result.policies] == [
        "nothing_saveable",
        "save_only_these_names(…)",
    ]
    assert result.policy("save_only_these_names(…)").residuals >= 1


def test_a_policy_factory_not_called_is_refused_in_words():
    with pytest.raises(
        ValueError,
        match=r"^jax.checkpoint_policies.save_only_these_names builds a policy from "
        r"names: call it first",
    ):
        grad_memory(_mlp_loss, policies=[jax.checkpoint_policies.save_only_these_names])
    with pytest.raises(ValueError, match=r"save_only_these_names builds a policy"):
        grad_memory(_mlp_loss, policies=["save_only_these_names"])
    with pytest.raises(TypeError, match=r"^grad_memory: a policy is a name"):
        grad_memory(_mlp_loss, policies=[3])


def test_argnums_differentiate_as_jax_grad_does():
    by_x = grad_memory(_mlp_loss, argnums=1, policies=["no checkpoint"])(W, X)
    both = grad_memory(_mlp_loss, argnums=(0, 1), policies=["no checkpoint"])(W, X)
    assert by_x.policies[0].flops <= both.policies[0].flops


def test_a_function_with_its_own_checkpoint_is_labelled_so():
    result = grad_memory(jax.checkpoint(_mlp_loss), policies=["no checkpoint"])(W, X)
    assert result.policies[0].name == "as written (its own jax.checkpoint)"
    assert result.policy("no checkpoint") is result.policies[0]


def test_a_warm_call_reuses_its_measurements():
    measure = grad_memory(_mlp_loss)
    first, again = measure(W, X), measure(W, X)
    assert all(a is b for a, b in zip(first.policies, again.policies, strict=True))


def _saved_bytes(f, *args):
    """Bytes of what JAX's own print_saved_residuals lists as saved, arguments and
    constants (arrays f closes over) left out: f32 arrays only."""
    import contextlib
    import io

    from jax.ad_checkpoint import print_saved_residuals

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        print_saved_residuals(f, *args)
    lines = out.getvalue().splitlines()
    kept = [
        ln
        for ln in lines
        if "from the argument" not in ln and "from a constant" not in ln
    ]
    assert kept and all(ln.startswith("f32[") for ln in kept), lines
    shapes = [re.match(r"f32\[([\d,]*)\]", ln)[1].split(",") for ln in kept]
    return sum(4 * math.prod(int(d) for d in dims if d) for dims in shapes)


def test_an_array_passed_by_keyword_or_closed_over_is_no_residual():
    def loss(w, x):
        return jnp.tanh(x @ w).sum()

    w, x = jnp.ones((256, 16)), jnp.ones((1024, 256))
    measure = grad_memory(loss, policies=["no checkpoint"])
    oracle = _saved_bytes(loss, w, x)  # x positional: "from the argument"
    assert oracle == _saved_bytes(functools.partial(loss, x=x), w)  # "from a constant"
    assert measure(w, x).policies[0].residual_bytes == oracle
    assert measure(w, x=x).policies[0].residual_bytes == oracle
    closed = grad_memory(lambda w: loss(w, x), policies=["no checkpoint"])(w)
    assert closed.policies[0].residual_bytes == oracle


def _cholesky_loss(s):
    return jnp.linalg.cholesky(s).sum()


def test_flops_the_rules_cannot_count_are_named_never_a_silent_zero():
    from jaxtour import _ir
    from jaxtour.cost import NOT_COUNTED

    s = jnp.eye(32) * 2.0
    jaxpr = jax.make_jaxpr(jax.grad(_cholesky_loss))(s).jaxpr
    unknown = {
        eqn.primitive.name
        for _, eqn in _ir.walk(jaxpr)
        if not _ir.sub_jaxprs(eqn) and _ir.eqn_count(eqn).flops is None
    }
    assert {"cholesky", "triangular_solve"} <= unknown  # what the rules leave out
    report = grad_memory(_cholesky_loss, policies=["no checkpoint"])(s)
    assert unknown <= set(report.policies[0].not_counted)
    (note,) = [n for n in report.notes() if n.startswith(NOT_COUNTED.capitalize())]
    assert "totals are lower bounds" in note and note in str(report)
    assert all(name in note for name in unknown)


def test_a_policy_built_by_a_class_jax_exports_is_named_as_its_factory(monkeypatch):
    """Some JAX releases export the class a factory builds (SaveOnlyTheseNames) beside
    the factory (save_only_these_names): the name is the factory's, as you called it."""
    from dataclasses import dataclass

    from jaxtour.cost import _policies

    @dataclass(frozen=True)
    class SaveOnlyTheseNames:
        names: frozenset

        def __call__(self, *args, **params):
            return False

    monkeypatch.setattr(
        jax.checkpoint_policies, "SaveOnlyTheseNames", SaveOnlyTheseNames, raising=False
    )
    built = SaveOnlyTheseNames(frozenset({"h"}))
    assert _policies._policy_name(built) == "save_only_these_names(…)"
